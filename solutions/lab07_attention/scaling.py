"""Step 2, scaled dot-product attention for one head (handout section `scaling`).

Tokens are rows: ``Q = X W_Q``. Each query row is compared with every key row
(``Q K^T``), the scores are divided by ``sqrt(d_k)`` so their spread does not
grow with the width, masked keys get ``-inf``, and a softmax over the key axis
gives the weights that mix the value rows.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from softmax import softmax


def project(X: ArrayLike, W_Q: ArrayLike, W_K: ArrayLike, W_V: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries, keys and values of the tokens ``X``.

    Args:
        X: token vectors as rows, ``[..., n, d_model]``.
        W_Q: query projection, ``[d_model, d_k]``.
        W_K: key projection, ``[d_model, d_k]``.
        W_V: value projection, ``[d_model, d_v]``.

    Returns:
        ``(Q, K, V)`` with shapes ``[..., n, d_k]``, ``[..., n, d_k]``, ``[..., n, d_v]``.
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    return X @ np.asarray(W_Q, dtype=float), X @ np.asarray(W_K, dtype=float), X @ np.asarray(W_V, dtype=float)
    # END SOLUTION


def scores(Q: ArrayLike, K: ArrayLike) -> np.ndarray:
    """Raw scores ``Q K^T``: entry ``[i, j]`` says how well query ``i`` matches key ``j``.

    Args:
        Q: queries, ``[..., n_q, d_k]``.
        K: keys, ``[..., n_k, d_k]``.

    Returns:
        ``[..., n_q, n_k]``; row ``i`` belongs to query token ``i``.
    """
    # BEGIN SOLUTION
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return Q @ np.swapaxes(K, -1, -2)  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    # END SOLUTION


def scaled_scores(Q: ArrayLike, K: ArrayLike) -> np.ndarray:
    """``Q K^T / sqrt(d_k)``, the scores that go into the softmax.

    Args:
        Q: queries, ``[..., n_q, d_k]``.
        K: keys, ``[..., n_k, d_k]``.

    Returns:
        ``[..., n_q, n_k]``.
    """
    # BEGIN SOLUTION
    d_k = np.shape(Q)[-1]
    return scores(Q, K) / np.sqrt(d_k)
    # END SOLUTION


def _check_shapes(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first problem with the shapes of one head's inputs."""
    # BEGIN SOLUTION
    for name, array in (("Q", Q), ("K", K), ("V", V)):
        if array.ndim < 2:
            raise ValueError(f"{name} has rank {array.ndim}; attention needs rank 2 or more ([..., tokens, width])")
    if not (Q.shape[:-2] == K.shape[:-2] == V.shape[:-2]):
        raise ValueError(f"batch axes differ: Q {Q.shape[:-2]}, K {K.shape[:-2]}, V {V.shape[:-2]}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V token counts differ: K has {K.shape[-2]} tokens, V has {V.shape[-2]}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K widths differ: d_k is {Q.shape[-1]} for Q and {K.shape[-1]} for K")
    if K.shape[-2] == 0:
        raise ValueError("K has zero key tokens; every query needs at least one key to attend to")
    # END SOLUTION


def attention(Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One attention head: ``softmax(Q K^T / sqrt(d_k)) V``.

    Args:
        Q: queries, ``[..., n_q, d_k]``.
        K: keys, ``[..., n_k, d_k]``.
        V: values, ``[..., n_k, d_v]``.
        mask: optional bool array broadcastable to ``[..., n_q, n_k]``; ``True``
            means the query may attend to that key. Masked scores become ``-inf``
            before the softmax, so their weights are exactly 0.

    Returns:
        ``(output, weights)``: ``output`` is ``[..., n_q, d_v]`` and ``weights``
        is ``[..., n_q, n_k]`` with rows that sum to 1.

    Raises:
        ValueError: rank below 2, batch axes that differ, K and V token counts
            that differ, Q and K widths that differ, or zero key tokens.

    Example:
        For the chapter's three tokens the içti row of ``weights`` is
        about ``[0.4230, 0.5012, 0.0759]``.
    """
    # BEGIN SOLUTION
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    _check_shapes(Q, K, V)
    S = scaled_scores(Q, K)  # (..., n_q, n_k)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    weights = np.asarray(softmax(S, axis=-1))  # (..., n_q, n_k), rows sum to 1; a tensor is fine
    return weights @ V, weights  # (..., n_q, d_v)
    # END SOLUTION
