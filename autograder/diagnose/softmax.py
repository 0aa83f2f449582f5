"""Wrong ways to write softmax, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.diagnose import Mistake

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
    )
}


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
    return out
