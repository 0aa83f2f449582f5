"""Step 9, multi-head attention and the rest of one block (handout section `block`).

Each head has its own projections and attends on its own; the heads' outputs
are put side by side, ``[head 1 | head 2 | ...]``, and ``W_O`` mixes them back
to the model width. The chapter's worked block (section 7.3) adds that to the
tokens (the residual stream), normalises the sum with LayerNorm, runs the
feed-forward network on the *normalised* rows and adds its output to the
*un-normalised* residual. There is no LayerNorm before attention in the worked
example.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scaling import attention, project

Head = tuple[ArrayLike, ArrayLike, ArrayLike]


def multi_head(X: ArrayLike, heads: list[Head], W_O: ArrayLike) -> np.ndarray:
    """Multi-head attention: every head on ``X``, concatenated, times ``W_O``.

    Args:
        X: token vectors as rows, ``[..., n, d_model]``.
        heads: one ``(W_Q, W_K, W_V)`` per head, with shapes ``[d_model, d_k]``,
            ``[d_model, d_k]``, ``[d_model, d_v]``.
        W_O: output projection, ``[h * d_v, d_out]`` (the concatenated width in,
            usually ``d_model`` out).

    Returns:
        ``Concat(head_1, ..., head_h) @ W_O``, shape ``[..., n, d_out]``.

    Example:
        With the chapter's two heads and ``W_O = I`` the kedi row of the
        concatenation is about ``[0.7444, 0.3433, 0.8310, 0.1014]``.
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    outputs = []
    for W_Q, W_K, W_V in heads:
        Q, K, V = project(X, W_Q, W_K, W_V)  # (..., n, d_k), (..., n, d_k), (..., n, d_v)
        outputs.append(np.asarray(attention(Q, K, V)[0]))  # (..., n, d_v), unmasked; a tensor is fine
    concat = np.concatenate(outputs, axis=-1)  # (..., n, h * d_v) = [head 1 | head 2 | ...]
    return concat @ np.asarray(W_O, dtype=float)  # (..., n, d_out)
    # END SOLUTION


def layer_norm(x: ArrayLike, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis with gamma = 1 and beta = 0.

    Args:
        x: ``[..., d]``.
        eps: added to the variance inside the square root.

    Returns:
        ``(x - mean) / sqrt(var + eps)`` row by row, with the population
        variance (divide by ``d``, not ``d - 1``); same shape as ``x``.
    """
    # BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = x.var(axis=-1, keepdims=True)  # (..., 1), population variance
    return (x - mean) / np.sqrt(var + eps)
    # END SOLUTION


def rms_norm(x: ArrayLike, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm over the last axis with gamma = 1: no mean is subtracted.

    Args:
        x: ``[..., d]``.
        eps: added to the mean square inside the square root.

    Returns:
        ``x / sqrt(mean(x**2) + eps)`` row by row; same shape as ``x``.
    """
    # BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    mean_square = np.mean(x**2, axis=-1, keepdims=True)  # (..., 1)
    return x / np.sqrt(mean_square + eps)
    # END SOLUTION


def feed_forward(x: ArrayLike, W1: ArrayLike, b1: ArrayLike, W2: ArrayLike, b2: ArrayLike) -> np.ndarray:
    """The position-wise feed-forward network ``relu(x W1 + b1) W2 + b2``.

    Args:
        x: ``[..., n, d_model]``.
        W1: ``[d_model, d_ff]``; each column is one detector.
        b1: ``[d_ff]``.
        W2: ``[d_ff, d_out]``; row ``i`` is what detector ``i`` writes back.
        b2: ``[d_out]``.

    Returns:
        ``[..., n, d_out]``.
    """
    # BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    detectors = np.maximum(x @ np.asarray(W1, dtype=float) + b1, 0.0)  # (..., n, d_ff), ReLU
    return detectors @ np.asarray(W2, dtype=float) + b2  # (..., n, d_out)
    # END SOLUTION


def block(
    X: ArrayLike, heads: list[Head], W_O: ArrayLike, W1: ArrayLike, b1: ArrayLike, W2: ArrayLike, b2: ArrayLike
) -> np.ndarray:
    """The chapter's worked block: ``x = X + MultiHead(X)``, then ``x + FFN(LayerNorm(x))``.

    Args:
        X: token vectors as rows, ``[..., n, d_model]``.
        heads: one ``(W_Q, W_K, W_V)`` per head (see :func:`multi_head`).
        W_O: output projection, ``[h * d_v, d_model]``.
        W1: ``[d_model, d_ff]``.
        b1: ``[d_ff]``.
        W2: ``[d_ff, d_model]``.
        b2: ``[d_model]``.

    Returns:
        ``[..., n, d_model]``: the residual plus the feed-forward output computed
        from the normalised residual (no LayerNorm before attention).

    Example:
        For the chapter's block the kedi row is about ``[2.2847, 0.4635, 1.1733, 0.5]``.
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    x = X + multi_head(X, heads, W_O)  # (..., n, d_model), the residual stream
    return x + feed_forward(layer_norm(x), W1, b1, W2, b2)  # FFN reads N(x), writes into x
    # END SOLUTION
