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


def distance(got: np.ndarray, wrong: np.ndarray, rtol: float = 1e-4, atol: float = 1e-6) -> float:
    """How far ``got`` is from ``wrong`` in units of the tolerance (at most 1 when they match); inf if incomparable."""
    got, wrong = np.asarray(got), np.asarray(wrong)
    if got.shape != wrong.shape or got.dtype.kind not in "biuf" or wrong.dtype.kind not in "biuf":
        return np.inf
    got, wrong = got.astype(float), wrong.astype(float)
    if got.size == 0:
        return 0.0
    same_special = (np.isnan(got) & np.isnan(wrong)) | (np.isinf(got) & (got == wrong))
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.where(same_special, 0.0, np.abs(got - wrong) / (atol + rtol * np.abs(wrong)))
    gap = np.where(np.isnan(gap), np.inf, gap)
    return float(np.max(gap))


def identify(got: np.ndarray, wrong_answers: Mapping[str, np.ndarray]) -> str | None:
    """The mistake whose wrong answer equals ``got``: the fewest composed edits, then the closest, then the first.

    Returns the mistake's id (a composed one, ``"a&b"``, for generated variants), its signature dropped.
    """
    best: tuple[int, float, int] | None = None
    named = None
    for order, (key, wrong) in enumerate(wrong_answers.items()):
        gap = distance(got, wrong)
        if gap <= 1.0:
            rank = (key.count(AND), gap, order)
            if best is None or rank < best:
                best, named = rank, key
    return None if named is None else AND.join(parts(named))
