"""Probes of the mixture-of-experts router: experts that record which tokens reach them."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.diagnose.moe_router import affine_expert
from autograder.sandbox.probes import Load, probe


@probe
def recorded_moe_layer(
    load: Load, x: np.ndarray, W_r: np.ndarray, A: np.ndarray, b: np.ndarray, k: int
) -> tuple[Any, list[np.ndarray], list[int]]:
    """``moe_layer(x, W_r, experts, k)`` with affine experts that record their input rows.

    Returns:
        ``(output, rows, calls)``: the student's output; for each expert the rows
        it received, stacked ``[m, d]`` (``[0, d]`` if none); and how many times
        it was called.
    """
    received: list[list[np.ndarray]] = [[] for _ in range(len(A))]

    def recording(e: int):
        compute = affine_expert(A, b, e)

        def expert(rows: Any) -> np.ndarray:
            as_array = np.asarray(rows, dtype=float)
            received[e].append(as_array.reshape(-1, x.shape[-1]).copy())
            return compute(as_array)

        return expert

    output = load("moe_router").moe_layer(x, W_r, [recording(e) for e in range(len(A))], k)
    rows = [np.concatenate(r) if r else np.zeros((0, x.shape[-1])) for r in received]
    return output, rows, [len(r) for r in received]
