"""The tree reads one way and runs on the Pythons courses use.

ruff (pinned in the dev extra, so a newer formatter cannot fail a fresh
machine) checks lint and format; vermin checks statically that nothing needs
a Python newer than 3.10, because no 3.10 interpreter is available where the
kit is developed (Gradescope's default image and Ubuntu 22.04 run 3.10).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import kit

TREES = ["autograder", "solutions", "hidden", "assignments", "tests", "bench"]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: install the kit's dev extra (pip install -e '.[dev]')")
    return found


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=kit.ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing() -> None:
    done = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-3000:]


def test_the_tree_is_formatted() -> None:
    done = _run(_tool("ruff"), "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-3000:] + " (run: ruff format .)"


def test_nothing_needs_a_python_newer_than_3_10() -> None:
    done = _run(_tool("vermin"), "--target=3.10-", "--violations", "--no-tips", *TREES)
    assert done.returncode == 0, done.stdout[-3000:]
