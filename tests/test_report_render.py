"""The terminal report: the table first, failures grouped by step and cause, plain numbers, three levels of detail."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from autograder import i18n
from autograder.base import tasks
from autograder.grading.model import CallFailure, CheckResult, GradeReport, StepResult
from autograder.judge import messages
from autograder.judge.evidence import Evidence
from autograder.report import failures, render, render_terminal
from tests import kit

STUB = CallFailure("raised", "softmax", "NotImplementedError", ("NotImplementedError", "RuntimeError", "Exception"))


def check(step: str, name: str, *, passed: bool = False, points: float = 1, **fields) -> CheckResult:
    return CheckResult(step=step, name=name, title=f"title of {name}", points=points, passed=passed, hidden=False,
                       message="" if passed else fields.pop("message", f"message of {name}"), **fields)  # fmt: skip


def report(*steps: StepResult) -> GradeReport:
    return GradeReport(submission="my_lab", steps=steps, public_only=False, seed=7)


def stubbed_step(step_id: str, functions: tuple[str, ...], checks_per_function: int = 3) -> StepResult:
    return StepResult(
        tasks.step(step_id),
        tuple(
            check(step_id, f"test_{function}_{i}", call_failure=CallFailure("raised", function, "NotImplementedError"))
            for function in functions
            for i in range(checks_per_function)
        ),
    )


def test_a_stubbed_function_is_reported_once_per_step_not_once_per_check() -> None:
    text = render.table(
        report(stubbed_step("scaling", ("project", "scores", "attention")), stubbed_step("mask", ("causal_mask",)))
    )
    lines = text.splitlines()
    assert "Not implemented yet (each step's section of handouts/lab07_attention.md explains it):" in lines
    assert "  scaling.py: project, scores, attention · mask.py: causal_mask" in lines
    assert "message of" not in text and "To fix" not in text


def test_work_not_started_is_one_line_with_the_graders_words() -> None:
    waiting = [check("timing", f"test_{i}", not_started="no reports/timing.json yet") for i in range(5)]
    wrong = check("timing", "test_slope", message="the slope is off")
    text = render.table(report(StepResult(tasks.step("timing"), (*waiting, wrong))))
    assert "  timing.py: no reports/timing.json yet" in text.splitlines()
    assert text.count("no reports/timing.json yet") == 1 and "the slope is off" in text


def test_not_implemented_is_read_from_the_exception_classes_not_the_message() -> None:
    subclass = CallFailure("raised", "softmax", "MyStub", ("MyStub", "NotImplementedError", "RuntimeError"))
    other = CallFailure("raised", "softmax", "ValueError", ("ValueError", "Exception"))
    misleading = check("softmax", "test_b", call_failure=other, message="softmax raised NotImplementedError")
    grouped = failures.of_step(StepResult(tasks.step("softmax"), (check("softmax", "test_a", call_failure=subclass),
                                                                  misleading)))  # fmt: skip
    assert grouped.not_implemented == ("softmax",)
    assert [entry.check.name for entry in grouped.failures] == ["test_b"]


def test_the_table_comes_first_and_failures_follow_by_step() -> None:
    softmax = StepResult(tasks.step("softmax"), (check("softmax", "test_ok", passed=True), check("softmax", "test_x")))
    mask = StepResult(tasks.step("mask"), (check("mask", "test_y"),))
    lines = render.table(report(softmax, mask)).splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith("Total"))
    assert all(not line.startswith("  ✗") for line in lines[:total])
    assert lines.index("Softmax (1/2)") < lines.index("Causal mask (0/1)")
    assert lines[total].split()[-1] == "1/3"


def test_checks_with_the_same_mistake_are_one_entry_with_their_count() -> None:
    same = [check("softmax", f"test_{i}", points=2, mistake="softmax_wrong_axis", message=f"m{i}") for i in range(3)]
    text = render.table(report(StepResult(tasks.step("softmax"), tuple(same))))
    assert "m0" in text and "m1" not in text
    assert "(the same for 2 more checks, 6 points in all)" in text


def test_a_step_shows_a_few_failures_and_says_how_to_see_the_rest() -> None:
    many = tuple(check("costs", f"test_{i}") for i in range(6))
    text = render.table(report(StepResult(tasks.step("costs"), many)))
    shown = render_terminal.SHOWN_PER_STEP
    assert text.count("✗") == shown
    assert f"… and {6 - shown} more failed checks: attnlab grade my_lab --step costs --verbose" in text


def test_the_hint_to_see_the_rest_keeps_the_language() -> None:
    many = report(StepResult(tasks.step("costs"), tuple(check("costs", f"test_{i}") for i in range(6))))
    with i18n.using("tr"):
        assert "attnlab grade my_lab --step costs --verbose --lang tr" in render.table(many)
    assert "--verbose --lang en" in render.table(many, lang="en")  # given explicitly: repeated, whatever the default
    assert "--lang" not in render.table(many)
    assert "attnlab grade 'my lab' --step" in render.table(replace(many, submission="my lab"))
    assert "each one listed below" in render.table(many, rerun=False) and "attnlab" not in render.table(
        many, rerun=False
    )


def test_the_seed_and_isolation_line_is_under_the_table() -> None:
    lines = render.table(report(stubbed_step("softmax", ("softmax",)))).splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith("Total"))
    assert lines[total + 1] == "Hidden inputs seed: 7. Student code ran with isolation: unknown"
    assert lines[1].startswith("step")  # the table right under the heading, as the README shows it


def test_quiet_prints_the_table_only_and_verbose_every_check() -> None:
    softmax = StepResult(tasks.step("softmax"), (check("softmax", "test_ok", passed=True), check("softmax", "test_x")))
    quiet = render.table(report(softmax), render_terminal.QUIET)
    assert quiet.splitlines()[-2].startswith("Total") and "✗" not in quiet
    assert quiet.splitlines()[-1].startswith("Hidden inputs seed")
    verbose = render.table(report(softmax), render_terminal.VERBOSE)
    assert "✓ title of test_ok [1 pt]" in verbose and "✗ title of test_x [1 pt]" in verbose


def test_turkish_table_headings_and_lines() -> None:
    with i18n.using("tr"):
        text = render.table(report(stubbed_step("softmax", ("softmax",))))
    assert "adım" in text and "alınan" in text and "Toplam" in text
    assert "  softmax.py: softmax" in text.splitlines()
    assert "handouts/lab07_attention.tr.md" in text and "yazılmadı" in text


def test_gradescope_names_are_titles_and_ids_stay_the_same_in_every_language() -> None:
    graded = report(stubbed_step("mask", ("causal_mask",)))
    with i18n.using("en"):
        english = render.gradescope(graded)
    with i18n.using("tr"):
        turkish = render.gradescope(graded)
    ids = [t["extra_data"]["id"] for t in english["tests"]]
    assert ids == [t["extra_data"]["id"] for t in turkish["tests"]]
    assert ids[0] == "mask/test_causal_mask_0"
    assert english["tests"][0]["name"] == "Causal mask: title of test_causal_mask_0"
    assert turkish["tests"][0]["name"].startswith("Nedensel maske: ")
    assert english["output"] != turkish["output"] and "Toplam" in turkish["output"]


def test_numpy_scalars_print_as_plain_numbers() -> None:
    shape = (np.int64(1), np.int64(5))
    assert messages.shape(shape) == "(1, 5)"
    assert messages.short(shape) == "(1, 5)"
    assert messages.short({"n": np.float64(0.5)}) == "{'n': 0.5}"
    with messages.plain_numbers():
        assert f"random x of shape {shape}" == "random x of shape (1, 5)"
    assert messages.short(np.array([[0.175, -np.inf]])) == "array of shape (1, 2) [[0.1750, -inf]]"


def test_no_numpy_type_names_in_any_message(stubs_report: GradeReport, reference_report: GradeReport) -> None:
    for graded in (stubs_report, reference_report):
        for result in graded.steps:
            for item in result.checks:
                for text in (item.message, item.title):
                    assert "np.int" not in text and "np.float" not in text and "np.bool" not in text, text


def test_evidence_round_trips_through_json() -> None:
    expected, got = np.array([[0.5, -np.inf]]), np.array([[np.nan, 1.0]], dtype=np.float32)
    axes, ticks = ("query position", "key position"), (("kedi",), ("kedi", "sütü"))
    evidence = Evidence("softmax(x)", expected, got, axes=axes, ticks=ticks, exhibit="e")
    again = Evidence.from_dict(evidence.to_dict())
    assert again == evidence and again.got.dtype == np.float32


@pytest.mark.slow
def test_the_reference_fits_on_one_screen(reference_report: GradeReport) -> None:
    assert len(render.table(reference_report).splitlines()) < 25


@pytest.mark.slow
def test_untouched_stubs_fit_on_one_screen(stubs_report: GradeReport) -> None:
    if not any(c.call_failure for r in stubs_report.steps for c in r.checks):
        pytest.skip("Lab.call does not record call outcomes (CheckResult.call_failure) yet")
    lines = render.table(stubs_report).splitlines()
    # the table (21 lines), then one line per step naming every function still to write (some wrap): a screen
    assert len(lines) < 46, "\n".join(lines)


def test_a_folder_without_lab_files_is_one_line_and_exit_two(tmp_path) -> None:
    from tests.test_cli import run_cli

    (tmp_path / "notes.txt").write_text("nothing here", encoding="utf-8")
    done = run_cli("grade", str(tmp_path))
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "none of the lab's files" in done.stderr
    assert kit.STUBS.is_dir()


def test_an_unknown_language_variable_is_a_usage_error() -> None:
    from tests.test_cli import run_cli

    done = run_cli("grade", "--step", "softmax", env={"ATTNLAB_LANG": "klingon"})
    assert done.returncode == 2 and "klingon" in done.stderr
