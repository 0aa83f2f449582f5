"""The public checks' snapshots are what the reference produces now.

"Now" is judged up to rounding: a fresh machine gets the newest numpy the
ranges allow, with its own OpenBLAS, and its matrix products may differ from
the committed values in the last bit or two (measured: at most 4e-16 with
numpy 2.4.6). A stale snapshot differs far more than that (a changed
reference changes values by 1e-6 or more), so floats are compared with a
relative 1e-12 of the array's own scale; integers, booleans and shapes stay
exact. Regrading on one machine stays bit-for-bit reproducible (that is
tested on the reports, not here).
"""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest

from autograder import cases, tasks
from autograder.reference import Reference
from tests import kit

# Last-bit differences between BLAS builds are a few ulps of the largest entry; 1e-12 is about 4500 ulps of 1.0.
RELATIVE = 1e-12


def stale_entries(stored: np.ndarray, fresh: np.ndarray) -> str | None:
    """Why ``stored`` is not ``fresh`` up to rounding, or None when it is."""
    if stored.shape != fresh.shape or stored.dtype.kind != fresh.dtype.kind:
        return f"shape/dtype {stored.shape} {stored.dtype} != {fresh.shape} {fresh.dtype}"
    if fresh.dtype.kind not in "fc":
        return None if np.array_equal(stored, fresh) else "exact values differ"
    if not np.array_equal(np.isfinite(stored), np.isfinite(fresh)):
        return "inf/NaN in different places"
    finite = np.isfinite(fresh)
    if not np.array_equal(stored[~finite], fresh[~finite], equal_nan=True):
        return "different infinities"
    scale = float(np.max(np.abs(fresh[finite]), initial=0.0)) or 1.0
    gap = float(np.max(np.abs(stored[finite] - fresh[finite]), initial=0.0))
    return None if gap <= RELATIVE * scale else f"largest difference {gap:.3g} at scale {scale:.3g}"


@pytest.mark.parametrize("name", sorted(cases.case_modules()))
def test_snapshot_is_current(name: str) -> None:
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    fresh = cases.build_snapshot(ref, cases.case_modules()[name].CASES)
    path = kit.ROOT / "autograder" / "data" / cases.SNAPSHOT_DIR / cases.snapshot_name(name)
    assert path.is_file(), f"no snapshot for {name}: run `attnlab snapshot`"
    with np.load(BytesIO(path.read_bytes()), allow_pickle=False) as stored:
        assert sorted(stored.files) == sorted(fresh), f"snapshot {name} is stale: run `attnlab snapshot`"
        for key, value in fresh.items():
            why = stale_entries(stored[key], np.asarray(value))
            assert why is None, f"{key} is stale ({why}): run `attnlab snapshot`"


def test_rounding_is_ignored_and_a_real_change_is_not() -> None:
    fresh = np.array([[0.6961, 0.1791, 0.1249], [1.0, -np.inf, 0.0]])
    assert stale_entries(fresh + 4e-16, fresh) is None  # what a newer numpy's BLAS gave
    assert stale_entries(np.where(np.isfinite(fresh), np.nextafter(fresh, 2.0), fresh), fresh) is None
    assert stale_entries(fresh + 1e-9, fresh) is not None  # far below what the graders' tolerances notice
    assert stale_entries(fresh * np.array([1, 1, 1]) + np.array([0, 0, 1e-6]), fresh) is not None
    assert stale_entries(np.where(np.isinf(fresh), 0.0, fresh), fresh) is not None
    assert stale_entries(np.array([1, 2, 3]), np.array([1, 2, 4])) is not None


def test_case_names_are_unique() -> None:
    names = [case.name for module in cases.case_modules().values() for case in module.CASES]
    assert len(names) == len(set(names))
