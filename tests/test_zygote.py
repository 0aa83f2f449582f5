"""The sandbox's fork server: children start preloaded, isolated from each other, and without it all still works."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from autograder.sandbox import environment, isolation, zygote
from autograder.sandbox import outcome as out
from autograder.sandbox.client import Sandbox, prestart
from autograder.sandbox.isolation import Level
from tests import layers

PROBE = """
import os, sys
import numpy

def facts():
    return {
        "torch_preloaded": "torch" in sys.modules,
        "own_session": os.getsid(0) == os.getpid(),
        "cwd_is_home": os.getcwd() == os.environ.get("HOME"),
        "env": sorted(os.environ),
        "uid": os.getuid(),
    }

def mark_numpy():
    numpy.MARKED_BY_STUDENT = True
    return True

def numpy_marked():
    return hasattr(numpy, "MARKED_BY_STUDENT")

def segfault():
    import faulthandler
    faulthandler._sigsegv()  # a crash in native code (ctypes itself is refused once student code runs)

def hard_exit():
    os._exit(7)

def unaudited_left():
    # every module name still bound to a function that starts or signals a process without an audit event
    names = {"fork", "forkpty", "fork_exec", "pidfd_open", "pidfd_send_signal", "mkfifo", "mknod"}
    left = []
    for module_name, module in list(sys.modules.items()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            builtin = type(value).__name__ == "builtin_function_or_method"
            if builtin and value.__name__ in names and value.__module__ in ("posix", "_posixsubprocess", "_signal"):
                left.append(f"{module_name}.{name}")
    return sorted(left)
"""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


@pytest.fixture(params=layers.testable(), ids=lambda level: level.label)
def level(request: pytest.FixtureRequest) -> Level:
    return request.param


def test_children_are_forked_preloaded_in_their_own_session_and_folder(folder: Path, level: Level) -> None:
    prestart(torch=True, level=level)  # replaces a fork server an earlier numpy-only grading started without torch
    with Sandbox(folder, isolation=level) as box:
        facts = box.call("probe", "facts")
        assert box._child is not None and box._child._server is zygote.shared(level)
    assert facts["torch_preloaded"] and facts["own_session"] and facts["cwd_is_home"]
    home = environment.HOME if level == Level.NAMESPACES else "/"
    assert facts["env"] == sorted(environment.child_env(home))
    if isolation.running_as_root() and level > Level.HOOK:
        assert facts["uid"] != 0, "student code ran as root"


def test_what_one_child_changes_never_reaches_the_next(folder: Path, level: Level) -> None:
    with Sandbox(folder, isolation=level) as first:
        assert first.call("probe", "mark_numpy") and first.call("probe", "numpy_marked")
    with Sandbox(folder, isolation=level) as second:
        assert not second.call("probe", "numpy_marked")


def test_exit_statuses_come_back_through_the_fork_server(folder: Path, level: Level) -> None:
    with Sandbox(folder, isolation=level) as box:
        assert box.run_call("probe", "segfault") == out.Crashed("SIGSEGV")
        assert box.run_call("probe", "hard_exit") == out.Exited(7)
        assert box.call("probe", "numpy_marked") is False  # a fresh child after each death


@pytest.mark.parametrize("torch", [False, True], ids=["numpy server", "torch server"])
def test_a_child_holds_no_function_that_starts_processes_unheard(folder: Path, level: Level, torch: bool) -> None:
    """The fork server notes where its modules hold them (autograder.sandbox.unaudited.prepare); each child replaces
    those and reads every module loaded since, before student code runs."""
    if torch:
        prestart(torch=True, level=level)
    elif zygote._running(level, False) is None:  # shared() hands a numpy step the torch server when that one runs
        zygote._shared[(level, False)] = zygote.Zygote(level, zygote.PRELOAD)
    with Sandbox(folder, isolation=level, torch=torch) as box:
        assert box.call("probe", "facts")["torch_preloaded"] is torch
        assert box.call("probe", "unaudited_left") == []


def test_a_dead_fork_server_is_replaced(folder: Path, level: Level) -> None:
    server = zygote.shared(level)
    assert server is not None and server.alive()
    os.killpg(server._proc.pid, signal.SIGKILL)
    server._proc.wait()
    with Sandbox(folder, isolation=level) as box:
        np.testing.assert_equal(box.call("probe", "numpy_marked"), False)
    assert zygote.shared(level) is not server and zygote.shared(level).alive()


def test_without_the_fork_server_children_start_directly(
    folder: Path, level: Level, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(zygote.ENV_SWITCH, "0")
    with Sandbox(folder, isolation=level) as box:
        facts = box.call("probe", "facts")
        assert box._child is not None and box._child._process is not None
        assert box.run_call("probe", "hard_exit") == out.Exited(7)
    assert facts["own_session"] and facts["cwd_is_home"]


def test_a_forked_grader_talks_to_the_shared_fork_server_on_its_own_channel(folder: Path, level: Level) -> None:
    """Warm and batch graders fork workers that share one fork server: each gets its own conversation."""
    server = zygote.shared(level)
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with Sandbox(folder, isolation=level) as box:
                    code = 0 if box.call("probe", "numpy_marked") is False else 2
            finally:
                os._exit(code)
        pids.append(pid)
    assert [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids] == [0, 0]
    assert server.alive() and zygote.shared(level) is server


def test_the_grader_preloads_torch_only_for_torch_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine._preload_torch overlaps the reference's torch import with the first steps; steps whose graders need
    no torch never pay for it (timing's measurements run in the sandbox)."""
    from autograder.base import tasks
    from autograder.grading import engine

    started: list[str] = []

    class Recorder:
        def __init__(self, target, name, daemon) -> None:
            started.append(target.__name__)

        def start(self) -> None:
            pass

    monkeypatch.setattr(engine.threading, "Thread", Recorder)
    monkeypatch.delitem(engine.sys.modules, "torch", raising=False)
    engine._preload_torch(("softmax", "block", "timing"))
    assert started == []
    engine._preload_torch(("softmax", "kv_cache"))
    engine._preload_torch(("gradients",))  # its hidden checks compare with torch autograd
    assert started == ["_import_torch", "_import_torch"]
    assert {s.id for s in tasks.STEPS if s.torch} == {"kv_cache", "reference_check", "toy_gpt", "timing"}
    assert {s.id for s in tasks.STEPS if s.grader_uses_torch} == {"kv_cache", "reference_check", "toy_gpt", "gradients"}
    # the children of these fork from the fork server with torch (predictions: a question may run any module)
    assert {s.id for s in tasks.STEPS if s.child_uses_torch} == {
        "kv_cache",
        "reference_check",
        "toy_gpt",
        "timing",
        "predictions",
    }


def test_numpy_only_grading_does_not_preload_torch(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    level = layers.strongest()
    monkeypatch.setattr(zygote, "_shared", {})
    server = zygote.shared(level, torch=False)
    upgraded = None
    try:
        with Sandbox(folder, isolation=level) as box:
            assert box.call("probe", "facts")["torch_preloaded"] is False
        assert zygote.shared(level, torch=False) is server and zygote.shared(level) is server  # serves any step
        upgraded = zygote.shared(level, torch=True)
        assert upgraded is not server and "torch" in upgraded.preload and server.alive()
        # both stay: numpy steps fork from the one without torch, torch steps (and any step) from the other
        assert zygote.shared(level, torch=False) is server and zygote.shared(level) is upgraded
        with Sandbox(folder, isolation=level, torch=False) as box:
            assert box.call("probe", "facts")["torch_preloaded"] is False
        with Sandbox(folder, isolation=level, torch=True) as box:
            assert box.call("probe", "facts")["torch_preloaded"] is True
    finally:
        server.close()
        if upgraded is not None:
            upgraded.close()


def test_children_run_on_the_cpus_they_are_given(folder: Path, level: Level) -> None:
    """The timing lane's children get a CPU of their own (autograder.grading.lanes); every layer pins them."""
    (folder / "cpus.py").write_text("import os\n\ndef cpus():\n    return sorted(os.sched_getaffinity(0))\n")
    every = sorted(os.sched_getaffinity(0))
    with Sandbox(folder, isolation=level) as box:
        assert box.call("cpus", "cpus") == every
    with Sandbox(folder, isolation=level, cpus=(every[-1],)) as box:
        assert box.call("cpus", "cpus") == [every[-1]]


def test_numpy_steps_fork_without_torch_unless_the_submission_uses_torch_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A numpy step's child forks from the server without torch; a softmax written with torch (a valid
    alternative) gets the server with torch, so its calls do not pay torch's import."""
    from autograder.grading import engine
    from tests import kit

    made: list[bool | None] = []

    class Recorded(Sandbox):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self.torch)

    monkeypatch.setattr(engine, "Sandbox", Recorded)
    monkeypatch.setenv("ATTNLAB_SKIP_UNTOUCHED", "0")  # the stubs' checks run (autograder.handin.pristine)
    assert not engine.mentions_torch(kit.SOLUTIONS) and not engine.mentions_torch(kit.STUBS)
    kit.grade(kit.STUBS, steps=("softmax", "kv_cache"), public_only=True)
    assert made == [False, True]
    (tmp_path / "softmax.py").write_text(
        "import torch\n\n\ndef softmax(x, axis=-1):\n    return torch.softmax(x, axis)\n"
    )
    assert engine.mentions_torch(tmp_path)
    made.clear()
    kit.grade(tmp_path, steps=("softmax",), public_only=True)
    assert made == [True]


