"""The class summary of ``attnlab grade-batch`` reads the same however the results arrive (a Dask cluster returns
them as they finish), and its chart's axis ends at the class size."""

from __future__ import annotations

from autograder.base import tasks
from autograder.deliver.batch import summary
from autograder.deliver.batch.job import Result
from autograder.grading import serialize
from autograder.grading.model import CheckResult, GradeReport, StepResult


def student(name: str, mistakes: tuple[str, ...]) -> Result:
    wrong = [CheckResult("softmax", f"test_{i}", "t", 1, False, False, "w", mistake=m) for i, m in enumerate(mistakes)]
    checks = (*wrong, CheckResult("softmax", "test_ok", "ok", 1, True, False))
    report = GradeReport(name, (StepResult(tasks.step("softmax"), checks),), False, 1)
    return Result(name, name, report=serialize.report_dict(report))


CLASS = [
    student("ann", ("softmax_wrong_axis",)),
    student("bo", ("softmax_no_max_shift",)),
    student("cy", ("softmax_wrong_axis", "softmax_no_max_shift")),
    student("di", ("b_mistake", "a_mistake")),
]


def test_tied_mistakes_are_ordered_by_name_whatever_the_order_of_the_results() -> None:
    tables = {summary.table(summary.summarise(order)) for order in (CLASS, CLASS[::-1], CLASS[1:] + CLASS[:1])}
    assert len(tables) == 1, tables
    softmax = summary.summarise(CLASS[::-1]).steps[0]
    assert softmax.mistakes == (("softmax_no_max_shift", 2), ("softmax_wrong_axis", 2), ("a_mistake", 1))


def test_the_charts_axis_ends_at_the_class_size() -> None:
    whole = summary.summarise(CLASS)
    axes = summary.figure(whole).axes[0]
    assert axes.get_xlim() == (0, 4)
    assert max(axes.get_xticks()) <= 4
    assert summary.chart(whole).startswith(b"\x89PNG")
