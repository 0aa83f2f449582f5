"""Grading in lanes: the steps that measure time on a CPU of their own, alongside the others; the same report."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.grading import engine, lanes
from autograder.handin import pristine
from autograder.sandbox import client
from tests import kit

EVERY_CPU = sorted(os.sched_getaffinity(0))
STEPS = ("softmax", "timing", "predictions")
two_cpus = pytest.mark.skipif(len(EVERY_CPU) < 2, reason="lanes need two CPUs")
FRESH = "ATTNLAB_TEST_LANES_FRESH"  # set in the fresh pytest process a lane test reruns itself in


def thread_free(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` where no other thread runs: lanes fork only then, and an earlier test of the session may have
    left threads behind (a progress bar's monitor, a cluster's workers). Where one runs, the test reruns itself
    in a fresh pytest process and passes or fails with it."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs) -> None:
        if os.environ.get(FRESH) == "1" or threading.active_count() == 1:
            return test(*args, **kwargs)
        node = f"{Path(__file__).resolve()}::{test.__name__}"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node],
            env={**os.environ, FRESH: "1"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{node} in a fresh process:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"

    return wrapper


@pytest.fixture(autouse=True)
def no_preload_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """An earlier test's grading may still be importing torch in its preload thread; lanes fork only once no other
    thread runs, so these tests wait for it. The stubs' checks run (untouched steps would be reported without a
    lane, :mod:`autograder.handin.pristine`)."""
    monkeypatch.setenv(pristine.ENV_SWITCH, "0")
    for thread in threading.enumerate():
        if thread.name == "attnlab-torch-preload":
            thread.join(timeout=120)


def outcomes(report) -> list[tuple[str, str, bool, float]]:
    return [(s.step.id, c.name, c.passed, c.points) for s in report.steps for c in s.checks]


def test_the_plan_puts_the_steps_that_measure_time_in_a_lane_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {s.id for s in tasks.STEPS if s.measures_time} == {"timing"}
    monkeypatch.delenv(lanes.ENV_SWITCH, raising=False)
    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    count, left = threading.active_count, threading.active_count() - 1  # threads an earlier test left running
    monkeypatch.setattr(lanes.threading, "active_count", lambda: count() - left)  # the plan sees only this test's
    assert lanes.plan(STEPS) == lanes.Plan(
        main=("softmax", "predictions"), timed=("timing",), reserved=(2,), others=(0, 1)
    )
    assert lanes.plan(("softmax", "mask")) is None and lanes.plan(("timing",)) is None  # nothing to overlap
    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda pid: {0})
    assert lanes.plan(STEPS) is None  # one CPU: nothing to spare
    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv(lanes.ENV_SWITCH, "0")
    assert lanes.plan(STEPS) is None
    monkeypatch.delenv(lanes.ENV_SWITCH)
    assert lanes.plan(STEPS) is not None
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert lanes.plan(STEPS) is None  # no fork while another thread runs
    finally:
        release.set()
        other.join()


@two_cpus
@thread_free
def test_the_timing_lane_has_a_cpu_no_other_child_uses_and_grades_as_one_lane_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "sandboxes.jsonl"

    class Recorded(client.Sandbox):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            with record.open("a", encoding="utf-8") as file:  # the lane is a fork: it appends here too
                file.write(json.dumps({"pid": os.getpid(), "cpus": self.cpus}) + "\n")

    monkeypatch.delenv(lanes.ENV_SWITCH, raising=False)
    monkeypatch.setattr(engine, "Sandbox", Recorded)
    laned = kit.grade(kit.SOLUTIONS, steps=STEPS)
    made = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    timed = [m["cpus"] for m in made if m["pid"] != os.getpid()]
    here = [m["cpus"] for m in made if m["pid"] == os.getpid()]
    assert timed == [EVERY_CPU[-1:]], made
    assert len(here) == 2 and all(cpus in (EVERY_CPU[:-1], None) for cpus in here), made
    assert sorted(os.sched_getaffinity(0)) == EVERY_CPU  # the grader is free again once the lane has ended
    assert laned.earned == laned.possible and [s.step.id for s in laned.steps] == list(STEPS)

    monkeypatch.setenv(lanes.ENV_SWITCH, "0")
    record.unlink()
    serial = kit.grade(kit.SOLUTIONS, steps=STEPS)
    assert outcomes(serial) == outcomes(laned)
    assert {json.loads(line)["pid"] for line in record.read_text(encoding="utf-8").splitlines()} == {os.getpid()}


@pytest.mark.parametrize("uses_torch", [False, True], ids=["numpy steps in numpy", "torch in softmax.py"])
def test_the_steps_without_torch_run_first_and_the_report_keeps_the_labs_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uses_torch: bool
) -> None:
    """While ``attnlab grade``'s torch fork server imports torch, the steps that need none run on the numpy one;
    a hand-in whose numpy steps use torch gets the torch server for every step, and the lab's order."""
    started: list[str] = []

    class Recorded(client.Sandbox):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            started.append(self.label)

    folder = tmp_path / "lab"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if uses_torch:
        with (folder / "softmax.py").open("a", encoding="utf-8") as module:
            module.write("\n# torch.softmax would do this too\n")
    monkeypatch.setenv(lanes.ENV_SWITCH, "0")
    monkeypatch.setattr(engine, "Sandbox", Recorded)
    steps = ("softmax", "kv_cache", "block", "gradients", "costs")
    report = kit.grade(folder, steps=steps)
    assert started == (list(steps) if uses_torch else ["softmax", "block", "costs", "kv_cache", "gradients"])
    assert [s.step.id for s in report.steps] == list(steps)
    assert report.earned == report.possible


@two_cpus
@thread_free
def test_a_lane_that_dies_costs_time_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lanes.ENV_SWITCH, raising=False)
    monkeypatch.setattr(lanes, "_run_lane", lambda job, cpus, write: os._exit(1))
    report = kit.grade(kit.STUBS, steps=STEPS)  # its steps are graded here instead
    monkeypatch.setenv(lanes.ENV_SWITCH, "0")
    assert outcomes(report) == outcomes(kit.grade(kit.STUBS, steps=STEPS))


@two_cpus
@thread_free
def test_broken_graders_in_the_lane_are_the_graders_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lanes.ENV_SWITCH, raising=False)
    real = engine._run_graders

    def broken(options, level, selected, still_stubbed, cpus=lambda: None, skipped=None):
        if "timing" in selected:
            raise engine.GradingError("the timing graders carry 11 points, the registry says 12")
        return real(options, level, selected, still_stubbed, cpus, skipped)

    monkeypatch.setattr(engine, "_run_graders", broken)
    with pytest.raises(engine.GradingError, match="carry 11 points"):
        kit.grade(kit.STUBS, steps=STEPS)