# -- the remembered bubblewrap probe (autograder.sandbox.probecache) ------------------------------------------------
def test_a_working_probe_is_remembered_privately(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder.sandbox import probecache

    where = tmp_path / "attnlab"
    monkeypatch.setattr(probecache, "folder", lambda: where)
    probecache.remember("/usr/bin/bwrap", "bubblewrap /usr/bin/bwrap works (test)")
    assert where.stat().st_mode & 0o777 == 0o700
    assert probecache.remembered("/usr/bin/bwrap") == "bubblewrap /usr/bin/bwrap works (test)"
    assert probecache.remembered("/elsewhere/bwrap") is None  # another binary: another key
    where.chmod(0o770)  # a folder others may write to: its records are not believed
    assert probecache.remembered("/usr/bin/bwrap") is None
    where.chmod(0o700)
    record = where / probecache.key("/usr/bin/bwrap")
    record.chmod(0o644)  # nor a record others could have replaced
    assert probecache.remembered("/usr/bin/bwrap") is None
    record.chmod(0o600)
    probecache.forget()
    assert probecache.remembered("/usr/bin/bwrap") is None


def test_a_failed_probe_is_never_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder.sandbox import probecache

    where = tmp_path / "attnlab"
    monkeypatch.setattr(probecache, "folder", lambda: where)
    monkeypatch.setattr(isolation.bwrap, "executable", lambda: "/bin/false")
    ok, _ = isolation._probe_namespaces()
    assert not ok and probecache.remembered("/bin/false") is None
    assert not where.exists() or not any(where.iterdir())


def test_the_command_line_names_the_fork_servers_to_start_early() -> None:
    from autograder.cli import early

    assert early._steps(["grade", "lab", "--step", "softmax", "--step=kv_cache"]) == ("softmax", "kv_cache")
    assert early._steps(["grade", "lab"]) is None  # every step
    assert early._steps(["grade", "--help"]) == () and early._steps(["stubs"]) == ()
    assert early._steps(["grade", "--step", "nonsense"]) == ()  # the real parser refuses it: nothing starts
