"""Which tests one pytest-xdist worker runs together: the suite's scheduler (tests/conftest.py installs it).

A test module whose tests share a module-scoped fixture (every handout figure drawn, a batch graded, the timing
sweep run) runs in one worker, so the fixture is built once, not once per worker; in the second tier the users of
``student_python`` (a fresh install from the course lock, removed at the end of the session) run in one worker
too. Every other test goes to whichever worker is free. The grouping is read from the test files' source,
because xdist's scheduler sees node ids only: pytest-xdist's own ``xdist_group`` marker no longer reaches it with
pytest 9 (xdist 3.8 rewrites a node id attribute pytest 9 does not read), so this is xdist's ``loadscope``
scheduler with its scope chosen here.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

SHARED_SCOPE = re.compile(r"@pytest\.fixture\([^)]*scope=[\"'](?:module|package|class)[\"']")
INSTALL_FIXTURE = "student_python"


@cache
def _source(root: str, path: str) -> str:
    try:
        return (Path(root) / path).read_text(encoding="utf-8")
    except OSError:
        return ""


def scope(nodeid: str, root: str, tier: str) -> str:
    """The scope of the test ``nodeid`` (files under ``root``): its module, the install's group, or itself."""
    path = nodeid.partition("::")[0]
    source = _source(root, path)
    if tier != "1" and re.search(rf"\b{INSTALL_FIXTURE}\b", source):
        return INSTALL_FIXTURE
    if SHARED_SCOPE.search(source):
        return path
    return nodeid


class ModuleFixtureScheduling(LoadScopeScheduling):
    """xdist's ``loadscope`` with :func:`scope` as the scope of each test."""

    def _split_scope(self, nodeid: str) -> str:
        return scope(nodeid, str(self.config.rootpath), self.config.getoption("tier"))
