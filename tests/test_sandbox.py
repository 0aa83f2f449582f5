"""The sandbox on its own: every fault becomes a typed outcome, and the child recovers; at every isolation layer."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from autograder.sandbox import outcome as out
from autograder.sandbox.client import Limits, Sandbox, StudentCallError
from autograder.sandbox.isolation import Level
from autograder.sandbox.protocol import AsTorch, Unsupported
from tests import kit, layers

FAULTS = """
import os, signal, sys, time
import numpy as np

class ShapeError(ValueError):
    pass

def ok(x):
    return np.asarray(x) * 2

def hang():
    while True:
        pass

def sleep_forever():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)

def calls_hang():
    return hang()

def slow(seconds):
    time.sleep(seconds)
    return 1

def segfault():
    import faulthandler
    faulthandler._sigsegv()  # a crash in native code (ctypes itself is refused once student code runs)

def hard_exit():
    os._exit(0)

def soft_exit():
    sys.exit(3)

def interrupt():
    raise KeyboardInterrupt

def base_exception():
    raise BaseException("odd")

def shape_error():
    raise ShapeError("q and k have different sizes")

def escapes():
    print("\\x1b[2J\\x1b[H all full")
    raise ValueError("\\x1b[31mred\\x1b[0m \\r overwritten \\u202e")

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

def deep_list():
    value = []
    for _ in range(100):
        value = [value]
    return value

def torch_sum(t):
    return t.sum() * 1.0
