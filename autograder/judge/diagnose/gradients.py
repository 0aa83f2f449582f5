"""Wrong ways to write the backward pass of one head and the central difference, and what they return."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.search import edit, generate
from autograder.sandbox.probes.gradients import head_loss, smooth_function

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "grad_dv_not_transposed",
            "dV is A dO; it is A^T dO (value row j collects the gradient of every query that read it)",
        ),
        Mistake("grad_missing_scale", "dQ and dK miss the factor 1/sqrt(d_k) of the scaled scores"),
        Mistake(
            "grad_softmax_no_rowsum",
            "the softmax backward does not subtract the row sum; dS = A * (dA - rowsum(A * dA))",
        ),
        Mistake("grad_dk_not_transposed", "dK uses dS instead of its transpose; dK = dS^T Q / sqrt(d_k)"),
        Mistake("grad_dq_dk_swapped", "dQ and dK are swapped (dQ = dS K / sqrt(d_k), dK = dS^T Q / sqrt(d_k))"),
        Mistake(
            "central_forward_difference",
            "this is a forward difference (f(x + h) - f(x)) / h; the central difference is (f(x + h) - f(x - h)) / 2h",
        ),
        Mistake("central_no_half", "the difference f(x + h) - f(x - h) is divided by h instead of 2h"),
        Mistake("central_all_at_once", "every coordinate is moved at once; move one coordinate at a time (x + h e_i)"),
        Mistake(
            "central_not_restored",
            "a coordinate is not put back after it was moved, so the later ones are measured at a shifted point",
        ),
        Mistake(
            "grad_softmax_skipped",
            "the softmax is skipped in the backward pass (dS = dA); its Jacobian gives dS = A * (dA - rowsum(A * dA))",
        ),
        Mistake("grad_scale_twice", "dQ and dK are divided by sqrt(d_k) twice (by d_k); once is right"),
        Mistake(
            "grad_softmax_column_sum",
            "the softmax backward subtracts the column sums; the sum runs along each row: rowsum(A * dA)",
        ),
        Mistake(
            "central_modifies_input",
            "the function changes the caller's x (the steps are taken in place on it, and x + h - h is not always "
            "x again in floating point); work on a copy, x = np.array(x, dtype=float)",
        ),
        Mistake(
            "central_backward_difference",
            "this is a backward difference (f(x) - f(x - h)) / h; the central difference is (f(x + h) - f(x - h)) / 2h",
        ),
    )
}


def backward_model(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    *,
    dv: str = "A^T dO",
    softmax: str = "rows",
    scale: int = 1,
    dk: str = "dS^T Q",
    swapped: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference backward pass with its choices as knobs (the defaults are the reference's).

    ``dv``: ``A^T dO`` or ``A dO``; ``softmax``: the Jacobian with the ``"rows"``' sums, without them
    (``"no_sum"``), with the ``"columns"``' sums, or skipped (``"skipped"``, dS = dA); ``scale``: how many
    times dQ and dK are divided by sqrt(d_k); ``dk``: ``dS^T Q`` or ``dS Q``; ``swapped``: dQ and dK exchanged.
    """
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    root = np.sqrt(Q.shape[-1])
    S = Q @ K.T / root
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    dV = A.T @ dO if dv == "A^T dO" else A @ dO
    dA = dO @ V.T
    dS = {
        "rows": lambda: A * (dA - np.sum(A * dA, axis=-1, keepdims=True)),
        "no_sum": lambda: A * dA,
        "columns": lambda: A * (dA - np.sum(A * dA, axis=-2, keepdims=True)),
        "skipped": lambda: dA,
    }[softmax]()
    factor = root**scale
    dQ = dS @ K / factor
    dK = (dS.T @ Q if dk == "dS^T Q" else dS @ Q) / factor
    return (dK, dQ, dV) if swapped else (dQ, dK, dV)


