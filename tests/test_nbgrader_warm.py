"""The warm grading server of nbgrader autograde: same reports as a fresh grader process, deadlines, private socket."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder import tasks
from autograder.nbgrader_course import cells, course, warm
from autograder.nbgrader_course.private import DEFAULT_DEADLINE_S
from tests import kit

STEPS = ("softmax", "mask")


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("course")
    course.write_course(course.CourseOptions(folder=folder, kit=kit.ROOT))
    yield folder / "private"
    warm.stop(folder / "private")


def graded(submission: Path, private: Path, deadline_s: float = DEFAULT_DEADLINE_S) -> cells.Outcome:
    return cells._grade_once(submission.resolve(), STEPS, private.resolve(), deadline_s)


def test_a_warm_worker_grades_as_a_fresh_process(private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_first, warm_again = graded(kit.SOLUTIONS, private), graded(kit.SOLUTIONS, private)
    assert warm.socket_path(private).exists(), "no warm server was started"
    monkeypatch.setenv(warm.ENV_SWITCH, "0")
    cold = graded(kit.SOLUTIONS, private)
    assert warm_first == warm_again == cold and not cold.failure
    assert sum(float(t["score"]) for t in cold.tests) == sum(tasks.step(s).points for s in STEPS)
    stubs = graded(kit.STUBS, private)
    monkeypatch.delenv(warm.ENV_SWITCH)
    assert graded(kit.STUBS, private) == stubs  # a student's run leaves nothing behind for the next


def test_the_deadline_stops_the_worker_and_the_server_serves_on(private: Path, tmp_path: Path) -> None:
    hangs = tmp_path / "hangs"
    shutil.copytree(kit.SOLUTIONS, hangs, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    (hangs / "softmax.py").write_text("while True:\n    pass\n", encoding="utf-8")
    outcome = graded(hangs, private, deadline_s=3)
    assert outcome == cells.Outcome(failure=cells.NOT_FINISHED.format(seconds=3))
    assert not graded(kit.SOLUTIONS, private).failure


def test_the_socket_folder_must_be_closed_to_others(
    private: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setattr(warm, "socket_path", lambda _: shared / warm.SOCKET)
    with pytest.raises(warm.WarmUnavailable, match="not a private folder"):
        warm.grade({}, private, 10, 1)
    outcome = graded(kit.SOLUTIONS, private)  # the cell grades in a fresh process instead
    assert not outcome.failure and outcome.tests
    assert not (shared / warm.SOCKET).exists()


def test_each_course_and_kit_gets_its_own_server(
    private: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = warm.socket_path(private)
    assert warm.socket_path(tmp_path) != first
    assert first.parent.name.startswith(f"attnlab-{os.getuid()}-")
    monkeypatch.setattr(warm, "_kit_digest", lambda: "a-changed-kit")
    assert warm.socket_path(private) != first
