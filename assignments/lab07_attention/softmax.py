"""Step 1, softmax: turn a row of scores into weights that sum to 1 (handout section `softmax`).

The chapter's weights come from a softmax over the key axis, the last axis of a
score matrix. Subtracting the row's maximum first changes nothing in exact
arithmetic (the factor cancels) but keeps ``exp`` from overflowing, and a score
of ``-inf`` (a masked key) becomes a weight of exactly 0.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` along ``axis``.

    Args:
        x: scores of any shape ``[..., n]``; entries may be ``-inf`` (weight 0).
        axis: the axis whose entries become weights that sum to 1 (default: the
            last one, the key axis of a score matrix).

    Returns:
        An array of the same shape as ``x`` whose slices along ``axis`` are
        non-negative and sum to 1.

    Example:
        >>> softmax(np.array([1.0, 0.0])).round(6)
        array([0.731059, 0.268941])
    """
    raise NotImplementedError(
        "Lab 7 step 'softmax', task softmax: not implemented yet (handout: handouts/lab07_attention.md#softmax)"
    )
