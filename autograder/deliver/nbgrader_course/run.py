"""The nbgrader grade cells' request handler: the engine's options for one notebook's grading run.

A grade cell (:mod:`autograder.deliver.nbgrader_course.cells`) sends ``{folder, steps,
private, student}`` to the warm grader (:mod:`autograder.deliver.warm`), whose worker,
or a fresh grader process, calls :func:`options` and grades. With a private
folder the options add the hidden graders, the reference, the course secret
and the course's sandbox limits from the folder's ``settings.json`` (written
by ``attnlab nbgrader-course``); without one, the public checks only.
"""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

from autograder import i18n
from autograder.deliver.nbgrader_course.private import SETTINGS, Private
from autograder.grading import engine
from autograder.sandbox.client import Limits


def limits_from(limits: dict) -> Limits:
    """The sandbox limits of a course's settings (any :class:`Limits` field; the rest default)."""
    names = {field.name for field in fields(Limits)}
    unknown = set(limits) - names
    if unknown:
        raise ValueError(f"{SETTINGS}: unknown sandbox limits {sorted(unknown)}; known: {sorted(names)}")
    return Limits(**limits)


def options(request: dict) -> engine.GradeOptions:
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


def prepare(request: dict) -> None:
    """Before grading (in the warm worker or a fresh grader process): the feedback's language."""
    i18n.activate(language_for(request))
