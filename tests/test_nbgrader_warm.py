"""The warm grading server: same reports as a fresh grader process, concurrent workers, deadlines, private socket."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.deliver.nbgrader_course import cells, course
from autograder.deliver.nbgrader_course.private import DEFAULT_DEADLINE_S
from autograder.deliver.warm import address, client
from tests import kit

STEPS = ("softmax", "mask")


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("course")
    course.write_course(course.CourseOptions(folder=folder, kit=kit.ROOT))
    yield folder / "private"
    client.stop(cells.HANDLER, folder / "private")


def graded(submission: Path, private: Path, deadline_s: float = DEFAULT_DEADLINE_S) -> cells.Outcome:
    return cells._grade_once(submission.resolve(), STEPS, private.resolve(), deadline_s)


def test_a_warm_worker_grades_as_a_fresh_process(private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_first, warm_again = graded(kit.SOLUTIONS, private), graded(kit.SOLUTIONS, private)
    assert address.socket_path(cells.HANDLER, private).exists(), "no warm server was started"
    monkeypatch.setenv(address.ENV_SWITCH, "0")
    cold = graded(kit.SOLUTIONS, private)
    assert warm_first == warm_again == cold and not cold.failure
    assert cold.report.earned == cold.report.possible == sum(tasks.step(s).points for s in STEPS)
    stubs = graded(kit.STUBS, private)
    monkeypatch.delenv(address.ENV_SWITCH)
    assert graded(kit.STUBS, private) == stubs  # a student's run leaves nothing behind for the next


def test_concurrent_workers_each_get_their_own_report(private: Path) -> None:
    """Four requests at once (two workers and more): each fork-server clone answers only its own worker."""
    folders = [kit.SOLUTIONS, kit.STUBS, kit.SOLUTIONS, kit.STUBS]
    with ThreadPoolExecutor(len(folders)) as pool:
        outcomes = list(pool.map(lambda folder: graded(folder, private), folders))
    assert [o.report.earned for o in outcomes] == [sum(tasks.step(s).points for s in STEPS), 0.0] * 2
    assert [Path(o.report.submission) for o in outcomes] == [f.resolve() for f in folders]


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
    monkeypatch.setattr(client, "socket_path", lambda *_: shared / address.SOCKET)
    with pytest.raises(address.WarmUnavailable, match="not a private folder"):
        client._warm(cells.HANDLER, {}, private, 10, 1)
    outcome = graded(kit.SOLUTIONS, private)  # the cell grades in a fresh process instead
    assert not outcome.failure and outcome.report.steps
    assert not (shared / address.SOCKET).exists()


def test_each_course_handler_and_kit_gets_its_own_server(
    private: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = address.socket_path(cells.HANDLER, private)
    assert address.socket_path(cells.HANDLER, tmp_path) != first
    assert address.socket_path("autograder.deliver.batch.job", private) != first
    assert first.parent.name.startswith(f"attnlab-{os.getuid()}-")
    monkeypatch.setattr(address, "kit_digest", lambda: "a-changed-kit")
    assert address.socket_path(cells.HANDLER, private) != first


def test_a_broken_request_is_a_grader_failure_not_a_crash(private: Path) -> None:
    outcome = client.grade(cells.HANDLER, {"steps": []}, deadline_s=60, stop_grace_s=1, scope=private)
    assert isinstance(outcome, client.GraderFailed) and "folder" in outcome.detail


def _server_maps(socket_path: Path) -> str:
    """The memory map of the warm server listening at ``socket_path`` (found by its command line)."""
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if os.fsencode(socket_path) in command and any(b"import serve as run" in part for part in command):
            return (entry / "maps").read_text(encoding="utf-8", errors="replace")
    raise AssertionError(f"no warm server serves {socket_path}")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the server's memory map from /proc")
def test_the_server_loads_torch_only_where_its_workers_compute_with_it(private: Path) -> None:
    """In the namespaces layer the checks' torch runs in the oracle's sandbox child, so no worker imports torch and
    the server does not load it for them; elsewhere the workers compute with it and find it loaded."""
    from autograder.judge import oracle
    from autograder.sandbox.isolation import choose

    assert not graded(kit.SOLUTIONS, private).failure
    loaded = "libtorch" in _server_maps(address.socket_path(cells.HANDLER, private))
    assert loaded is not oracle.boxed(choose())
