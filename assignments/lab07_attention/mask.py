"""Step 3, the causal mask (handout section `mask`).

A decoder may not look ahead: query ``i`` attends to keys ``j <= i``. When
``n_k > n_q`` (decoding against a cache of earlier tokens) the queries are the
*last* ``n_q`` positions, so the rule shifts by ``n_k - n_q``. The mask is
applied to the scores, before the softmax.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scaling import attention, project


def causal_mask(n_q: int, n_k: int | None = None) -> np.ndarray:
    """Which keys each query may attend to.

    Args:
        n_q: number of query tokens (the last ``n_q`` positions).
        n_k: number of key tokens; defaults to ``n_q``. Must be at least ``n_q``.

    Returns:
        A bool array ``[n_q, n_k]``, ``True`` where key ``j <= i + (n_k - n_q)``.

    Example:
        >>> causal_mask(2, 3)
        array([[ True,  True, False],
               [ True,  True,  True]])
    """
    raise NotImplementedError(
        "Lab 7 step 'mask', task causal_mask: not implemented yet (handout: handouts/lab07_attention.md#mask)"
    )


def apply_mask(scores: ArrayLike, mask: ArrayLike) -> np.ndarray:
    """Scores with ``-inf`` wherever ``mask`` is False.

    Args:
        scores: ``[..., n_q, n_k]``.
        mask: bool, broadcastable to ``scores``; ``True`` = may attend.

    Returns:
        An array shaped like the broadcast of ``scores`` and ``mask``.
    """
    raise NotImplementedError(
        "Lab 7 step 'mask', task apply_mask: not implemented yet (handout: handouts/lab07_attention.md#mask)"
    )


def prefix_change(
    X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike, x_next: ArrayLike, causal: bool = True
) -> float:
    """How much appending one token changes the outputs at the earlier positions.

    Run the head on ``X``, append ``x_next`` as a new last token, run it again
    and compare the outputs at the old positions.

    Args:
        X: tokens ``[n, d_model]``.
        W_Q: query projection ``[d_model, d_k]``.
        W_K: key projection ``[d_model, d_k]``.
        W_V: value projection ``[d_model, d_v]``.
        x_next: the appended token ``[d_model]``.
        causal: use the causal mask in both runs.

    Returns:
        The largest absolute change: 0 (to rounding) with the causal mask,
        clearly above 0 without it.
    """
    raise NotImplementedError(
        "Lab 7 step 'mask', task prefix_change: not implemented yet (handout: handouts/lab07_attention.md#mask)"
    )
