"""The fixtures grader files use (``lab``, ``ref``, ``oracle``, ``rng``), served by the engine's plugin of this run.

Plain module-level fixtures: pytest deprecates fixtures defined as methods of a plugin instance (pytest 9 warns,
pytest 10 refuses them). Each asks the run's :class:`autograder.grading.engine.GradingPlugin`, which the plugin puts in
the config's stash when pytest configures it.
"""

from __future__ import annotations

from typing import Any

import pytest

PLUGIN = pytest.StashKey[Any]()  # the GradingPlugin of this run


@pytest.fixture(scope="module")
def lab(request: pytest.FixtureRequest) -> Any:
    """The submission, for the step of this grader file, through that step's sandbox."""
    return request.config.stash[PLUGIN].lab(request)


@pytest.fixture(scope="session")
def ref(request: pytest.FixtureRequest) -> Any:
    """The reference solution (hidden graders only; never shipped to students)."""
    return request.config.stash[PLUGIN].ref()


@pytest.fixture(scope="session")
def oracle(request: pytest.FixtureRequest) -> Any:
    """The checks' trusted torch side (:mod:`autograder.judge.oracle`): torch's SDPA and autograd, the reference's torch
    modules (those with a reference only)."""
    return request.config.stash[PLUGIN].oracle()


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> Any:
    """Hidden inputs for this check: the submission's seed and the check's own name."""
    return request.config.stash[PLUGIN].rng(request)
