"""The terminal rendering of a report: the per-step table first, then the failures grouped by step.

Three levels of detail: ``quiet`` prints the table only; ``normal`` adds,
for each step, the functions not written yet (one line) and its failures
grouped by cause (at most :data:`SHOWN_PER_STEP` of them, with how to see
the rest); ``verbose`` prints every check, passed ones included, each with
its full message. Every word comes from the catalogs (:mod:`autograder.i18n`).
"""

from __future__ import annotations

import textwrap

from autograder import tasks
from autograder.i18n import N_, _, language, ngettext
from autograder.report import failures
from autograder.report.model import CheckResult, GradeReport, StepResult

QUIET, NORMAL, VERBOSE = "quiet", "normal", "verbose"
WIDTH = 100
STEP_COLUMN = 36
SHOWN_PER_STEP = 2  # failure groups shown per step before "and N more"
INDENT = "    "

GRADING = N_("Grading {submission}")
PUBLIC_ONLY = N_(" (public checks only)")
SEED = N_("Hidden inputs seed: {seed}")
HEADINGS = (N_("step"), N_("earned"), N_("points"), N_("checks passed"))
TOTAL = N_("Total")
NOTE = N_("Note: {note}")
ISOLATION = N_("Student code ran with isolation: {isolation}")
SEED_AND_ISOLATION = N_("{seed}. {isolation}")  # both on the line under the first: one line fewer to read
TO_FIX = N_("To fix, step by step:")
TO_START = N_("Not implemented yet (each step's section of {handout} explains it):")
STEP_TO_START = N_("{title}: {what}")
MORE = N_("… and {count} more failed checks: attnlab grade {folder} --step {step} --verbose")
SAME_CAUSE = N_("(the same for {count} more checks, {points} points in all)")
PASSED_MARK, FAILED_MARK = "✓", "✗"


def _points(value: float) -> str:
    return f"{value:g}"


def _rule(width: int) -> str:
    return "-" * width


def _table(report: GradeReport) -> list[str]:
    name, earned, points, checks = (_(h) for h in HEADINGS)
    column = max(STEP_COLUMN, *(len(_(r.step.title)) + 2 for r in report.steps))
    head = f"{name:<{column}}{earned:>8}{points:>8}  {checks}"
    width = max(len(head), column + 16 + 12)
    lines = [head, _rule(width)]
    passed_total = 0
    for result in report.steps:
        passed = len(result.checks) - len(result.failed)
        passed_total += passed
        lines.append(
            f"{_(result.step.title):<{column}}{_points(result.earned):>8}{_points(result.possible):>8}  "
            f"{passed}/{len(result.checks)}"
        )
    count = sum(len(r.checks) for r in report.steps)
    lines.append(_rule(width))
    lines.append(
        f"{_(TOTAL):<{column}}{_points(report.earned):>8}{_points(report.possible):>8}  {passed_total}/{count}"
    )
    return lines


def _wrapped(text: str, indent: str = INDENT) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)


def worth(points: float) -> str:
    """``1 pt``, ``2 pts``, ``0.5 pts`` in the active language."""
    return ngettext("{points} pt", "{points} pts", 1 if points == 1 else 2).format(points=_points(points))


def _check_head(check: CheckResult, mark: str) -> str:
    return f"  {mark} {check.title} [{worth(check.points)}]"


def _failure_lines(entry: failures.Failure) -> list[str]:
    lines = [_check_head(entry.check, FAILED_MARK)]
    lines += _wrapped(entry.check.message)
    if entry.count > 1:
        lines += _wrapped(_(SAME_CAUSE).format(count=entry.count - 1, points=_points(entry.points)))
    return lines


def _to_start(grouped: tuple[failures.StepFailures, ...]) -> list[str]:
    """One line per step with work not there yet: its functions still to write, the graders' words for the rest."""
    lines = [_(TO_START).format(handout=tasks.handout_file(language()))]
    for group in grouped:
        what = "; ".join([", ".join(group.not_implemented)] * bool(group.not_implemented) + list(group.not_started))
        line = _(STEP_TO_START).format(title=_(group.result.step.title), what=what)
        lines += textwrap.wrap(line, WIDTH, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
    return lines


def _step_failures(group: failures.StepFailures, folder: str) -> list[str]:
    step = group.result.step
    lines = [f"{_(step.title)} ({_points(group.result.earned)}/{_points(group.result.possible)})"]
    for entry in group.failures[:SHOWN_PER_STEP]:
        lines += _failure_lines(entry)
    hidden = sum(e.count for e in group.failures[SHOWN_PER_STEP:])
    if hidden:
        lines += _wrapped(_(MORE).format(count=hidden, folder=folder, step=step.id), "  ")
    return lines


def _every_check(result: StepResult) -> list[str]:
    lines = [f"{_(result.step.title)} ({_points(result.earned)}/{_points(result.possible)})"]
    for check in result.checks:
        lines.append(_check_head(check, PASSED_MARK if check.passed else FAILED_MARK))
        if not check.passed:
            lines += _wrapped(check.message)
    return lines


def text(report: GradeReport, detail: str = NORMAL) -> str:
    """The report for a terminal at the level of ``detail`` (:data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`)."""
    head = _(GRADING).format(submission=report.submission) + (_(PUBLIC_ONLY) if report.public_only else "")
    lines = [head]
    isolation = _(ISOLATION).format(isolation=report.isolation)
    if report.seed is not None:
        lines.append(_(SEED_AND_ISOLATION).format(seed=_(SEED).format(seed=report.seed), isolation=isolation))
    else:
        lines.append(isolation)
    lines += _table(report)
    if detail == QUIET:  # the table only
        return "\n".join(lines)
    if detail == VERBOSE:
        for result in report.steps:
            lines += ["", *_every_check(result)]
    else:
        grouped = failures.of_report(report.steps)
        if any(group.to_start for group in grouped):
            lines += ["", *_to_start(tuple(group for group in grouped if group.to_start))]
        worked = [group for group in grouped if group.failures]
        if worked:  # when every check passed, the table's last line says so
            lines += ["", _(TO_FIX)]
        for group in worked:
            lines += _step_failures(group, report.submission)
    for note in report.notes:
        lines += textwrap.wrap(_(NOTE).format(note=note), WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines)
