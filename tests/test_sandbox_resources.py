"""The resource walls of one child: its processes and threads, its memory wherever it lives, and a function that
fails at a hang's cost; at every isolation layer this machine has, with the cgroups it gives and without them.

The audit hook is off here (it refuses processes and ctypes on its own): what is proven is the operating
system's wall. ``tests/attacks/test_resources.py`` grades the same attacks through the real commands.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.judge import messages
from autograder.sandbox import cgroup, isolation, seccomp
from autograder.sandbox import outcome as out
from autograder.sandbox.client import Limits, Sandbox
from autograder.sandbox.isolation import Level
from tests import layers

PROCESSES = 24  # the cap these tests set (Limits.processes): far below what the attacks try
MEMORY = 1 << 30  # the address space and, where a cgroup counts it, all the memory of one child
ATTACKS = Path(__file__).parent / "attacks"
WALLS = """
import os, time

import hogs
import shm


def unlinked_files(folder):
    return shm.unlinked(folder, f"hog-{os.getpid()}", 1536)


def oom_score():
    with open("/proc/self/oom_score_adj") as score:
        return int(score.read())


def lower_oom_score():
    try:
        with open("/proc/self/oom_score_adj", "w") as score:
            score.write("0")
    except OSError:
        pass
    return oom_score()


def slow_failure(seconds):
    time.sleep(seconds)
    raise ValueError("failed, slowly")


def calls_slow_failure(seconds):
    return slow_failure(seconds)


def slow_success(seconds):
    time.sleep(seconds)
    return 1


def fast_failure():
    raise ValueError("failed at once")
"""


def _folder(folder: Path) -> Path:
    """The attack suite's hogs (``tests/attacks/hogs.py``, ``shm.py``) and :data:`WALLS` in ``folder``."""
    for name, source in (("hogs.py", "hogs.py"), ("shm.py", "shm.py"), ("_attempts.py", "attempts.py")):
        shutil.copyfile(ATTACKS / source, folder / name)
    (folder / "walls.py").write_text(WALLS)
    return folder


def _settings() -> list[tuple[Level, bool]]:
    """Every layer here, with this machine's cgroups and (where it gives them) without."""
    found = [(level, False) for level in layers.testable()]
    if cgroup.support().parents:
        found = [(level, True) for level in layers.testable()] + found
    return found


