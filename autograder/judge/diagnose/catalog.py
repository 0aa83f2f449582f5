"""Every known mistake of every step, by id (ids are unique across steps), and the sentence of a diagnosis.

Each module of :mod:`autograder.judge.diagnose` defines ``MISTAKES`` (the hand-written
ones, listed in the handout) and may define ``EDITS`` (the small edits its
variant search composes, see :mod:`autograder.judge.diagnose.search`); both are
collected here. A composed diagnosis ``"a&b"`` is worded by :func:`describe`.
"""

from __future__ import annotations

import importlib
import pkgutil

from autograder.i18n import N_, _
from autograder.judge import diagnose
from autograder.judge.diagnose import Mistake, parts

# Two mistakes of one composed diagnosis, joined in the student's language.
BOTH = N_("{first}; and {second}")

INFRASTRUCTURE = ("catalog", "search", "relations", "context", "answers", "twin")  # modules without mistakes
MISTAKES: dict[str, Mistake] = {}
for _info in pkgutil.iter_modules(diagnose.__path__):
    if _info.ispkg or _info.name in INFRASTRUCTURE:  # the trace package names what it finds in its own words
        continue
    _module = importlib.import_module(f"{diagnose.__name__}.{_info.name}")
    _found = [*getattr(_module, "MISTAKES", {}).values(), *(e.mistake for e in getattr(_module, "EDITS", ()))]
    for _mistake in _found:
        if MISTAKES.get(_mistake.id, _mistake) != _mistake:
            raise ValueError(f"mistake id {_mistake.id!r} is defined twice with different texts")
        MISTAKES[_mistake.id] = _mistake


def describe(mistake: str) -> str:
    """The sentence that names ``mistake`` (one id or a composed ``"a&b"``), in the active language."""
    texts = [_(MISTAKES[part].text) for part in parts(mistake)]
    sentence = texts[0]
    for text in texts[1:]:
        sentence = _(BOTH).format(first=sentence, second=text)
    return sentence


def known(mistake: str) -> bool:
    """Whether every part of ``mistake`` is a mistake of the catalog."""
    return all(part in MISTAKES for part in parts(mistake))
