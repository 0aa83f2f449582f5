"""Step 5, permutation equivariance: what attention knows about order (handout section `equivariance`).

Shuffle the tokens of an unmasked head without positions and the outputs are
shuffled the same way: put back in the original order they are identical (to
rounding). Attention sees a set, not a sequence. Two things break this: a
position vector added *by slot* (it stays with the slot while the words move),
and the causal mask (which token may see which depends on the slots).
"""

from __future__ import annotations

import numpy as np
from mask import causal_mask
from numpy.typing import ArrayLike
from scaling import attention, project


def restored_outputs(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    perm: ArrayLike,
    causal: bool = False,
    positions: ArrayLike | None = None,
) -> np.ndarray:
    """The head's outputs on the permuted tokens, each row put back at its word's original place.

    Slot ``s`` holds the word ``X[perm[s]]``, plus the position vector of slot
    ``s`` when ``positions`` is given; the output of that slot is returned in
    row ``perm[s]``.

    Args:
        X: tokens ``[n, d_model]`` in their original order.
        W_Q: query projection ``[d_model, d_k]``.
        W_K: key projection ``[d_model, d_k]``.
        W_V: value projection ``[d_model, d_v]``.
        perm: the new order, ``[n]``: slot ``s`` gets word ``perm[s]``.
        causal: use the causal mask (by slot).
        positions: optional position vectors ``[n, d_model]``, added by slot.

    Returns:
        ``[n, d_v]``; with ``perm = [0, 1, ..., n - 1]`` the head's ordinary outputs.

    Example:
        For the worked example, ``perm = [2, 0, 1]`` (içti kedi sütü) and no
        positions, the rows equal the unpermuted outputs
        ``[[0.7444, 0.3433], [0.3256, 0.7443], [0.5308, 0.6009]]``.
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm, dtype=int)
    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)  # (n, d_model), by slot
    tokens = X[perm] + slots  # slot s: word perm[s] plus slot s's position
    Q, K, V = project(tokens, W_Q, W_K, W_V)
    mask = causal_mask(len(tokens)) if causal else None
    out = np.asarray(attention(Q, K, V, mask)[0])  # (n, d_v), row s = slot s; a tensor is fine too
    restored = np.empty_like(out)
    restored[perm] = out  # the output of slot s goes back to word perm[s]
    return restored
    # END SOLUTION


def permutation_gap(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    perm: ArrayLike,
    causal: bool = False,
    positions: ArrayLike | None = None,
) -> float:
    """How far the head is from permutation equivariance for one reordering.

    Args:
        X: tokens ``[n, d_model]`` in their original order.
        W_Q: query projection ``[d_model, d_k]``.
        W_K: key projection ``[d_model, d_k]``.
        W_V: value projection ``[d_model, d_v]``.
        perm: the new order, ``[n]``: slot ``s`` gets word ``perm[s]``.
        causal: use the causal mask in both runs.
        positions: optional position vectors ``[n, d_model]``, added by slot in both runs.

    Returns:
        The largest absolute difference between the outputs on the permuted
        tokens and the permuted outputs on the original order: rounding noise
        without positions and mask; 0.3289 for the worked example with
        ``0.3 * sinusoidal_encoding(3, 4)`` and the order içti kedi sütü.
    """
    # BEGIN SOLUTION
    original = np.asarray(restored_outputs(X, W_Q, W_K, W_V, np.arange(len(X)), causal, positions))  # (n, d_v)
    permuted = np.asarray(restored_outputs(X, W_Q, W_K, W_V, perm, causal, positions))  # (n, d_v); a tensor is fine
    return float(np.max(np.abs(permuted - original), initial=0.0))
    # END SOLUTION
