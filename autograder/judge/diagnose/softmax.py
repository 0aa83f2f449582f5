"""Wrong ways to write softmax, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.search import edit, generate

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "softmax_wrong_axis",
            "the softmax runs over the wrong axis (it must normalise each row, over the key axis given by `axis`)",
        ),
        Mistake(
            "softmax_no_max_shift",
            "the maximum is not subtracted before exp, so large scores overflow to inf and give NaN",
        ),
        Mistake(
            "softmax_whole_array", "the softmax normalises the whole array at once instead of each slice along `axis`"
        ),
        Mistake(
            "softmax_sum_not_kept",
            "the maximum and the sum are taken without keepdims=True, so they broadcast against the wrong axis of x; "
            "keep the reduced axis so that every slice is divided by its own sum",
        ),
    )
}


def model(x: np.ndarray, axis: int = -1, *, over: str = "given", shift: str = "max", keep: bool = True) -> np.ndarray:
    """The reference softmax with its choices as knobs (the defaults are the reference's).

    ``over``: the axis normalised (``"given"``, the ``"other"`` of the last two, the ``"first"``, or ``"all"``
    at once); ``shift``: what is subtracted before exp (``"max"`` or ``"none"``); ``keep``: whether the
    reductions keep their axis (without it they broadcast against the wrong one).
    """
    x = np.asarray(x, dtype=float)
    if over == "all":
        chosen = None
    elif over == "other":
        if x.ndim < 2:
            raise ValueError("no other axis")
        chosen = -2 if axis in (-1, x.ndim - 1) else -1
    elif over == "first":
        chosen = 0
    else:
        chosen = axis
    top = np.max(x, axis=chosen, keepdims=keep) if shift == "max" and x.size else 0.0
    e = np.exp(x - top)
    return e / np.sum(e, axis=chosen, keepdims=keep)


EDITS = (
    edit(MISTAKES["softmax_wrong_axis"], "over", "other", "other"),
    edit(MISTAKES["softmax_wrong_axis"], "over", "first", "first"),
    edit(MISTAKES["softmax_whole_array"], "over", "all"),
    edit(MISTAKES["softmax_no_max_shift"], "shift", "none"),
    edit(MISTAKES["softmax_sum_not_kept"], "keep", False),
)


def softmax_variants(ref, x: np.ndarray, axis: int = -1) -> dict[str, np.ndarray]:
    """What each softmax mistake returns for ``softmax(x, axis)``."""
    x = np.asarray(x, dtype=float)
    out: dict[str, np.ndarray] = {}
    if x.ndim >= 2:
        other = -2 if axis in (-1, x.ndim - 1) else -1
        out["softmax_wrong_axis"] = ref.softmax.softmax(x, axis=other)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        out["softmax_no_max_shift"] = e / e.sum(axis=axis, keepdims=True)
    out["softmax_whole_array"] = ref.softmax.softmax(x.reshape(-1)).reshape(x.shape) if x.size else x
    return {**out, **generate(model, EDITS, (x, axis), known=out)}
