"""What grader files hold: each check's step, name, title and points, read from its pytest item.

The engine reads these while it grades; :func:`collect` lists a grader folder's
checks without running them (pytest's own ``--collect-only``), so the handout
and the coverage tests see the checks exactly as the report names them.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.i18n import _
from autograder.i18n.extract import docstring_title

MARKERS = (
    "points(n): points this check is worth",
    "step(id): the lab step of the checks in this module",
)


class GraderFileError(Exception):
    """A grader file lacks a marker the kit needs (never a student's fault)."""


@dataclass(frozen=True)
class CheckInfo:
    """One check as a grader file declares it."""

    step: str
    name: str  # the pytest item's name, e.g. test_worked_example or test_axis[0]
    title: str  # the first paragraph of its docstring, with the parameter id
    points: float


def step_of(item: pytest.Item) -> tasks.Step:
    """The step named by the module's ``pytestmark = pytest.mark.step(id)``."""
    marker = item.get_closest_marker("step")
    if marker is None:
        raise GraderFileError(f"{item.nodeid} has no step marker (pytestmark = pytest.mark.step(id))")
    return tasks.step(marker.args[0])


def points_of(item: pytest.Item) -> float:
    """The check's ``@pytest.mark.points(n)``."""
    marker = item.get_closest_marker("points")
    if marker is None:
        raise GraderFileError(f"{item.nodeid} has no points marker")
    return float(marker.args[0])


def title_of(item: pytest.Item) -> str:
    """The check's title in the active language (or its name), with the parameter id in brackets.

    A parameter id in words (``rank below 2``, marked with ``N_`` where the
    parameters are listed) is shown translated; the check's id keeps it as it is. A check made from parts (one per
    question) may carry ``title``, a function that composes its title in the active language when the report is
    written: a title formatted at import would keep the language the module was first imported in.
    """
    function = getattr(item, "function", None)
    composed = getattr(function, "title", None)
    if callable(composed):
        title = str(composed())
    else:
        title = docstring_title(function.__doc__ if function else None)
        title = _(title) if title else item.name.removeprefix("test_").replace("_", " ")
    callspec = getattr(item, "callspec", None)
    return f"{title} [{_(callspec.id)}]" if callspec else title


def info(item: pytest.Item) -> CheckInfo:
    return CheckInfo(step_of(item).id, item.name, title_of(item), points_of(item))


class _Collector:
    """A pytest plugin that keeps the collected items."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        for line in MARKERS:
            config.addinivalue_line("markers", line)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.items = list(items)


def collect(folder: Path, ini: Path) -> tuple[CheckInfo, ...]:
    """Every check of the grader files in ``folder``, in file order, collected (not run) with the config ``ini``."""
    collector = _Collector()
    args = [str(folder), "-c", str(ini), "--rootdir", str(ini.parent), "--noconftest", "--collect-only", "-q"]
    args += ["--import-mode=importlib", "-p", "no:cacheprovider", "-p", "no:warnings"]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = pytest.main(args, plugins=[collector])
    if code != pytest.ExitCode.OK:
        raise GraderFileError(f"collecting the graders in {folder} failed (pytest exit {int(code)})")
    return tuple(info(item) for item in collector.items if item.get_closest_marker("step") is not None)
