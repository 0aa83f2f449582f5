"""The grader process a notebook's grade cell starts (see :mod:`autograder.nbgrader_course.cells`).

It runs the engine on the submission and prints the report as Gradescope
JSON on stdout. With a private folder it adds the hidden graders, the
reference, the course secret and the course's sandbox limits from the
folder's ``settings.json`` (written by ``attnlab nbgrader-course``).

Started as ``python -I -c <bootstrap> <package root> <request JSON>`` from a
temporary folder, so the submission is never on this process's path. Exit
status 0 with a report, 3 when the graders could not run (message on stderr).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import fields
from pathlib import Path

from autograder import engine, i18n
from autograder.nbgrader_course.private import SETTINGS, Private, PrivateFolderError
from autograder.report import render
from autograder.sandbox.client import Limits

EXIT_INTERNAL = 3


def limits_from(limits: dict) -> Limits:
    """The sandbox limits of a course's settings (any :class:`Limits` field; the rest default)."""
    names = {field.name for field in fields(Limits)}
    unknown = set(limits) - names
    if unknown:
        raise ValueError(f"{SETTINGS}: unknown sandbox limits {sorted(unknown)}; known: {sorted(names)}")
    return Limits(**limits)


def options_for(request: dict) -> engine.GradeOptions:
    """The engine's options for a request ``{folder, steps, private, student}``."""
    submission, steps = Path(request["folder"]), tuple(request["steps"])
    if request.get("private") is None:
        return engine.GradeOptions(submission=submission, public_only=True, steps=steps)
    private = Private(Path(request["private"]))
    settings = private.settings()
    secret = private.secret() or os.environ.get("ATTNLAB_SECRET", engine.DEFAULT_SECRET)
    return engine.GradeOptions(
        submission=submission,
        hidden=private.hidden,
        reference=private.reference,
        seed=engine.seed_for(secret, str(request["student"])),
        steps=steps,
        limits=limits_from(settings.limits),
        isolation=settings.isolation,
    )


def language_for(request: dict) -> str:
    """The feedback's language: the request's (the grade cell's ``lang``), else the course's, else the default."""
    if request.get("lang"):
        return i18n.choose_or_source(request["lang"])
    if request.get("private") is not None:
        return i18n.choose_or_source(Private(Path(request["private"])).settings().language)
    return i18n.choose_or_source()


def main(request_json: str) -> int:
    try:
        request = json.loads(request_json)
        i18n.activate(language_for(request))
        report = engine.grade(options_for(request))
    except (engine.GradingError, engine.IsolationRefused, PrivateFolderError, OSError, ValueError, KeyError) as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    print(render.gradescope_json(report, evidence=True))
    return 0