"""


@pytest.fixture(scope="module", params=layers.testable(), ids=lambda level: level.label)
def sandbox(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("faults")
    (folder / "faults.py").write_text(FAULTS)
    (folder / "broken.py").write_text("raise RuntimeError('broken at import')\n")
    (folder / "exits.py").write_text("import os\nos._exit(0)\n")
    with Sandbox(folder, Limits(call_timeout_s=1.5, memory_bytes=2 << 30), isolation=request.param) as box:
        yield box


def outcome_of(sandbox: Sandbox, function: str, *args) -> out.Outcome:
    return sandbox.run_call("faults", function, *args)


def test_values_come_back(sandbox: Sandbox) -> None:
    np.testing.assert_array_equal(sandbox.call("faults", "ok", np.arange(3.0)), [0.0, 2.0, 4.0])


@pytest.mark.parametrize(
    "function, expected",
    [
        ("segfault", out.Crashed("SIGSEGV")),
        ("hard_exit", out.Exited(0)),
        ("interrupt", out.Raised("KeyboardInterrupt", ("KeyboardInterrupt", "BaseException", "object"), "")),
        ("base_exception", out.Raised("BaseException", ("BaseException", "object"), "odd")),
        ("huge_result", out.TooLarge(64 << 20)),
    ],
)
def test_fault_outcomes(sandbox: Sandbox, function: str, expected: out.Outcome) -> None:
    found = outcome_of(sandbox, function)
    if isinstance(expected, out.Raised):  # where it was raised is checked below
        assert (found.type_name, found.mro, found.message) == (expected.type_name, expected.mro, expected.message)
    else:
        assert found == expected
    np.testing.assert_array_equal(sandbox.call("faults", "ok", 1.0), 2.0)  # and the next call works


def test_an_exception_names_where_it_was_raised(sandbox: Sandbox) -> None:
    found = outcome_of(sandbox, "soft_exit")
    assert isinstance(found, out.Raised) and found.type_name == "SystemExit" and found.message == "3"
    assert (found.file, found.student_files) == ("faults.py", ("faults.py",))
    assert FAULTS.splitlines()[found.line - 1].strip() == "sys.exit(3)"


def test_a_subclass_counts_as_its_base(sandbox: Sandbox) -> None:
    found = outcome_of(sandbox, "shape_error")
    assert found.type_name == "ShapeError" and found.raised_as("ValueError") and not found.raised_as("TypeError")


def test_text_from_the_child_arrives_escaped(sandbox: Sandbox) -> None:
    found = outcome_of(sandbox, "escapes")
    for text in (found.message, found.output):
        assert not any(ord(c) < 32 and c not in "\n\t" for c in text) and "\u202e" not in text
    assert "\\x1b[31mred" in found.message and "\\x0d" in found.message and "\\u202e" in found.message
    assert "\\x1b[2J" in found.output


@pytest.mark.slow
def test_a_hung_function_is_not_called_again(sandbox: Sandbox) -> None:
    timed_out = outcome_of(sandbox, "hang")
    assert timed_out == out.TimedOut(1.5, "faults.hang", timed_out.line)
    started = time.monotonic()
    assert outcome_of(sandbox, "hang") == out.Skipped(out.HUNG_EARLIER, "faults.hang", 1.5)
    reached = outcome_of(sandbox, "calls_hang")  # a later child's copy of hang() fails at once
    assert reached == out.Skipped(out.HUNG_EARLIER, "faults.hang", 1.5)
    assert time.monotonic() - started < 1.5
    ignores_sigterm = outcome_of(sandbox, "sleep_forever")
    assert isinstance(ignores_sigterm, out.TimedOut) and ignores_sigterm.function == "faults.sleep_forever"
    np.testing.assert_array_equal(sandbox.call("faults", "ok", 1.0), 2.0)


def test_a_step_stops_calling_once_its_time_budget_is_spent(tmp_path: Path) -> None:
    (tmp_path / "faults.py").write_text(FAULTS)
    with Sandbox(tmp_path, Limits(step_budget_s=0.5)) as box:
        assert box.call("faults", "slow", 0.6) == 1
        skipped = box.run_call("faults", "ok", 1)
    assert isinstance(skipped, out.Skipped) and skipped.reason == out.BUDGET_SPENT and skipped.seconds >= 0.5


def test_memory_hog_is_stopped(sandbox: Sandbox) -> None:
    found = outcome_of(sandbox, "memory_hog")
    assert isinstance(found, out.Raised) and found.raised_as("MemoryError")


def test_huge_output_is_cut(sandbox: Sandbox) -> None:
    found = outcome_of(sandbox, "huge_output")
    assert isinstance(found, out.TooMuchOutput) and found.chars > found.limit_chars == 1_000_000


def test_other_types_cross_as_names(sandbox: Sandbox) -> None:
    assert sandbox.call("faults", "other_type") == Unsupported("set")
    assert sandbox.call("faults", "long_string") == Unsupported("str of 1000000 characters")


@pytest.mark.parametrize("function", ["objects", "long_list", "deep_list"])
def test_values_the_grader_cannot_read_are_malformed(sandbox: Sandbox, function: str) -> None:
    assert isinstance(outcome_of(sandbox, function), out.Malformed)


def test_import_errors_are_remembered(sandbox: Sandbox) -> None:
    for _ in range(2):
        with pytest.raises(StudentCallError) as caught:
            sandbox.call("broken", "anything")
        failed = caught.value.outcome
        assert isinstance(failed, out.ImportFailed) and failed.module == "broken"
        assert failed.cause.type_name == "RuntimeError" and failed.cause.message == "broken at import"
    assert sandbox.run_call("exits", "anything") == out.ImportFailed("exits", out.Exited(0))


@pytest.mark.parametrize(
    "function, args, words",
    [
        ("read_outside", (str(Path(__file__).resolve()),), "does not allow code to read"),
        ("spawn", (), "does not allow subprocess.Popen"),
        ("kill_parent", (), "does not allow signalling other processes"),
        ("raise_limits", (), "does not allow changing resource limits"),
    ],
)
def test_policy_refusals(sandbox: Sandbox, function: str, args: tuple, words: str) -> None:
    found = outcome_of(sandbox, function, *args)
    if function == "read_outside" and isinstance(found, out.Raised) and sandbox.isolation is Level.NAMESPACES:
        # a kit under /tmp (a CI clone) is not even mounted in the child's view: the read fails before any policy
        assert found.raised_as("FileNotFoundError") and str(kit.ROOT).startswith("/tmp/")
        return
    assert isinstance(found, out.Refused) and words in found.reason


def test_torch_tensors_travel(sandbox: Sandbox) -> None:
    assert float(sandbox.call("faults", "torch_sum", AsTorch(np.ones(4)))) == 4.0


def test_child_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_SECRET", "do-not-leak")
    (tmp_path / "env.py").write_text("import os\ndef secret():\n    return os.environ.get('ATTNLAB_SECRET', '')\n")
    with Sandbox(tmp_path) as box:
        assert box.call("env", "secret") == ""


def test_the_hook_layer_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder.sandbox import isolation

    monkeypatch.setenv(isolation.ENV_LEVEL, "hook")
    assert isolation.choose() == Level.HOOK
    with pytest.raises(isolation.IsolationRefused, match=r"needs isolation namespaces.*ATTNLAB_ISOLATION=hook"):
        isolation.choose(Level.NAMESPACES)
