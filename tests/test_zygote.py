"""The sandbox's fork server: children start preloaded, isolated from each other, and without it all still works."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from autograder.sandbox import client, zygote
from autograder.sandbox.client import Sandbox, StudentCallError

PROBE = """
import os, sys
import numpy

def facts():
    return {
        "torch_preloaded": "torch" in sys.modules,
        "own_session": os.getsid(0) == os.getpid(),
        "cwd_is_home": os.getcwd() == os.environ.get("HOME") == os.environ.get("TMPDIR"),
        "env": sorted(os.environ),
    }

def mark_numpy():
    numpy.MARKED_BY_STUDENT = True
    return True

def numpy_marked():
    return hasattr(numpy, "MARKED_BY_STUDENT")

def segfault():
    import ctypes
    return ctypes.string_at(0)

def hard_exit():
    os._exit(7)
"""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


def test_children_are_forked_preloaded_in_their_own_session_and_folder(folder: Path) -> None:
    zygote.prestart(torch=True)  # replaces a fork server an earlier numpy-only grading started without torch
    with Sandbox(folder) as box:
        facts = box.call("probe", "facts")
        assert isinstance(box._proc, zygote.ForkedChild)
    assert facts["torch_preloaded"] and facts["own_session"] and facts["cwd_is_home"]
    assert facts["env"] == sorted(client.child_env(folder))


def test_what_one_child_changes_never_reaches_the_next(folder: Path) -> None:
    with Sandbox(folder) as first:
        assert first.call("probe", "mark_numpy") and first.call("probe", "numpy_marked")
    with Sandbox(folder) as second:
        assert not second.call("probe", "numpy_marked")


def test_exit_statuses_come_back_through_the_fork_server(folder: Path) -> None:
    with Sandbox(folder) as box:
        for function, expected in (
            ("segfault", client.KILLED_BY_SIGNAL.format(signal="SIGSEGV", meaning="segmentation fault")),
            ("hard_exit", client.EXITED.format(code=7)),
        ):
            with pytest.raises(StudentCallError) as caught:
                box.call("probe", function)
            assert caught.value.reason == expected
        assert box.call("probe", "numpy_marked") is False  # a fresh child after each death


def test_a_dead_fork_server_is_replaced(folder: Path) -> None:
    server = zygote.shared()
    assert server is not None and server.alive()
    os.killpg(server._proc.pid, signal.SIGKILL)
    server._proc.wait()
    with Sandbox(folder) as box:
        np.testing.assert_equal(box.call("probe", "numpy_marked"), False)
    assert zygote.shared() is not server and zygote.shared().alive()


def test_without_the_fork_server_children_start_directly(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(zygote.ENV_SWITCH, "0")
    with Sandbox(folder) as box:
        facts = box.call("probe", "facts")
        assert isinstance(box._proc, subprocess.Popen)
        with pytest.raises(StudentCallError) as caught:
            box.call("probe", "hard_exit")
        assert caught.value.reason == client.EXITED.format(code=7)
    assert facts["own_session"] and facts["cwd_is_home"]


def test_the_grader_preloads_torch_only_for_torch_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine._preload_torch overlaps the reference's torch import with the first steps; numpy steps never pay for
    it."""
    from autograder import engine, tasks

    started: list[str] = []

    class Recorder:
        def __init__(self, target, args, name, daemon) -> None:
            started.append(args[0])

        def start(self) -> None:
            pass

    monkeypatch.setattr(engine.threading, "Thread", Recorder)
    monkeypatch.delitem(engine.sys.modules, "torch", raising=False)
    engine._preload_torch(("softmax", "block"))
    assert started == []
    engine._preload_torch(("softmax", "kv_cache"))
    assert started == ["torch"]
    assert {s.id for s in tasks.STEPS if s.torch} == {"kv_cache", "reference_check", "toy_gpt", "timing"}


def test_numpy_only_grading_does_not_preload_torch(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zygote, "_shared", None)
    server = zygote.shared(torch=False)
    try:
        with Sandbox(folder) as box:
            assert box.call("probe", "facts")["torch_preloaded"] is False
        assert zygote.shared(torch=False) is server and zygote.shared() is server  # a running one serves any step
        upgraded = zygote.shared(torch=True)
        assert upgraded is not server and "torch" in upgraded.preload and not server.alive()
        upgraded.close()
    finally:
        server.close()
