"""Fixtures of the kit's own tests."""

from __future__ import annotations

import pytest

from autograder.report.model import GradeReport
from tests import kit


@pytest.fixture(scope="session")
def reference_report() -> GradeReport:
    """The reference solution graded once, public and hidden checks."""
    return kit.grade(kit.SOLUTIONS)


@pytest.fixture(scope="session")
def stubs_report() -> GradeReport:
    """The untouched stubs graded once."""
    return kit.grade(kit.STUBS)
