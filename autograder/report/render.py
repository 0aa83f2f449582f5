"""Renderings of a :class:`GradeReport`: the terminal table, and Gradescope's JSON through
:mod:`autograder.gradescope.results`."""

from __future__ import annotations

from typing import Any

from autograder.report import render_terminal
from autograder.report.model import GradeReport


def table(report: GradeReport, detail: str = render_terminal.NORMAL, **options: Any) -> str:
    """The terminal rendering (see :mod:`autograder.report.render_terminal`; ``options``: its keywords)."""
    return render_terminal.text(report, detail, **options)


def gradescope(report: GradeReport, *, evidence: bool = False) -> dict:
    """Gradescope's results.json (:func:`autograder.gradescope.results.results`)."""
    from autograder.gradescope import results

    return results.results(report, evidence=evidence)


def gradescope_json(report: GradeReport, *, evidence: bool = False) -> str:
    from autograder.gradescope import results

    return results.dumps(results.results(report, evidence=evidence))
