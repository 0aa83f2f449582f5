"""The sandbox on its own: every fault becomes a StudentCallError with a clear reason, and the child recovers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder.sandbox import client
from autograder.sandbox.client import Limits, Sandbox, StudentCallError
from autograder.sandbox.protocol import AsTorch, Unsupported

FAULTS = """
import os, sys, time
import numpy as np

def ok(x):
    return np.asarray(x) * 2

def hang():
    while True:
        pass

def sleep_forever():
    time.sleep(3600)

def segfault():
    import ctypes
    return ctypes.string_at(0)

def hard_exit():
    os._exit(0)

def soft_exit():
    sys.exit(3)

def interrupt():
    raise KeyboardInterrupt

def base_exception():
    raise BaseException("odd")

def memory_hog():
    blocks = []
    while True:
        blocks.append(np.empty(10**8))

def huge_output():
    for _ in range(10**4):
        print("spam " * 1000)
    return 1

def huge_result():
    return np.zeros(10**8)

def objects():
    return np.array([object()])

def other_type():
    return {1, 2}

def read_outside(path):
    return open(path).read()

def spawn():
    import subprocess
    return subprocess.run(["true"]).returncode

def kill_parent():
    os.kill(os.getppid(), 9)

def raise_limits():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (-1, -1))

def long_string():
    return "x" * 10**6

def long_list():
    return [0.5] * (2 * 10**5)

def torch_sum(t):
    return t.sum() * 1.0
"""


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("faults")
    (folder / "faults.py").write_text(FAULTS)
    (folder / "broken.py").write_text("raise RuntimeError('broken at import')\n")
    (folder / "exits.py").write_text("import os\nos._exit(0)\n")
    with Sandbox(folder, Limits(call_timeout_s=1.5, retry_timeout_s=0.5, memory_bytes=2 << 30)) as box:
        yield box


def reason(sandbox: Sandbox, function: str, *args) -> str:
    with pytest.raises(StudentCallError) as caught:
        sandbox.call("faults", function, *args)
    return caught.value.reason


def test_values_come_back(sandbox: Sandbox) -> None:
    np.testing.assert_array_equal(sandbox.call("faults", "ok", np.arange(3.0)), [0.0, 2.0, 4.0])


@pytest.mark.parametrize(
    "function, expected",
    [
        ("segfault", client.KILLED_BY_SIGNAL.format(signal="SIGSEGV", meaning="segmentation fault")),
        ("hard_exit", client.EXITED.format(code=0)),
        ("soft_exit", client.RAISED_AT.format(error="SystemExit: 3", where="faults.py, line 23")),
        ("interrupt", "raised KeyboardInterrupt"),
        ("base_exception", "raised BaseException: odd"),
        ("huge_result", client.UNSENDABLE.split(":")[0]),
        ("objects", client.UNSENDABLE.split(":")[0]),
    ],
)
def test_fault_reasons(sandbox: Sandbox, function: str, expected: str) -> None:
    assert reason(sandbox, function).startswith(expected)
    np.testing.assert_array_equal(sandbox.call("faults", "ok", 1.0), 2.0)  # and the next call works


@pytest.mark.slow
def test_hangs_time_out_and_retry_faster(sandbox: Sandbox) -> None:
    assert reason(sandbox, "hang") == client.TIMED_OUT.format(seconds=1.5)
    assert reason(sandbox, "hang") == client.TIMED_OUT.format(seconds=0.5)
    assert reason(sandbox, "sleep_forever") == client.TIMED_OUT.format(seconds=1.5)
    np.testing.assert_array_equal(sandbox.call("faults", "ok", 1.0), 2.0)


def test_memory_hog_is_stopped(sandbox: Sandbox) -> None:
    assert "MemoryError" in reason(sandbox, "memory_hog")


def test_huge_output_is_cut(sandbox: Sandbox) -> None:
    assert reason(sandbox, "huge_output").startswith("printed ")


def test_other_types_cross_as_names(sandbox: Sandbox) -> None:
    assert sandbox.call("faults", "other_type") == Unsupported("set")
    assert sandbox.call("faults", "long_string") == Unsupported("str of 1000000 characters")


def test_long_plain_results_are_refused(sandbox: Sandbox) -> None:
    assert reason(sandbox, "long_list").startswith(client.UNSENDABLE.split(":")[0])


def test_import_errors_are_remembered(sandbox: Sandbox) -> None:
    for _ in range(2):
        with pytest.raises(StudentCallError, match=r"importing broken\.py raised RuntimeError: broken at import"):
            sandbox.call("broken", "anything")
    with pytest.raises(StudentCallError, match=r"importing exits.py ended the grading process with exit code 0"):
        sandbox.call("exits", "anything")


@pytest.mark.parametrize(
    "function, args, words",
    [
        ("read_outside", (str(Path(__file__).resolve()),), "does not allow code to read"),
        ("spawn", (), "does not allow subprocess.Popen"),
        ("kill_parent", (), "does not allow signalling other processes"),
        ("raise_limits", (), "does not allow changing resource limits"),
    ],
)
def test_policy_blocks(sandbox: Sandbox, function: str, args: tuple, words: str) -> None:
    assert words in reason(sandbox, function, *args)


def test_torch_tensors_travel(sandbox: Sandbox) -> None:
    assert float(sandbox.call("faults", "torch_sum", AsTorch(np.ones(4)))) == 4.0


def test_child_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_SECRET", "do-not-leak")
    (tmp_path / "env.py").write_text("import os\ndef secret():\n    return os.environ.get('ATTNLAB_SECRET', '')\n")
    with Sandbox(tmp_path) as box:
        assert box.call("env", "secret") == ""
