"""Every known mistake of every step, by id (ids are unique across steps).

Each module of :mod:`autograder.diagnose` defines ``MISTAKES``; they are all
collected here.
"""

from __future__ import annotations

import importlib
import pkgutil

from autograder import diagnose
from autograder.diagnose import Mistake

MISTAKES: dict[str, Mistake] = {}
for _info in pkgutil.iter_modules(diagnose.__path__):
    if _info.name == "catalog":
        continue
    for _id, _mistake in getattr(importlib.import_module(f"{diagnose.__name__}.{_info.name}"), "MISTAKES", {}).items():
        if MISTAKES.get(_id, _mistake) != _mistake:
            raise ValueError(f"mistake id {_id!r} is defined twice with different texts")
        MISTAKES[_id] = _mistake
