"""Renderings of a :class:`GradeReport`: the terminal table and Gradescope's JSON."""

from __future__ import annotations

import json
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
    lines.append(f"Student code ran with isolation: {report.isolation}")
    return "\n".join(lines)


def gradescope(report: GradeReport) -> dict:
    """Gradescope's results.json: score, tests (name, score, max_score, output, visibility)."""
    tests = [
        {
            "name": f"{result.step.title}: {check.title}",
            "number": f"{index}.{number}",
            "score": check.earned,
            "max_score": check.points,
            "output": check.message or "Passed.",
            "visibility": "after_published" if check.hidden else "visible",
            "tags": [result.step.id] + ([check.mistake] if check.mistake else []),
        }
        for index, result in enumerate(report.steps, start=1)
        for number, check in enumerate(result.checks, start=1)
    ]
    return {
        "score": report.earned,
        "max_score": report.possible,
        "output": "\n".join(report.notes),
        "tests": tests,
        "extra_data": {
            "seed": report.seed,
            "public_only": report.public_only,
            "submission": report.submission,
            "isolation": report.isolation,
        },
    }


def gradescope_json(report: GradeReport) -> str:
    return json.dumps(gradescope(report), indent=2, ensure_ascii=False)
