"""Comparing stored numbers with fresh ones across machines: equal up to rounding.

A fresh machine gets the newest numpy the ranges allow, with its own OpenBLAS,
and its matrix products may differ from the committed values in the last bit
or two (measured: at most 4e-16 with numpy 2.4.6). A real change (a changed
reference, a changed input) moves values by 1e-6 or more. So floats agree
when they are within a relative 1e-12 of the array's own scale (about 4500
ulps of 1.0); integers, booleans, shapes and where the infinities sit stay exact.
Regrading on one machine is still reproducible bit for bit; this is only for
data committed on one machine and recomputed on another.
"""

from __future__ import annotations

import numpy as np

RELATIVE = 1e-12


def rounding_gap(stored: np.ndarray, fresh: np.ndarray) -> str | None:
    """Why ``stored`` differs from ``fresh`` by more than rounding, or None when it does not."""
    stored, fresh = np.asarray(stored), np.asarray(fresh)
    if stored.shape != fresh.shape or stored.dtype.kind != fresh.dtype.kind:
        return f"shape/dtype {stored.shape} {stored.dtype} != {fresh.shape} {fresh.dtype}"
    if fresh.dtype.kind not in "fc":
        return None if np.array_equal(stored, fresh) else "exact values differ"
    finite = np.isfinite(fresh)
    if not np.array_equal(np.isfinite(stored), finite):
        return "inf/NaN in different places"
    if not np.array_equal(stored[~finite], fresh[~finite], equal_nan=True):
        return "different infinities"
    scale = float(np.max(np.abs(fresh[finite]), initial=0.0)) or 1.0
    gap = float(np.max(np.abs(stored[finite] - fresh[finite]), initial=0.0))
    return None if gap <= RELATIVE * scale else f"largest difference {gap:.3g} at scale {scale:.3g}"


def same_up_to_rounding(stored: dict[str, np.ndarray], fresh: dict[str, np.ndarray]) -> bool:
    """Two named sets of arrays (e.g. a snapshot file and a fresh build) with the same keys and values."""
    return sorted(stored) == sorted(fresh) and all(rounding_gap(stored[k], fresh[k]) is None for k in fresh)
