"""The ``oracle`` fixture: each test that takes it runs on both of the checks' trusted torch sides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge import oracle as oracles
from autograder.sandbox.client import Limits
from autograder.sandbox.isolation import Level
from tests import kit, layers


@pytest.fixture(params=["grader", "box"])
def oracle(request: pytest.FixtureRequest) -> Iterator[oracles.Oracle]:
    """The reference's oracle in the grading process, and in a sandbox child of its own (namespaces only)."""
    if request.param == "grader":
        side: oracles.Oracle = oracles.InProcessOracle(Reference(kit.SOLUTIONS, tasks.MODULES))
    elif Level.NAMESPACES not in layers.testable():
        pytest.skip("the boxed oracle needs the namespaces layer (bubblewrap), which this machine does not give")
    else:
        side = oracles.BoxedOracle(kit.SOLUTIONS, Limits(), Level.NAMESPACES)
    yield side
    side.close()
