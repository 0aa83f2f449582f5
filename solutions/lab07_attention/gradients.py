"""Step 10, gradients of one unmasked head (handout section `gradients`).

For ``O = A V`` with ``A = softmax(S)`` and ``S = Q K^T / sqrt(d_k)`` and an
upstream gradient ``dO`` (the gradient of a scalar loss ``L`` with respect to
``O``), the chain rule gives, from the output back:

- ``dV = A^T dO`` and ``dA = dO V^T``;
- row by row through the softmax: ``dS = A * (dA - rowsum(A * dA))``;
- ``dQ = dS K / sqrt(d_k)`` and ``dK = dS^T Q / sqrt(d_k)``.

A central difference ``(f(x + h) - f(x - h)) / 2h``, one coordinate at a time,
checks these numbers without any calculus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scaling import attention


def attention_backward(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, dO: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of ``attention(Q, K, V)[0]`` for the upstream gradient ``dO``.

    Args:
        Q: queries, ``[n_q, d_k]``.
        K: keys, ``[n_k, d_k]``.
        V: values, ``[n_k, d_v]``.
        dO: gradient of the loss with respect to the output, ``[n_q, d_v]``.

    Returns:
        ``(dQ, dK, dV)``, shaped like ``Q``, ``K`` and ``V``.

    Example:
        For the chapter's two-token head with ``dO = I``,
        ``dQ`` is about ``[[0.0790, -0.0395], [-0.0144, 0.0072]]``.
    """
    # BEGIN SOLUTION
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    d_k = Q.shape[-1]
    A = np.asarray(attention(Q, K, V)[1])  # (n_q, n_k); a tensor from step 2 is fine too
    dV = np.swapaxes(A, -1, -2) @ dO  # (n_k, d_v)
    dA = dO @ np.swapaxes(V, -1, -2)  # (n_q, n_k)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))  # (n_q, n_k), softmax backward row by row
    dQ = dS @ K / np.sqrt(d_k)  # (n_q, d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k)  # (n_k, d_k)
    return dQ, dK, dV
    # END SOLUTION


def central_difference(f: Callable[[np.ndarray], float], x: ArrayLike, h: float = 1e-6) -> np.ndarray:
    """Numerical gradient of the scalar function ``f`` at ``x``.

    Args:
        f: takes an array shaped like ``x`` and returns a number.
        x: the point, any shape; it is not changed.
        h: the step; each coordinate is moved by ``+h`` and ``-h`` in turn.

    Returns:
        An array shaped like ``x`` whose entry ``i`` is
        ``(f(x + h e_i) - f(x - h e_i)) / (2 h)``.
    """
    # BEGIN SOLUTION
    x = np.array(x, dtype=float)  # a copy: the caller's array is never changed
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + h
        f_plus = float(f(x))
        x[index] = saved - h
        f_minus = float(f(x))
        x[index] = saved
        grad[index] = (f_plus - f_minus) / (2 * h)
    return grad
    # END SOLUTION
