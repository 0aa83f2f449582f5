"""A report as Gradescope's ``results.json``: the score, one test per check, and what the run used.

The format is Gradescope's autograder specification: ``score``,
``execution_time``, ``output``, ``extra_data`` and ``tests`` with ``name``,
``number``, ``score``, ``max_score``, ``status``, ``output``,
``output_format``, ``tags``, ``visibility`` (hidden checks are
``after_published``) and ``extra_data``. A test's ``name`` is the check's
stable id (``step/test_name[param]``), the same in every language, since
gradebooks key on it; its title, in the report's language, opens its
``output`` and is in its ``extra_data`` (with the check's arrays when
``evidence`` is asked for: the notebook's grade cells draw them). Outputs are
Markdown, with the text of every message escaped so that nothing in it (which
may quote student code) is read as markup.
"""

from __future__ import annotations

import json
import re
from typing import Any

from autograder import __version__
from autograder.i18n import N_, _
from autograder.report.model import CheckResult, GradeReport, StepResult

MARKDOWN = "md"
PASSED = N_("Passed.")
MARKUP = re.compile(r"([\\`*_{}\[\]<>()#+!|~&-])")


def markdown_text(text: str) -> str:
    """``text`` shown literally in Markdown: every character Markdown could read as markup is escaped."""
    return MARKUP.sub(r"\\\1", text)


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
    title = markdown_text(f"{_(result.step.title)}: {check.title}")
    return {
        "name": check.id,  # the same in every language: gradebooks key on it
        "number": f"{index}.{number}",
        "score": check.earned,
        "max_score": check.points,
        "status": "passed" if check.passed else "failed",
        "output": f"**{title}**\n\n{markdown_text(check.message or _(PASSED))}",
        "output_format": MARKDOWN,
        "tags": [result.step.id] + ([check.mistake] if check.mistake else []),
        "visibility": "after_published" if check.hidden else "visible",
        "extra_data": {"title": check.title}
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
        "output": "\n\n".join(markdown_text(note) for note in report.notes),  # the seed is in extra_data only
        "output_format": MARKDOWN,
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
        "extra_data": extra_data(None, **extra),
        "tests": [],
    }


def dumps(results_json: dict[str, Any]) -> str:
    return json.dumps(results_json, indent=2, ensure_ascii=False)