BACKWARD_EDITS = (
    edit(MISTAKES["grad_dv_not_transposed"], "dv", "A dO"),
    edit(MISTAKES["grad_softmax_no_rowsum"], "softmax", "no_sum"),
    edit(MISTAKES["grad_softmax_column_sum"], "softmax", "columns"),
    edit(MISTAKES["grad_softmax_skipped"], "softmax", "skipped"),
    edit(MISTAKES["grad_missing_scale"], "scale", 0),
    edit(MISTAKES["grad_scale_twice"], "scale", 2),
    edit(MISTAKES["grad_dk_not_transposed"], "dk", "dS Q"),
    edit(MISTAKES["grad_dq_dk_swapped"], "swapped", True),
)
EDITS = BACKWARD_EDITS


def attention_backward_variants(ref, Q, K, V, dO) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """What each mistake returns as ``(dQ, dK, dV)`` for ``attention_backward(Q, K, V, dO)``."""
    Q, K, V, dO = (np.asarray(a, dtype=float) for a in (Q, K, V, dO))
    scale = np.sqrt(Q.shape[-1])
    A = ref.scaling.attention(Q, K, V)[1]  # (n_q, n_k)
    dQ, dK, dV = ref.gradients.attention_backward(Q, K, V, dO)
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    no_rowsum = A * dA
    out = {
        "grad_missing_scale": (dQ * scale, dK * scale, dV),
        "grad_softmax_no_rowsum": (no_rowsum @ K / scale, np.swapaxes(no_rowsum, -1, -2) @ Q / scale, dV),
    }
    if Q.shape[-2] == K.shape[-2]:  # the transposition mistakes only have the right shapes for square A
        out["grad_dv_not_transposed"] = (dQ, dK, A @ dO)
        out["grad_dk_not_transposed"] = (dQ, dS @ Q / scale, dV)
    if Q.shape == K.shape:
        out["grad_dq_dk_swapped"] = (dK, dQ, dV)
    return {**out, **generate(backward_model, BACKWARD_EDITS, (Q, K, V, dO), known=out)}


def central_difference_variants(f: Callable[[np.ndarray], float], x, h: float) -> dict[str, np.ndarray]:
    """What each mistake returns for ``central_difference(f, x, h)`` (``f`` is trusted)."""
    x = np.array(x, dtype=float)
    forward, no_half, not_restored = (np.zeros_like(x) for _ in range(3))
    shifted = x.copy()
    f_x = float(f(x))
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        f_plus, f_minus = float(f(x + step)), float(f(x - step))
        forward[index] = (f_plus - f_x) / h
        no_half[index] = (f_plus - f_minus) / h
        plus = shifted.copy()
        plus[index] += h
        shifted[index] -= h  # and it stays there for the later coordinates
        not_restored[index] = (float(f(plus)) - float(f(shifted))) / (2 * h)
    at_once = np.full_like(x, (float(f(x + h)) - float(f(x - h))) / (2 * h))
    backward = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        backward[index] = (f_x - float(f(x - step))) / h
    return {
        "central_backward_difference": backward,
        "central_forward_difference": forward,
        "central_no_half": no_half,
        "central_all_at_once": at_once,
        "central_not_restored": not_restored,
    }


def difference_answers(x: np.ndarray, w: np.ndarray, u: np.ndarray, h: float | None = None) -> Answers:
    """The wrong answers of the probe ``numerical_gradient(x, w, u, h)`` (the smooth function of ``w`` and ``u``),
    with their twin (``h=None``: the default step, 1e-6)."""
    args = (x, w, u) if h is None else (x, w, u, h)

    def compute(a: tuple, k: dict) -> dict[str, np.ndarray]:
        return central_difference_variants(smooth_function(a[1], a[2]), a[0], 1e-6 if h is None else a[3])

    return Answers.of_call(args, {}, compute)


def gradcheck_answers(Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray, index: int) -> Answers:
    """The wrong answers of part ``index`` (dQ, dK or dV) of the probe ``head_gradcheck(Q, K, V, dO)``."""

    def compute(a: tuple, k: dict) -> dict[str, np.ndarray]:
        return central_difference_variants(head_loss(*a, "QKV"[index]), a[index], 1e-6)

    return Answers.of_call((Q, K, V, dO), {}, compute)
