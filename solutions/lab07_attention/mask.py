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
    # BEGIN SOLUTION
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    i = np.arange(n_q)[:, None]  # (n_q, 1) query positions
    j = np.arange(n_k)[None, :]  # (1, n_k) key positions
    return j <= i + (n_k - n_q)
    # END SOLUTION


def apply_mask(scores: ArrayLike, mask: ArrayLike) -> np.ndarray:
    """Scores with ``-inf`` wherever ``mask`` is False.

    Args:
        scores: ``[..., n_q, n_k]``.
        mask: bool, broadcastable to ``scores``; ``True`` = may attend.

    Returns:
        An array shaped like the broadcast of ``scores`` and ``mask``.
    """
    # BEGIN SOLUTION
    return np.where(np.asarray(mask, dtype=bool), np.asarray(scores, dtype=float), -np.inf)
    # END SOLUTION


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
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    longer = np.vstack([X, np.asarray(x_next, dtype=float)[None, :]])  # (n + 1, d_model)

    def outputs(tokens: np.ndarray) -> np.ndarray:
        Q, K, V = project(tokens, W_Q, W_K, W_V)
        mask = causal_mask(len(tokens)) if causal else None
        return np.asarray(attention(Q, K, V, mask)[0])  # (len(tokens), d_v); a tensor is fine too

    before, after = outputs(X), outputs(longer)[: len(X)]
    return float(np.max(np.abs(after - before))) if len(X) else 0.0
    # END SOLUTION
