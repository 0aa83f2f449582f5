"""The notebook's review cell: the device-specific points of a step, graded by hand when they wait for review.

A step with checks in :data:`autograder.base.tasks.REVIEW_CHECKS` (timing: the report's slopes, memory and decoding
latency) gets a manually graded nbgrader *task* cell after its grade cell, worth those checks' points; the grade
cell is worth the rest of the step. The grade cell (in the kernel, :mod:`autograder.deliver.nbgrader_course.cells`)
displays a :func:`payload` built from the typed report: the points those checks earned, and each check that is
for review (``CheckResult.review``) with its title, points and message. At ``nbgrader autograde`` the course's
:class:`~autograder.deliver.nbgrader_course.preprocessors.SaveKitAutoGrades` writes the payload's text into the review
cell (what formgrader and the feedback show) and scores the cell: automatically with the earned points when
nothing waits for review, otherwise not at all, so that nbgrader marks it *needs manual grade* and counts 0 until
an instructor enters a score.

This module is imported in the kernel, so it imports nothing heavy.
"""

from __future__ import annotations

import re
from typing import Any

from autograder.base import tasks
from autograder.grading.model import StepResult
from autograder.i18n import N_, Nn_, _, counted
from autograder.report.render_terminal import FOR_REVIEW

MIME = "application/vnd.attnlab.review+json"  # the payload's type in the grade cell's display output
GRADE_ID = "review_{step}"  # the review cell of a step

HEAD = Nn_(
    "**Device-specific points of {title} ({points} point, graded by hand when they wait for review).**",
    "**Device-specific points of {title} ({points} points, graded by hand when they wait for review).**",
)
BEFORE = N_(
    "When your instructor grades, this cell lists the checks of this step whose points depend on the device "
    "your timing report was measured on and that the grader could not verify; they count 0 until an instructor "
    "or a grader with that device confirms them. When none waits for review, these points are scored "
    "automatically."
)
CHECK_LINE = N_("- **{title}** ({worth}): {why}")
WORTH = Nn_("{points} point", "{points} points")
NOTHING = Nn_(
    "Nothing waits for review: {earned} of {possible} point, scored automatically.",
    "Nothing waits for review: {earned} of {possible} points, scored automatically.",
)
NOT_GRADED = N_("The step was not graded (see its grade cell), so these points score 0.")
IN_REVIEW_CELL = Nn_(
    "The device-specific check ({points} point) is scored in the review cell after this one.",
    "The device-specific checks ({points} points) are scored in the review cell after this one.",
)


def has_review(step: tasks.Step) -> bool:
    """Whether ``step`` has a review cell."""
    return tasks.review_points(step.id) > 0


def grade_cell_points(step: tasks.Step, *, public_only: bool = False) -> float:
    """The points of ``step``'s grade cell: the step's (or its public checks') without its review cell's."""
    return (step.public_points if public_only else step.points) - tasks.review_points(step.id)


def grade_cell_earned(step: tasks.Step, result: StepResult) -> float:
    """What ``result`` earned outside the review cell's checks."""
    reviewable = tasks.REVIEW_CHECKS.get(step.id, {})
    return sum(check.earned for check in result.checks if check.name not in reviewable)


def payload(step: tasks.Step, result: StepResult | None) -> dict[str, Any]:
    """The review cell's data from the typed result (None: the step was not graded), and its text in the active
    language.

    ``score`` is the points the review cell scores automatically, or None when a check waits for review.
    """
    possible = tasks.review_points(step.id)
    if result is None:
        return {"step": step.id, "points": possible, "score": 0.0, "review": [], "markdown": _markdown(step, None)}
    reviewable = tasks.REVIEW_CHECKS.get(step.id, {})
    earned = sum(check.earned for check in result.checks if check.name in reviewable)
    waiting = [
        {"id": check.id, "title": check.title, "points": check.points, "why": check.message}
        for check in result.for_review
    ]
    score = None if waiting else min(max(earned, 0.0), possible)
    body = {"step": step.id, "points": possible, "earned": earned, "score": score, "review": waiting}
    return {**body, "markdown": _markdown(step, body)}


def before_grading(step: tasks.Step) -> str:
    """The review cell's text in the source and released notebook (active language)."""
    return f"{_head(step)}\n\n{_(BEFORE)}"


def _head(step: tasks.Step) -> str:
    points = tasks.review_points(step.id)
    return counted(HEAD, points).format(title=_(step.title), points=f"{points:g}")


def _markdown(step: tasks.Step, body: dict[str, Any] | None) -> str:
    lines = [_head(step), ""]
    if body is None:
        lines.append(_(NOT_GRADED))
    elif body["review"]:
        lines.append(_(FOR_REVIEW))
        lines.append("")
        for check in body["review"]:
            worth = counted(WORTH, check["points"]).format(points=f"{check['points']:g}")
            lines.append(_(CHECK_LINE).format(title=plain(check["title"]), worth=worth, why=plain(check["why"])))
    else:
        possible = body["points"]
        lines.append(counted(NOTHING, possible).format(earned=f"{body['earned']:g}", possible=f"{possible:g}"))
    return "\n".join(lines)


def plain(text: str) -> str:
    """``text`` shown as itself in markdown: on one line, every ASCII punctuation mark escaped (CommonMark), so a
    report's device name or a message can add no link, HTML or formatting."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", " ".join(str(text).split()))
