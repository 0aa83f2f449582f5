"""The keeper's count of a child's CPU time (``Sandbox.child_cpu_ns``): out of student code's reach, and it counts
work wherever the child moves it (a thread, a process it waits for, one it leaves running); at every layer.

No test asserts a wall time: each compares CPU seconds the child was asked to burn with what the keeper counted,
with a generous margin below (a busy machine slows the burning, never shortens it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path

import pytest

from autograder.sandbox import cpuclock
from autograder.sandbox.client import Limits, Sandbox
from tests import layers

BURN_S = 0.3
COUNTED = 0.8  # at least this share of the burned CPU seconds is counted (ticks: reaped processes, 10 ms)

BURNS = """
import multiprocessing, os, stat, subprocess, sys, threading, time


def spin(seconds):
    started = time.thread_time()
    while time.thread_time() - started < seconds:
        pass
    return 1


def in_a_thread(seconds):
    worker = threading.Thread(target=spin, args=(seconds,))
    worker.start()
    worker.join()
    return 1


CHILD = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < %r: pass\\n"


def in_a_subprocess(seconds):
    subprocess.run([sys.executable, "-c", CHILD % seconds], check=True)
    return 1


def in_a_forked_child(seconds):
    worker = multiprocessing.get_context("fork").Process(target=spin, args=(seconds,))
    worker.start()
    worker.join()
    return 1


def in_a_process_left_running(seconds):
    subprocess.Popen([sys.executable, "-c", CHILD % seconds + "time.sleep(60)\\n"])
    time.sleep(seconds * 3)  # it burns meanwhile, and is still alive when the keeper is asked
    return 1


def lies_about_its_clocks():
    probe = sys.modules.get("autograder.sandbox.probes.timing")
    if probe is not None:
        probe._CPU_NS = lambda: 0
    time.thread_time_ns = time.process_time_ns = lambda: 0
    return 1


def sockets():
    return [fd for fd in range(1024) if _is_socket(fd)]


def _is_socket(fd):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False
"""

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper counts CPU time on Linux")


def _box(folder: Path, level: object, hook: bool = True) -> Sandbox:
    return Sandbox(folder, Limits(call_timeout_s=20, audit_hook=hook), isolation=level)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("burns")
    (folder / "burns.py").write_text(BURNS)
    return folder


def _counted(box: Sandbox, function: str, *args: object) -> float:
    """The CPU seconds the keeper counted for one call (the child already runs)."""
    before = box.child_cpu_ns()
    box.call("burns", function, *args)
    after = box.child_cpu_ns()
    assert before is not None and after is not None
    return (after - before) / 1e9


@linux_only
def test_the_clock_id_is_libcs() -> None:
    """``cpuclock.process_clock`` is what glibc's ``clock_getcpuclockid`` gives (the keeper makes no foreign call)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    clock = ctypes.c_int()
    assert libc.clock_getcpuclockid(os.getpid(), ctypes.byref(clock)) == 0
    assert cpuclock.process_clock(os.getpid()) == clock.value
    assert cpuclock.process_clock(os.getpid()) != cpuclock.process_clock(os.getpid() + 1)


@linux_only
@pytest.mark.parametrize("level", layers.testable(), ids=lambda level: level.label)
def test_work_in_the_student_process_and_its_threads_is_counted(folder: Path, level: object) -> None:
    with _box(folder, level) as box:
        assert box.child_cpu_ns() is None  # no child yet
        box.call("burns", "spin", 0.0)
        assert _counted(box, "spin", BURN_S) >= COUNTED * BURN_S
        assert _counted(box, "in_a_thread", BURN_S) >= COUNTED * BURN_S
        box.call("burns", "lies_about_its_clocks")  # the child's own clocks are not the keeper's
        assert _counted(box, "spin", BURN_S) >= COUNTED * BURN_S


@linux_only
@pytest.mark.parametrize("level", layers.testable(), ids=lambda level: level.label)
def test_work_in_other_processes_is_counted(folder: Path, level: object) -> None:
    """The audit hook refuses every way to start a process; without it (as the attack suite proves the OS
    layers), work moved into a process is still counted: reaped (its parent's reaped time) or still running."""
    with _box(folder, level, hook=False) as box:
        box.call("burns", "spin", 0.0)
        for function in ("in_a_subprocess", "in_a_forked_child", "in_a_process_left_running"):
            assert _counted(box, function, BURN_S) >= COUNTED * BURN_S, function


@linux_only
@pytest.mark.parametrize("level", layers.testable(), ids=lambda level: level.label)
def test_only_the_grader_can_ask(folder: Path, level: object) -> None:
    """The student process holds no socket (the keeper's control socket is closed before student code runs), and
    a byte the keeper does not know is ignored: it still answers, and the child still serves."""
    with _box(folder, level) as box:
        assert box.call("burns", "sockets") == []
        box._child.control.sendall(b"x\x00?")  # type: ignore[union-attr]
        assert isinstance(box.child_cpu_ns(), int)
        assert box.call("burns", "spin", 0.0) == 1


def test_no_count_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpuclock.sys, "platform", "darwin")
    assert cpuclock.tree_ns() is None
