"""Renderings of a :class:`GradeReport`: the terminal table and Gradescope's JSON."""

from __future__ import annotations

import json

from autograder.i18n import N_, _
from autograder.report import render_terminal
from autograder.report.model import GradeReport

PASSED = N_("Passed.")


def table(report: GradeReport, detail: str = render_terminal.NORMAL) -> str:
    """The terminal rendering (see :mod:`autograder.report.render_terminal`)."""
    return render_terminal.text(report, detail)


def gradescope(report: GradeReport, *, evidence: bool = False) -> dict:
    """Gradescope's results.json: score, tests (name, score, max_score, output, visibility).

    A test's ``name`` is the check's stable id (``step/test_name[param]``), the
    same in every language; its title, in the report's language, opens its
    ``output`` and is in its ``extra_data``. ``evidence`` adds each check's
    arrays for pictures (:meth:`Evidence.to_dict`; the notebook's grade cells draw them).
    """
    tests = [
        {
            "name": check.id,  # the same in every language: gradebooks key on it
            "number": f"{index}.{number}",
            "score": check.earned,
            "max_score": check.points,
            "output": f"{_(result.step.title)}: {check.title}\n{check.message or _(PASSED)}",
            "visibility": "after_published" if check.hidden else "visible",
            "tags": [result.step.id] + ([check.mistake] if check.mistake else []),
            "extra_data": {"title": check.title}
            | ({"evidence": check.evidence.to_dict()} if evidence and check.evidence else {}),
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


def gradescope_json(report: GradeReport, *, evidence: bool = False) -> str:
    return json.dumps(gradescope(report, evidence=evidence), indent=2, ensure_ascii=False)
