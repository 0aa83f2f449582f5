"""Probes of the mixture-of-experts router: hand the student's ``moe_layer`` experts built from the grader's arrays.

The experts are callables, which cannot cross the process boundary, so they are made here from ``A`` and ``b``
(expert ``e`` maps rows to ``rows @ A[e] + b[e]``). Nothing here counts, records or compares: the probes return
only what ``moe_layer`` returned, and the grader compares it with the reference. Which experts a layer calls is
made visible in that value: in :func:`gated_moe_layer` an expert given a token the router did not send to it
raises :class:`UnroutedRow` instead of answering, so a layer that calls every expert on every token gives no output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe


def affine_expert(A: np.ndarray, b: np.ndarray, e: int) -> Callable[[np.ndarray], np.ndarray]:
    """The grader's expert ``e``: rows ``[m, d]`` to ``rows @ A[e] + b[e]``."""
    return lambda rows: np.asarray(rows, dtype=float) @ A[e] + b[e]


class UnroutedRow(Exception):
    """An expert was called with a row the router did not send to it (the grader decides by this class's name)."""


def _gated(A: np.ndarray, b: np.ndarray, e: int, x: np.ndarray, tokens: list[int]) -> Callable[[Any], np.ndarray]:
    """Expert ``e``: the affine map for rows that are tokens routed to it (``tokens``), :class:`UnroutedRow` for
    any other row."""
    compute = affine_expert(A, b, e)
    allowed = x[np.asarray(tokens, dtype=int)] if tokens else np.zeros((0, x.shape[-1]))

    def expert(rows: Any) -> np.ndarray:
        as_array = np.asarray(rows, dtype=float)
        for row in as_array.reshape(-1, x.shape[-1]):
            if not np.any(np.all(np.isclose(allowed, row, rtol=1e-5, atol=1e-6), axis=-1)):
                matches = np.nonzero(np.all(np.isclose(x, row, rtol=1e-5, atol=1e-6), axis=-1))[0]
                token = f"token {int(matches[0])}" if len(matches) else "a row that is no token of x"
                raise UnroutedRow(f"expert {e} was called with {token}, which the router did not send to it")
        return compute(as_array)

    return expert


@probe
def affine_moe_layer(load: Load, x: np.ndarray, W_r: np.ndarray, A: np.ndarray, b: np.ndarray, k: int) -> Any:
    """``moe_layer(x, W_r, experts, k)`` with the affine experts of ``A`` and ``b``: what it returned."""
    return load("moe_router").moe_layer(x, W_r, [affine_expert(A, b, e) for e in range(len(A))], k)


@probe
def gated_moe_layer(
    load: Load, x: np.ndarray, W_r: np.ndarray, A: np.ndarray, b: np.ndarray, k: int, routed: list
) -> Any:
    """``moe_layer(x, W_r, experts, k)`` with affine experts that answer only the tokens ``routed[e]`` the grader's
    router sends to expert ``e`` (and raise :class:`UnroutedRow` for any other row): what it returned."""
    tokens = np.asarray(x, dtype=float).reshape(-1, np.shape(x)[-1])
    experts = [_gated(A, b, e, tokens, [int(t) for t in routed[e]]) for e in range(len(A))]
    return load("moe_router").moe_layer(x, W_r, experts, k)
