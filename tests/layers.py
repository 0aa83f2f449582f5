"""The isolation layers this machine can test (the hook layer everywhere; the others where they work)."""

from __future__ import annotations

from autograder.sandbox import isolation
from autograder.sandbox.isolation import Level


def testable() -> list[Level]:
    """Every layer that works here, strongest first (the kit's tests run the sandbox's tests at each)."""
    found = isolation.available()
    return [level for level in sorted(Level, reverse=True) if found.works[level]]


def strongest() -> Level:
    return testable()[0]
