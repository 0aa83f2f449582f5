"""The public checks' snapshots are what the reference produces now, up to rounding.

A fresh machine's numpy and BLAS may differ from the committed values in the
last bits; :mod:`autograder.base.numerics` says why that is ignored and a real
change is not (the last test proves both).
"""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.numerics import rounding_gap as stale_entries
from autograder.base.reference import Reference
from autograder.judge import cases
from tests import kit


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
