"""Typed call outcomes: how each is worded, escaping of child text, subclass-aware raises, and the report fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.base.text import escape_controls
from autograder.deliver.nbgrader_course import cells
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.judge import messages
from autograder.judge.checking import CheckFailed, Lab
from autograder.report import render
from autograder.sandbox import outcome as out
from autograder.sandbox.client import Sandbox
from tests import kit

SCALING = tasks.step("scaling")
MASK = tasks.step("mask")
ESC = "\x1b[2J\x1b[H\x1b[32mall passed\x1b[0m\r\u202e"


@pytest.mark.parametrize(
    "outcome, words",
    [
        (out.Raised("ValueError", ("ValueError", "Exception"), "bad", "scaling.py", 3), "raised ValueError: bad"),
        (out.TimedOut(10), "did not return within 10 s"),
        (out.TimedOut(10, "softmax.softmax", 4), "still running softmax.softmax, line 4"),
        (out.Skipped(out.HUNG_EARLIER, "scaling.attention", 10), "did not return within 10 s earlier in grading"),
        (out.Skipped(out.HUNG_EARLIER, "softmax.softmax", 10), "it calls softmax.softmax, which did not return"),
        (out.Skipped(out.HUNG_EARLIER, "softmax.<module>", 30), "importing softmax.py did not finish within 30 s"),
        (out.Skipped(out.BUDGET_SPENT, seconds=61.5), "already took 61.5 s, its time budget"),
        (out.Crashed("SIGSEGV"), "signal SIGSEGV (segmentation fault)"),
        (out.Exited(0), "exit code 0 (os._exit"),
        (out.Refused("os.fork"), "tried something the grading sandbox does not allow (os.fork)"),
        (out.TooLarge(64 << 20), "more data than the grader accepts (64 MiB)"),
        (out.TooMuchOutput(2_000_000, 1_000_000), "printed 2000000 characters"),
        (out.Malformed("bad array count"), "your code returned something the grader cannot read (bad array count)"),
        (out.ImportFailed("mask", out.Exited(3)), "could not run because importing mask.py ended the grading process"),
    ],
    ids=lambda value: value.kind if isinstance(value, out._Escaped) else "",
)
def test_every_outcome_is_worded(outcome: out.Failure, words: str) -> None:
    text = messages.call_outcome(outcome, "attention", SCALING, "scaling.attention")
    assert words in text, text
    if not isinstance(outcome, out.Malformed):
        assert text.startswith("attention ")


def test_an_error_in_another_steps_module_names_that_module_and_step_first() -> None:
    raised = out.Raised("ValueError", ("ValueError",), "shapes differ", "scaling.py", 40, ("mask.py", "scaling.py"))
    text = messages.call_outcome(raised, "causal_mask", MASK, "mask.causal_mask")
    assert text.startswith("the error is in scaling.py (step 'Scaled dot-product attention'), line 40: ")
    assert text.endswith("causal_mask raised ValueError: shapes differ")
    assert messages.call_outcome(raised, "attention", SCALING).startswith("attention raised ValueError")


def test_child_text_is_escaped_once_where_it_enters() -> None:
    raised = out.Raised(ESC, (ESC, "Exception"), ESC, ESC, 1, (ESC,), output=ESC)
    for text in (raised.type_name, raised.message, raised.file, raised.output, *raised.mro, *raised.student_files):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert escape_controls(text) == text  # escaping again changes nothing
    assert raised.message == "\\x1b[2J\\x1b[H\\x1b[32mall passed\\x1b[0m\\x0d\\u202e"
    assert escape_controls("line one\n\ttabbed, ünïcödé, 注意") == "line one\n\ttabbed, ünïcödé, 注意"


def test_escaped_messages_reach_every_renderer_without_escapes() -> None:
    raised = out.Raised("ValueError", ("ValueError",), ESC, "softmax.py", 2)
    message = messages.failure(tasks.step("softmax"), "softmax(x)", "a result", messages.call_outcome(raised, "f"))
    check = CheckResult("softmax", "test_x", "A check", 1.0, False, False, message)
    report = GradeReport("folder", (StepResult(tasks.step("softmax"), (check,)),), False, 1, isolation="namespaces")
    rendered = [render.table(report), render.gradescope_json(report), json.dumps(render.gradescope(report))]
    rendered.append(cells._feedback(tasks.step("softmax"), report, report.steps[0], 0.0, "", public_only=False))
    for text in rendered:
        assert "\x1b" not in text and "\\u001b" not in text and "\r" not in text
    assert (
        "isolation: namespaces" in rendered[0] and render.gradescope(report)["extra_data"]["isolation"] == "namespaces"
    )


ATTENTION = """
import numpy as np

class ShapeError(ValueError):
    pass

def attention(Q, K, V, mask=None):
    if Q.shape[-1] != K.shape[-1]:
        raise ShapeError(f"Q and K have different widths d_k: {Q.shape[-1]} and {K.shape[-1]}")
    raise TypeError("not a shape problem at all")
"""


def test_a_subclass_of_the_expected_exception_counts(tmp_path: Path) -> None:
    import numpy as np

    (tmp_path / "scaling.py").write_text(ATTENTION)
    with Sandbox(tmp_path) as box:
        lab = Lab(box, SCALING)
        lab.raises(
            "attention", np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)), text="t", keywords=["d_k"], problem="p"
        )
        with pytest.raises(CheckFailed) as caught:
            lab.raises("attention", np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), text="t", keywords=["d_k"],
                       problem="p")  # fmt: skip
    assert isinstance(caught.value.outcome, out.Raised) and caught.value.outcome.type_name == "TypeError"
    assert caught.value.function == "scaling.attention"


def test_the_report_says_why_calls_failed_and_where_student_code_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_SKIP_UNTOUCHED", "0")  # the stub's checks run (autograder.handin.pristine)
    report = kit.grade(kit.STUBS, steps=("softmax",), public_only=True)
    assert report.isolation in ("namespaces", "user", "hook")
    failures = {c.call_failure for c in report.step("softmax").checks if c.call_failure is not None}
    assert failures and all(f.kind == "raised" and f.function == "softmax" for f in failures)
    assert all(f.exception_type == "NotImplementedError" and "RuntimeError" in f.exception_mro for f in failures)


def test_a_child_that_cannot_be_confined_is_the_machines_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No student code runs, and the report says the grader failed (exit 3), not that the student did."""
    from autograder.sandbox import launcher

    monkeypatch.setattr(launcher, "student_ids", lambda level: (-1, -1))  # setuid(-1) always fails
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    with Sandbox(tmp_path) as box:
        found = box.run_call("m", "f")
    assert isinstance(found, out.ImportFailed) and isinstance(found.cause, out.Refused) and found.cause.isolation
    assert "could not isolate it" in messages.call_outcome(found, "f")
    report = kit.grade(kit.SOLUTIONS, steps=("softmax",), public_only=True)
    assert report.internal_errors == len(report.step("softmax").checks) and report.earned == 0
