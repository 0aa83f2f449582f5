"""Probes of the gradients step: hand the student's ``central_difference`` a known scalar function.

The functions it differentiates are built here, inside the child, from arrays
the grader sends; the grader imports the same builders to know the exact
gradients and the wrong answers. Only numpy: this module is imported on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe

ScalarFunction = Callable[[np.ndarray], float]


def smooth_function(w: np.ndarray, u: np.ndarray) -> ScalarFunction:
    """``f(x) = sum(sin(x) * w) + (sum(x * u))**2 / 2``: separable part plus a term that couples every coordinate."""
    w, u = np.asarray(w, dtype=float), np.asarray(u, dtype=float)

    def f(x: np.ndarray) -> float:
        x = np.asarray(x, dtype=float)
        return float(np.sum(np.sin(x) * w) + 0.5 * np.sum(x * u) ** 2)

    return f


def smooth_gradient(x: np.ndarray, w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The exact gradient of :func:`smooth_function` at ``x``."""
    x = np.asarray(x, dtype=float)
    return np.cos(x) * w + np.sum(x * u) * np.asarray(u, dtype=float)


def head_loss(Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray, wrt: str) -> ScalarFunction:
    """``L = sum(attention(Q, K, V)[0] * dO)`` as a function of one of ``Q``, ``K``, ``V`` (a trusted forward pass)."""
    inputs = {"Q": np.asarray(Q, dtype=float), "K": np.asarray(K, dtype=float), "V": np.asarray(V, dtype=float)}
    dO = np.asarray(dO, dtype=float)

    def loss(x: np.ndarray) -> float:
        head = {**inputs, wrt: np.asarray(x, dtype=float)}
        S = head["Q"] @ head["K"].T / np.sqrt(head["Q"].shape[-1])  # (n_q, n_k)
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        A /= A.sum(axis=-1, keepdims=True)
        return float(np.sum((A @ head["V"]) * dO))

    return loss


@probe
def numerical_gradient(
    load: Load, x: np.ndarray, w: np.ndarray, u: np.ndarray, h: float | None = None
) -> tuple[Any, np.ndarray]:
    """The student's ``central_difference(f, x, h)`` of :func:`smooth_function`, and ``x`` after the call.

    ``h=None`` leaves the student's default step. The second value shows
    whether the call changed the caller's array.
    """
    f = smooth_function(w, u)
    central_difference = load("gradients").central_difference
    grad = central_difference(f, x) if h is None else central_difference(f, x, h)
    return grad, x


@probe
def head_gradcheck(load: Load, Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray) -> tuple[Any, Any, Any]:
    """The student's ``central_difference`` (default step) of :func:`head_loss` with respect to Q, K and V."""
    central_difference = load("gradients").central_difference
    return tuple(
        central_difference(head_loss(Q, K, V, dO, name), np.array(value, dtype=float))
        for name, value in (("Q", Q), ("K", K), ("V", V))
    )
