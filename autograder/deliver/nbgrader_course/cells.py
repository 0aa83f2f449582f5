"""What the lab notebook's cells call, inside the notebook's kernel.

A grade cell calls :func:`grade`. The grading itself runs in a separate
process (started with ``python -I`` from a temporary folder, so neither the
submission nor the kernel's state is on its path), or in a worker of the warm
grading server (:mod:`autograder.deliver.warm`), with
:mod:`autograder.deliver.nbgrader_course.run` as the request's handler; student code
runs only in that process's sandbox. So nothing a student module does at
import, and nothing in this kernel's namespace, can change the score a cell
computes. What comes back is the report itself
(:mod:`autograder.grading.serialize`); the cell prints its step with the
terminal's renderer on stdout (nbgrader scores any stderr output as 0), shows
the heatmaps of its failed checks, and returns a plain ``float``.

Public checks (the released cell) grade one step per call. With the
instructor's private folder (the hidden block of an autograded cell) the
first cell grades every step the notebook holds in one run, and the other
cells read that run's result: one grader process per student.

This module is imported in the kernel, so it imports nothing heavy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from html import escape as html_escape
from pathlib import Path

from autograder import i18n
from autograder.base import tasks
from autograder.deliver.nbgrader_course import review
from autograder.deliver.nbgrader_course.private import DEFAULT_DEADLINE_S, Private, PrivateFolderError, Settings
from autograder.deliver.warm import client
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.i18n import N_, Nn_, _, counted
from autograder.report import render

HANDLER = "autograder.deliver.nbgrader_course.run"  # the warm grader's request handler for these cells

# Set by the course's execute preprocessor (nbgrader_course.preprocessors.GuardedExecute).
ENV_STUDENT = "ATTNLAB_STUDENT"  # the submission's identity, for its hidden-input seed
ENV_STEPS = "ATTNLAB_GRADE_STEPS"  # the steps whose grade cells this notebook holds (comma-separated)
STOP_GRACE_S = 15.0  # after an interrupt, the grader's time to stop its sandboxes before it is killed

NO_PRIVATE = N_(
    "The course's private folder named in this grade cell does not exist or has no "
    "settings.json: rebuild the course with `attnlab nbgrader-course`."
)
NOT_FINISHED = N_(
    "The grader did not finish within {seconds:g} s, so this step scores 0. Code that hangs or "
    "runs very slowly is the usual cause."
)
INTERRUPTED = N_("Grading was interrupted (the notebook cell's time limit), so this step scores 0.")
GRADER_FAILED = N_(
    "The grader itself failed ({detail}), so this step scores 0; this is not your mistake: tell your instructor."
)
NO_CHECKS = N_("No checks of this step ran, so it scores 0.")
HIDDEN_LATER = Nn_(
    "The remaining {points:g} point comes from hidden checks that run when your instructor grades.",
    "The remaining {points:g} points come from hidden checks that run when your instructor grades.",
)
SCORE_LINE = Nn_("{title}: {earned} of {possible} point", "{title}: {earned} of {possible} points")
PUBLIC_CHECKS = N_(" (public checks)")
HANDOUT_LINE = N_("Handout: {handout}")
PLOT_ALT = N_("The timing plot {path} that attnlab timing drew from your measurements")


@dataclass(frozen=True)
class Outcome:
    """One grading run: its report, or why there is none."""

    report: GradeReport | None = None
    failure: str = ""


_runs: dict[tuple, Outcome] = {}  # private-folder runs of this kernel, by (folder, private, steps, content)


def grade(step_id: str, private: str | None = None, folder: str | os.PathLike = ".", lang: str | None = None) -> float:
    """Grade step ``step_id`` of the submission in ``folder``; print its feedback, return its score.

    Args:
        step_id: the lab step, as in the registry.
        private: the instructor's private folder (hidden graders, reference, secret,
            settings.json), or None for the public checks.
        folder: the submission; the notebook's own folder by default.
        lang: the feedback's language (the notebook of a course in another language
            names it); default: the course's setting, else ``$ATTNLAB_LANG`` or the locale.

    Returns:
        The points earned, a plain float between 0 and the step's points.
    """
    step = tasks.step(step_id)
    submission = Path(folder).resolve()
    settings = _settings(Private(Path(private))) if private is not None else None
    language = i18n.choose_or_source(lang or (settings.language if settings else None))
    with i18n.using(language):
        if settings is None:
            outcome = _grade_once(submission, (step.id,), None, lang=language)
        else:
            outcome = _grade_batch(submission, Path(private).resolve(), step.id, settings, language)
        report = outcome.report
        result = next((s for s in report.steps if s.step.id == step.id), None) if report else None
        possible = review.grade_cell_points(step, public_only=private is None)
        earned = float(min(max(review.grade_cell_earned(step, result), 0.0), possible)) if result else 0.0
        print(_feedback(step, report, result, earned, outcome.failure, public_only=private is None))
        _show_pictures(result.failed if result else ())
        if review.has_review(step):
            _show_review(step, result)
    return earned


def _show_review(step: tasks.Step, result: StepResult | None) -> None:
    """Display the review cell's payload (typed data for the course's SaveKitAutoGrades, and its text)."""
    from IPython.display import display

    data = review.payload(step, result)
    display({review.MIME: data, "text/markdown": data["markdown"], "text/plain": data["markdown"]}, raw=True)


def _show_pictures(failed: tuple[CheckResult, ...]) -> None:
    """Display the heatmaps of each failed check that carries evidence (nothing is shown when none does)."""
    failed = tuple(check for check in failed if check.evidence is not None)
    if not failed:
        return
    from IPython.display import HTML, display

    from autograder.report import render_html

    for check in failed:
        display(HTML(f"<p><b>{html_escape(check.title)}</b></p>{render_html.pictures(check.evidence)}"))


def show_timing_plots(folder: str | os.PathLike = ".") -> None:
    """Display the PNG plots ``attnlab timing`` wrote into ``folder/reports`` (or say how to make them)."""
    from IPython.display import Image, display

    from autograder.judge.timing.report import FOLDER, PLOTS

    reports = Path(folder) / FOLDER
    shown = 0
    for name in PLOTS.values():
        path = reports / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= 8 << 20:
            print(f"{FOLDER}/{name}:")
            alt = _(PLOT_ALT).format(path=f"{FOLDER}/{name}")  # the feedback page's image has a description
            display(Image(data=path.read_bytes(), format="png", metadata={"alt": alt}))
            shown += 1
    if not shown:
        print(f"No plots in {FOLDER}/ yet: run `attnlab timing` in this folder, then run this cell again.")


def _settings(private: Private) -> Settings:
    try:
        return private.settings()
    except PrivateFolderError:
        raise RuntimeError(_(NO_PRIVATE)) from None


def _grade_batch(submission: Path, private: Path, step_id: str, settings: Settings, lang: str) -> Outcome:
    """This step's run with the private folder: the notebook's steps graded once per kernel and content."""
    steps = tuple(s for s in os.environ.get(ENV_STEPS, "").split(",") if s in tasks.BY_ID) or tuple(tasks.BY_ID)
    if step_id not in steps:
        steps = (step_id,)
    key = (submission, private, steps, _content_digest(submission), lang)
    if key not in _runs:
        try:
            _runs[key] = _grade_once(submission, steps, private, settings.deadline_s, lang)
        except KeyboardInterrupt:  # the cell's timeout: the later cells say so at once instead of grading again
            _runs[key] = Outcome(failure=_(INTERRUPTED))
            raise
    return _runs[key]


def _content_digest(folder: Path) -> str:
    """A digest of what the grader takes from the submission (the batch is graded again when it changes): by the
    intake's own rules, so a link's target never counts and a strange folder never stops the cell."""
    from autograder.handin import intake

    return intake.fingerprint(folder, search=False)


def _grade_once(
    submission: Path,
    steps: tuple[str, ...],
    private: Path | None,
    deadline_s: float = DEFAULT_DEADLINE_S,
    lang: str = i18n.SOURCE,
) -> Outcome:
    """Grade ``submission`` for ``steps`` (warm when the private folder is given); its report or the reason there
    is none."""
    request = {
        "folder": str(submission),
        "steps": list(steps),
        "private": str(private) if private else None,
        "student": os.environ.get(ENV_STUDENT) or submission.name,
        "lang": lang,
    }
    graded = client.grade(
        HANDLER, request, deadline_s=deadline_s, stop_grace_s=STOP_GRACE_S, scope=private, warm=private is not None
    )
    if isinstance(graded, client.Graded):
        return Outcome(report=graded.report)
    if isinstance(graded, client.Overran):
        return Outcome(failure=_(NOT_FINISHED).format(seconds=graded.seconds))
    if isinstance(graded, client.NotTakenIn):  # no lab files, or past one of the intake's limits: one sentence
        return Outcome(failure=graded.reason)
    # the feedback is the student's: a grader's error naming a file of the private folder does not say where it is
    detail = graded.detail.replace(str(private), "<private>") if private else graded.detail
    return Outcome(failure=_(GRADER_FAILED).format(detail=detail))


def _feedback(
    step: tasks.Step,
    report: GradeReport | None,
    result: StepResult | None,
    earned: float,
    failure: str,
    *,
    public_only: bool,
) -> str:
    """The cell's output: its score line, then the step as the terminal shows it (``attnlab grade``)."""
    possible = review.grade_cell_points(step, public_only=public_only)
    head = counted(SCORE_LINE, possible).format(title=_(step.title), earned=f"{earned:g}", possible=f"{possible:g}")
    lines = [head + (_(PUBLIC_CHECKS) if public_only else "")]
    if failure:
        lines.append(failure)
    elif result is None or report is None:
        lines.append(_(NO_CHECKS))
    else:
        # no hidden-input seed: the feedback is the student's, and the seed is a grader internal
        lines.append(
            render.table(replace(report, submission=Path(report.submission).name, steps=(result,)), seed=False)
        )
    if public_only and step.hidden_points:
        lines.append(counted(HIDDEN_LATER, step.hidden_points).format(points=step.hidden_points))
    if review.has_review(step):
        points = tasks.review_points(step.id)
        lines.append(counted(review.IN_REVIEW_CELL, points).format(points=f"{points:g}"))
    lines.append(_(HANDOUT_LINE).format(handout=tasks.handout_link(step, i18n.language())))
    return "\n".join(lines)
