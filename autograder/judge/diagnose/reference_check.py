"""Wrong ways to compare with PyTorch, and what they report.

The graders compute ``scaled_dot_product_attention`` themselves, through the
checks' trusted torch side (:mod:`autograder.judge.oracle`, probe ``oracle_sdpa``), on
the inputs they send: the difference ``compare_with_torch`` reports, while
``attention`` returns the grader's output, must be the one the grader knows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.answers import Answers

if TYPE_CHECKING:
    from autograder.judge.oracle import Oracle

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "sdpa_float_mask",
            "the mask reached scaled_dot_product_attention as numbers: a float mask is added to the "
            "scores (0 or 1) and blocks nothing; pass the bool mask, True = may attend",
        ),
        Mistake(
            "compare_mean_not_max",
            "the differences are averaged; compare_with_torch must return the largest absolute difference",
        ),
    )
}
KERNELS = ("flash", "efficient", "cudnn", "math", "overrideable")  # names a backend may contain
AGREE = 1e-5  # a correct float64 attention against float32 SDPA lands near 1e-7


def same_difference(reported: float, actual: float) -> bool:
    """Whether a reported ``max_abs_diff`` is the one the grader found (up to float32 rounding and kernel choice)."""
    return bool(abs(reported - actual) <= 1e-6 + 1e-3 * abs(actual))


def sdpa(oracle: Oracle, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None) -> np.ndarray:
    """PyTorch's attention output on ``Q, K, V`` (and the bool ``mask``), float32 SDPA as a float64 array."""
    return np.asarray(oracle.probe("oracle_sdpa", *_arrays(Q, K, V, mask)), dtype=float)


def kernel_used(oracle: Oracle, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None) -> str:
    """The SDPA kernel ("flash", "math", ...) PyTorch picks by itself for these inputs, observed on ``oracle``."""
    return str(oracle.probe("oracle_sdpa_kernel", *_arrays(Q, K, V, mask)))


def _arrays(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    return (*(np.asarray(a) for a in (Q, K, V)), None if mask is None else np.asarray(mask, dtype=bool))


def compare_variants(
    oracle: Oracle,
    output: np.ndarray,
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
) -> Answers:
    """What each mistake reports as ``max_abs_diff`` when the student's attention returned ``output``.

    ``output`` is handed to the sandbox (the probe ``compare_with_given_attention`` makes ``scaling.attention``
    return it), so the call's arguments end with it, and on the call's twin the attention's output is the twin's
    own.
    """
    args = (Q, K, V, mask, output)

    def compute(call: tuple, _kwargs: dict) -> dict[str, np.ndarray]:
        q, k, v, m, seen = call
        return _variants(oracle, seen, q, k, v, m)

    return Answers.of_call(args, {}, compute)


def _variants(
    oracle: Oracle, output: np.ndarray, Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None
) -> dict[str, np.ndarray]:
    output = np.asarray(output, dtype=float)
    gap = np.abs(output - sdpa(oracle, Q, K, V, mask))
    out = {"compare_mean_not_max": np.asarray(gap.mean())}
    if mask is not None and not np.asarray(mask, dtype=bool).all():
        float_mask = oracle.probe("oracle_sdpa", *_arrays(Q, K, V, mask), float_mask=True)
        out["sdpa_float_mask"] = np.asarray(np.max(np.abs(output - np.asarray(float_mask, dtype=float))))
    return out
