"""Renderings of a :class:`GradeReport`: the terminal table.

Gradescope's ``results.json`` is :mod:`autograder.gradescope.results`.
"""

from __future__ import annotations

import textwrap

from autograder.report.model import GradeReport

WIDTH = 100


def _points(value: float) -> str:
    return f"{value:g}"


def table(report: GradeReport) -> str:
    """The per-step table with failed checks and their messages, then the total."""
    lines = [f"Grading {report.submission}" + (" (public checks only)" if report.public_only else "")]
    if report.seed is not None:
        lines.append(f"Hidden inputs seed: {report.seed}")
    lines.append("")
    lines.append(f"{'step':<34}{'earned':>8}{'points':>8}  checks")
    lines.append("-" * 62)
    for result in report.steps:
        passed = len(result.checks) - len(result.failed)
        lines.append(
            f"{result.step.title:<34}{_points(result.earned):>8}{_points(result.possible):>8}  "
            f"{passed}/{len(result.checks)} passed"
        )
        for check in result.failed:
            head = f"  - {check.title} [{_points(check.points)} pt]"
            lines.append(head)
            lines.extend(textwrap.wrap(check.message, WIDTH, initial_indent="      ", subsequent_indent="      "))
    lines.append("-" * 62)
    lines.append(f"{'Total':<34}{_points(report.earned):>8}{_points(report.possible):>8}")
    lines.extend(f"Note: {note}" for note in report.notes)
    return "\n".join(lines)
