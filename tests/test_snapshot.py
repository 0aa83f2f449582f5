"""The public checks' snapshots are what the reference produces now."""

from __future__ import annotations

from io import BytesIO

import numpy as np
import pytest

from autograder import cases, tasks
from autograder.reference import Reference
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
            np.testing.assert_array_equal(stored[key], value, err_msg=f"{key} is stale: run `attnlab snapshot`")


def test_case_names_are_unique() -> None:
    names = [case.name for module in cases.case_modules().values() for case in module.CASES]
    assert len(names) == len(set(names))
