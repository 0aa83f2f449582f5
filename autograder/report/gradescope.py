"""A report as Gradescope's ``results.json``: the score, the summary, one test per check, and what the run used.

The format is Gradescope's autograder specification: ``score``,
``execution_time``, ``output``, ``stdout_visibility``, ``extra_data`` and
``tests`` with ``name``, ``number``, ``score``, ``max_score``, ``status``,
``output``, ``output_format``, ``tags``, ``visibility`` (hidden checks are
``after_published``) and ``extra_data``. The top-level ``output`` is the
summary of :mod:`autograder.report.gradescope_summary` (the table, the steps not
started, the first failures). A test's ``name`` is the check's readable
title in the report's language (``Softmax: rows sum to 1``); its stable id
(``step/test_name[param]``, the same in every language, which gradebooks key
on) is in its ``extra_data`` (with the check's arrays when
``evidence`` is asked for: the notebook's grade cells draw them). Outputs are
Markdown, with the text of every message escaped.

How a check shows is its :func:`state`, read from the report model: passed,
failed, or neutral (no score and no status, so Gradescope shows neither a
pass nor a failure): a 0-point check that lists what a person should review,
and a check awaiting an instructor's review. :data:`FIELDS` maps each state to
the test's fields; a new state of the model is one entry there and one line in
:func:`state`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from autograder import __version__
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.i18n import N_, _
from autograder.report.gradescope_summary import markdown, markdown_text

__all__ = ["FIELDS", "MARKDOWN", "dumps", "extra_data", "failure", "markdown_text", "results", "state"]

MARKDOWN = "md"
PASSED = N_("Passed.")
TO_REVIEW = "to_review"  # the tag of a check a person should look at (a note, or a check awaiting review)
# How a check shows on Gradescope.
PASSED_STATE, FAILED_STATE, NOTE_STATE, REVIEW_STATE = "passed", "failed", "note", "review"
FIELDS: dict[str, Callable[[CheckResult], dict[str, Any]]] = {
    PASSED_STATE: lambda check: {"score": check.earned, "max_score": check.points, "status": "passed"},
    FAILED_STATE: lambda check: {"score": check.earned, "max_score": check.points, "status": "failed"},
    NOTE_STATE: lambda check: {},  # neutral: a 0-point list of what to review is not a failed test
    REVIEW_STATE: lambda check: {},  # neutral until an instructor confirms it; the top-level score holds its points
}


def state(check: CheckResult) -> str:
    """How ``check`` shows on Gradescope: a key of :data:`FIELDS`."""
    if check.passed:
        return PASSED_STATE
    if check.review:
        return REVIEW_STATE
    if check.points == 0:
        return NOTE_STATE
    return FAILED_STATE


def extra_data(report: GradeReport | None, **more: Any) -> dict[str, Any]:
    """What the run used: seed, kit version, isolation layer (``unknown`` when the report does not say)."""
    data = {
        "seed": report.seed if report else None,
        "kit_version": __version__,
        "isolation": getattr(report, "isolation", "unknown") if report else "unknown",
        "public_only": report.public_only if report else None,
    }
    return data | more


def _test(index: int, number: int, result: StepResult, check: CheckResult, evidence: bool) -> dict[str, Any]:
    shown = state(check)
    return {
        "name": f"{_(result.step.title)}: {check.title}",
        "number": f"{index}.{number}",
        **FIELDS[shown](check),
        "output": markdown_text(check.message or _(PASSED)),
        "output_format": MARKDOWN,
        "tags": [result.step.id]
        + ([check.mistake] if check.mistake else [])
        + ([TO_REVIEW] if shown in (NOTE_STATE, REVIEW_STATE) else []),
        "visibility": "after_published" if check.hidden else "visible",
        "extra_data": {"id": check.id, "title": check.title, "state": shown, "points": check.points}
        | ({"evidence": check.evidence.to_dict()} if evidence and check.evidence else {}),
    }


def results(
    report: GradeReport, *, execution_time: float | None = None, evidence: bool = False, **extra: Any
) -> dict[str, Any]:
    """Gradescope's ``results.json`` of ``report`` (``execution_time`` in seconds; default: the report's own;
    ``evidence``: each check's arrays in its ``extra_data``); ``extra`` goes into the top ``extra_data``."""
    return {
        "score": report.earned,
        "max_score": report.possible,
        "execution_time": round(report.seconds if execution_time is None else execution_time, 3),
        "output": markdown(report),  # the seed is in extra_data only
        "output_format": MARKDOWN,
        "stdout_visibility": "hidden",  # run_autograder's stdout holds every check: the instructor's view
        "extra_data": extra_data(report, submission=report.submission, **extra),
        "tests": [
            _test(index, number, result, check, evidence)
            for index, result in enumerate(report.steps, start=1)
            for number, check in enumerate(result.checks, start=1)
        ],
    }


def failure(message: str, *, execution_time: float = 0.0, **extra: Any) -> dict[str, Any]:
    """A ``results.json`` that scores 0 and says why there is no report (no lab files, the graders failed)."""
    return {
        "score": 0.0,
        "execution_time": round(execution_time, 3),
        "output": markdown_text(message),
        "output_format": MARKDOWN,
        "stdout_visibility": "hidden",
        "extra_data": extra_data(None, **extra),
        "tests": [],
    }


def dumps(results_json: dict[str, Any]) -> str:
    return json.dumps(results_json, indent=2, ensure_ascii=False)