@pytest.fixture(scope="module", params=_settings(), ids=lambda s: f"{s[0].label}-{'cgroups' if s[1] else 'none'}")
def box(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    level, groups = request.param
    folder = _folder(tmp_path_factory.mktemp("hogs"))
    before = os.environ.get(cgroup.ENV_SWITCH)
    os.environ[cgroup.ENV_SWITCH] = "1" if groups else "0"
    cgroup.support.cache_clear()
    limits = Limits(audit_hook=False, memory_bytes=MEMORY, processes=PROCESSES, call_timeout_s=20.0)
    try:
        with Sandbox(folder, limits, isolation=level) as sandbox:
            sandbox.groups = groups  # type: ignore[attr-defined]
            yield sandbox
    finally:
        if before is None:
            os.environ.pop(cgroup.ENV_SWITCH, None)
        else:
            os.environ[cgroup.ENV_SWITCH] = before
        cgroup.support.cache_clear()


def _capped(box: Sandbox) -> bool:
    """Whether this setting caps processes and threads: a pids cgroup, a uid or user namespace of the child's own,
    or (hook layer) RLIMIT_NPROC above the grader's uid; nothing binds root in the hook layer without a cgroup."""
    return box.groups or box.isolation > Level.HOOK or not isolation.running_as_root()  # type: ignore[attr-defined]


def test_threads_stop_at_the_cap(box: Sandbox) -> None:
    if not _capped(box):
        pytest.skip("the hook layer as root without a cgroup caps no threads (the README's walls table says so)")
    started = box.call("hogs", "threads")
    assert 0 < started < PROCESSES, started
    assert box.call("hogs", "threads", 8) == 8  # released: the next call has them again


def test_processes_stop_at_the_cap(box: Sandbox) -> None:
    if not _capped(box):
        pytest.skip("the hook layer as root without a cgroup caps no processes (the audit hook refuses them)")
    forked = box.call("hogs", "forks")
    assert 0 < forked < PROCESSES, forked


@pytest.mark.skipif(not seccomp.available()[0], reason="no seccomp filter on this machine")
@pytest.mark.parametrize("function", ["memfd", "sysv_shm", "message_queue"])
def test_memory_outside_every_limit_is_refused(box: Sandbox, function: str) -> None:
    found = box.run_call("hogs", function)
    assert isinstance(found, out.Raised) and found.raised_as("OSError"), found
    assert "Operation not permitted" in found.message or "Too many open files" in found.message, found


def test_files_a_child_holds_in_a_memory_file_system_count(box: Sandbox) -> None:
    """Files on a tmpfs, unlinked while open (no quota sees them): the namespaces layer's private ``/dev/shm`` is
    small; elsewhere the child's memory cgroup counts their pages and the kernel ends the child at its limit."""
    if box.isolation < Level.NAMESPACES and not box.groups:  # type: ignore[attr-defined]
        pytest.skip("without a memory cgroup, only the host tmpfs's own size bounds them (the README says so)")
    found = box.run_call("walls", "unlinked_files", "/dev/shm")
    if box.isolation == Level.NAMESPACES:
        assert isinstance(found, out.Raised) and "No space left" in found.message, found
    else:
        assert found == out.Crashed("SIGKILL"), found
    assert box.call("walls", "oom_score") == 1000  # the next child serves


def test_the_student_process_is_the_first_the_kernel_ends(box: Sandbox) -> None:
    assert box.call("walls", "oom_score") == 1000
    lowered = box.call("walls", "lower_oom_score")
    if isolation.running_as_root() and box.isolation > Level.HOOK:  # set with root's privilege: for good
        assert lowered == 1000
    else:  # no lower than the grader's own (student code runs as root in the hook layer as root)
        assert lowered >= 0


def test_a_classmate_keeps_its_threads_while_a_bomb_holds_them(box: Sandbox, tmp_path: Path) -> None:
    """Two children at once: one holds every thread it may have; the other still starts the threads it needs."""
    if not _capped(box):
        pytest.skip("the hook layer as root without a cgroup caps no threads")
    held = box.call("hogs", "threads", 3000, True)
    assert 0 < held < PROCESSES
    with Sandbox(_folder(tmp_path), box.limits, isolation=box.isolation) as classmate:
        assert classmate.call("hogs", "threads", 8) == 8
    box.close()  # the bomb's child ends; the next test starts a fresh one


@pytest.fixture()
def quick(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(_folder(tmp_path), Limits(failing_budget_s=1.0), isolation=layers.strongest()) as sandbox:
        yield sandbox


def test_a_function_that_fails_slowly_is_charged_once_like_a_hang(quick: Sandbox) -> None:
    failed = [quick.run_call("walls", "slow_failure", 0.4) for _ in range(3)]  # 1.2 s of failed calls: past 1 s
    assert all(isinstance(f, out.Raised) and f.message == "failed, slowly" for f in failed), failed
    again = quick.run_call("walls", "slow_failure", 0.4)
    assert isinstance(again, out.Skipped) and again.reason == out.FAILED_COSTLY, again
    assert again.function == "walls.slow_failure" and again.seconds >= 1.0
    said = messages.call_outcome(again, "slow_failure", called="walls.slow_failure")
    assert said.startswith("slow_failure was not called again: its failed calls earlier in grading took"), said
    reached = quick.run_call("walls", "calls_slow_failure", 0.4)  # a later child's copy fails at once
    assert isinstance(reached, out.Skipped) and reached.reason == out.FAILED_COSTLY
    assert reached.function == "walls.slow_failure"
    said = messages.call_outcome(reached, "calls_slow_failure", called="walls.calls_slow_failure")
    assert "it calls walls.slow_failure, whose failed calls earlier in grading took" in said, said


def test_an_honest_slow_function_and_a_quick_failure_are_never_charged(quick: Sandbox) -> None:
    assert [quick.call("walls", "slow_success", 0.3) for _ in range(5)] == [1] * 5  # 1.5 s, more than the budget
    quick_failures = [quick.run_call("walls", "fast_failure") for _ in range(40)]
    assert all(isinstance(f, out.Raised) and f.message == "failed at once" for f in quick_failures)
    assert quick.hangs.costly == {}


def test_doctor_says_which_walls_this_machine_gives(capsys: pytest.CaptureFixture[str]) -> None:
    from autograder import cli

    assert cli.main(["doctor"]) == 0
    said = capsys.readouterr().out
    assert "Resource walls of each child" in said and "oom_score_adj 1000" in said
    if cgroup.support().gives("pids"):
        assert "processes and threads: a pids cgroup per child" in said
    if cgroup.support().gives("memory"):
        assert "memory: a memory cgroup per child (wherever it lives)" in said
    if seccomp.available()[0]:
        assert "seccomp refuses memfd_create, memfd_secret, shmget, mq_open" in said
