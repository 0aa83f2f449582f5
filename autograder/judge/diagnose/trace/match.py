"""Which of the student's values equal which of the reference's: the alignment of two traces by their numbers.

Two computations of the same quantity agree in value however they were written (``np.einsum`` or ``@``, NumPy or
torch, float64 or float32), so values, not operation names, tell where the student's computation still follows
the reference's. Equal means: the same number of entries in the same shape up to axes of length 1, the same
infinities and NaNs, and the finite entries within float32 rounding of the array's size.
"""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose.trace.model import Trace

RTOL = 2e-5  # relative to the array's largest entry: float32 arithmetic a few dozen operations deep
ATOL = 1e-9


def squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def close(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two node values are equal in the sense of this module."""
    if a.size != b.size or squeezed(a.shape) != squeezed(b.shape):
        return False
    x, y = a.reshape(-1).astype(float), b.reshape(-1).astype(float)
    return bool(_rows_close(x[None, :], y)[0])


def _rows_close(rows: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Which rows of ``rows`` (k x size) are close to ``value`` (size,)."""
    finite = np.isfinite(value)
    scale = float(np.max(np.abs(value[finite]), initial=0.0))
    tolerance = ATOL + RTOL * scale
    with np.errstate(invalid="ignore"):
        gap = np.abs(rows - value)
        same_special = (rows == value) | (np.isnan(rows) & np.isnan(value))
        ok = np.where(finite, gap <= tolerance, same_special)
    return np.all(ok, axis=1)


class Index:
    """The values of a trace's nodes, by size, for finding the nodes that hold a given value."""

    def __init__(self, trace: Trace, kinds: tuple[str, ...] = ("input", "op", "const")) -> None:
        grouped: dict[int, list[int]] = {}
        for node in trace.nodes:
            if node.value is not None and node.kind in kinds and node.value.size:
                grouped.setdefault(node.value.size, []).append(node.index)
        self.trace = trace
        self.buckets = {
            size: (nodes, np.stack([trace.nodes[n].value.reshape(-1).astype(float) for n in nodes]))
            for size, nodes in grouped.items()
        }

    def holding(self, value: np.ndarray | None, before: int | None = None) -> list[int]:
        """The nodes whose value equals ``value`` (made before node ``before``, if given), in order."""
        if value is None or value.size not in self.buckets:
            return []
        nodes, rows = self.buckets[value.size]
        hits = _rows_close(rows, value.reshape(-1).astype(float))
        shape = squeezed(value.shape)
        return [
            n
            for n, hit in zip(nodes, hits)
            if hit and squeezed(self.trace.nodes[n].shape) == shape and (before is None or n < before)
        ]


def matched(reference: Trace, student: Index, nodes: set[int] | None = None) -> dict[int, list[int]]:
    """For each reference node (of ``nodes``, if given) with a value, the student's nodes that hold it."""
    found = {}
    for node in reference.nodes:
        if node.value is None or (nodes is not None and node.index not in nodes) or node.kind == "object":
            continue
        found[node.index] = student.holding(node.value)
    return found
