"""Known wrong answers, computed from the reference, and matching them.

For each step a module here lists its mistakes (:class:`Mistake`: an id and a
sentence for the student) and functions that compute, for given inputs, what
each mistake would return. A failed check compares the student's value with
those wrong answers; the first one that matches names the mistake.

One mistake may show in more than one way (code that attends before it
appends gives the first token zeros or its own value, depending on how it
treats an empty cache): its wrong answers are keyed ``"<id>+<signature>"``,
and every one of them names the mistake ``<id>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mistake:
    id: str
    text: str  # finishes "Likely mistake: ..."


def matches(got: np.ndarray, wrong: np.ndarray, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Whether ``got`` is (to float32 rounding) the wrong answer ``wrong``; NaN matches NaN."""
    got, wrong = np.asarray(got), np.asarray(wrong)
    if got.shape != wrong.shape or got.dtype.kind not in "biuf" or wrong.dtype.kind not in "biuf":
        return False
    return bool(np.allclose(got.astype(float), wrong.astype(float), rtol=rtol, atol=atol, equal_nan=True))


SIGNATURE = "+"  # separates a mistake's id from the name of one of its signatures


def mistake_id(key: str) -> str:
    """The mistake a wrong answer's key names: ``"attend_before_append+first_self"`` -> ``"attend_before_append"``."""
    return key.partition(SIGNATURE)[0]


AND = "&"  # joins the mistakes of a composed diagnosis: "missing_scale&softmax_query_axis"


def parts(mistake: str) -> tuple[str, ...]:
    """The single mistakes a (possibly composed) mistake id names: ``"a&b"`` -> ``("a", "b")``."""
    return tuple(mistake_id(part) for part in mistake.split(AND))


def identify(got: np.ndarray, wrong_answers: Mapping[str, np.ndarray]) -> str | None:
    """The id of the first mistake whose wrong answer equals ``got``, if any."""
    for key, wrong in wrong_answers.items():
        if matches(got, wrong):
            return mistake_id(key)
    return None
