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
    raise NotImplementedError(
        "Lab 7 step 'equivariance', task restored_outputs: not implemented yet "
        "(handout: handouts/lab07_attention.md#equivariance)"
    )


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
    raise NotImplementedError(
        "Lab 7 step 'equivariance', task permutation_gap: not implemented yet "
        "(handout: handouts/lab07_attention.md#equivariance)"
    )
