"""Renderings of a :class:`GradeReport`: the terminal table, and Gradescope's JSON through
:mod:`autograder.report.gradescope`."""

from __future__ import annotations

from typing import Any

from autograder.grading.model import GradeReport
from autograder.report import render_terminal


def table(report: GradeReport, detail: str = render_terminal.NORMAL, **options: Any) -> str:
    """The terminal rendering (see :mod:`autograder.report.render_terminal`; ``options``: its keywords)."""
    return render_terminal.text(report, detail, **options)


def gradescope(report: GradeReport, *, evidence: bool = False) -> dict:
    """Gradescope's results.json (:func:`autograder.report.gradescope.results`)."""
    from autograder.report import gradescope as results

    return results.results(report, evidence=evidence)


def gradescope_json(report: GradeReport, *, evidence: bool = False) -> str:
    from autograder.report import gradescope as results

    return results.dumps(results.results(report, evidence=evidence))
