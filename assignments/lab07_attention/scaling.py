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
    raise NotImplementedError(
        "Lab 7 step 'scaling', task project: not implemented yet (handout: handouts/lab07_attention.md#scaling)"
    )


def scores(Q: ArrayLike, K: ArrayLike) -> np.ndarray:
    """Raw scores ``Q K^T``: entry ``[i, j]`` says how well query ``i`` matches key ``j``.

    Args:
        Q: queries, ``[..., n_q, d_k]``.
        K: keys, ``[..., n_k, d_k]``.

    Returns:
        ``[..., n_q, n_k]``; row ``i`` belongs to query token ``i``.
    """
    raise NotImplementedError(
        "Lab 7 step 'scaling', task scores: not implemented yet (handout: handouts/lab07_attention.md#scaling)"
    )


def scaled_scores(Q: ArrayLike, K: ArrayLike) -> np.ndarray:
    """``Q K^T / sqrt(d_k)``, the scores that go into the softmax.

    Args:
        Q: queries, ``[..., n_q, d_k]``.
        K: keys, ``[..., n_k, d_k]``.

    Returns:
        ``[..., n_q, n_k]``.
    """
    raise NotImplementedError(
        "Lab 7 step 'scaling', task scaled_scores: not implemented yet (handout: handouts/lab07_attention.md#scaling)"
    )


def _check_shapes(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first problem with the shapes of one head's inputs."""
    raise NotImplementedError(
        "Lab 7 step 'scaling', task _check_shapes: not implemented yet (handout: handouts/lab07_attention.md#scaling)"
    )


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
    raise NotImplementedError(
        "Lab 7 step 'scaling', task attention: not implemented yet (handout: handouts/lab07_attention.md#scaling)"
    )
