"""The terminal rendering of a report: the per-step table first, then the failures grouped by step.

The seed of the hidden inputs and the isolation layer are one line under the
table (what a student reads first is the table). Three levels of detail:
``quiet`` prints the table only; ``normal`` adds,
for each step, the functions not written yet (one line) and its failures
grouped by cause (at most :data:`SHOWN_PER_STEP` of them, with how to see
the rest); ``verbose`` prints every check, passed ones included, each with
its full message. Every word comes from the catalogs (:mod:`autograder.i18n`).
"""

from __future__ import annotations

import shlex
import textwrap

from autograder.base import tasks
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.i18n import N_, SOURCE, Nn_, _, counted, language, ngettext
from autograder.report import failures

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
SEED_AND_ISOLATION = N_("{seed}. {isolation}")  # both on the line under the table: one line fewer to read
TO_FIX = N_("To fix, step by step:")
TO_START = N_("Not implemented yet (each step's section of {handout} explains it):")
STEP_TO_START = "{module}.py: {what}"  # code and the graders' words: the same in every language
MORE = Nn_("… and {count} more failed check: {command}", "… and {count} more failed checks: {command}")
MORE_LISTED = Nn_(  # where every check is shown anyway
    "… and {count} more failed check, listed below", "… and {count} more failed checks, each one listed below"
)
RERUN = "attnlab grade {folder} --step {step} --verbose"  # a command: the same in every language
SAME_CAUSE = Nn_(
    "(the same for {count} more check, {points} in all)", "(the same for {count} more checks, {points} in all)"
)
POINTS = Nn_("{points} point", "{points} points")
PASSED_MARK, FAILED_MARK, REVIEW_MARK = "✓", "✗", "?"
FOR_REVIEW = N_("For review (0 points until an instructor or a grader with the device confirms them):")
STEP_SEPARATOR = " · "  # between the steps of the not-started listing


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


def points_text(points: float) -> str:
    """``points`` with its noun, in the form the active language gives that number (3 points, 1 point)."""
    return counted(POINTS, points).format(points=_points(points))


def same_cause(count: int, points: float) -> str:
    """The note under a failed check that ``count`` more failed for the same cause, worth ``points`` together."""
    return counted(SAME_CAUSE, count).format(count=count, points=points_text(points))


def worth(points: float) -> str:
    """``1 pt``, ``2 pts``, ``0.5 pts`` in the active language."""
    return ngettext("{points} pt", "{points} pts", points).format(points=_points(points))


def _check_head(check: CheckResult, mark: str) -> str:
    return f"  {mark} {check.title} [{worth(check.points)}]"


def _failure_lines(entry: failures.Failure) -> list[str]:
    lines = [_check_head(entry.check, FAILED_MARK)]
    lines += _wrapped(entry.check.message)
    if entry.count > 1:
        lines += _wrapped(same_cause(entry.count - 1, entry.points))
    return lines


def compact_names(names: tuple[str, ...]) -> list[str]:
    """``names`` with a class's methods written once under it: ``KVCache (__init__, append)``, the order kept."""
    out: list[str] = []
    owners: list[str | None] = []
    for name in names:
        owner, _dot, method = name.rpartition(".")
        if owner and owners and owners[-1] == owner:
            out[-1] = out[-1][:-1] + f", {method})"
        else:
            out.append(f"{owner} ({method})" if owner else name)
        owners.append(owner or None)
    return out


def step_to_start(group: failures.StepFailures) -> str:
    """One step's work not there yet, by the file it is written in (the table above names the steps in the
    same order): its functions still to write (a class's methods together), then the graders' words for the rest."""
    named = compact_names(group.not_implemented)
    what = "; ".join([", ".join(named)] * bool(named) + list(group.not_started))
    return STEP_TO_START.format(module=group.result.step.id, what=what)


def _to_start(grouped: tuple[failures.StepFailures, ...]) -> list[str]:
    """Every step with work not there yet, packed into as few lines as fit (steps apart by ``·``): the untouched
    stubs' whole output stays on one screen (40 lines) in every language, each function still named."""
    listing = STEP_SEPARATOR.join(step_to_start(group) for group in grouped)
    packed = textwrap.wrap(
        listing, WIDTH, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False, break_long_words=False
    )
    return [_(TO_START).format(handout=tasks.handout_file(language())), *packed]


def rerun_command(folder: str, step: str, lang: str | None = None) -> str:
    """The command that shows every check of ``step`` in ``folder``, with ``--lang`` when one is given."""
    command = RERUN.format(folder=shlex.quote(folder), step=step)
    return f"{command} --lang {lang}" if lang else command


def _step_failures(group: failures.StepFailures, folder: str | None, lang: str | None) -> list[str]:
    step = group.result.step
    lines = [f"{_(step.title)} ({_points(group.result.earned)}/{_points(group.result.possible)})"]
    for entry in group.failures[:SHOWN_PER_STEP]:
        lines += _failure_lines(entry)
    hidden = sum(e.count for e in group.failures[SHOWN_PER_STEP:])
    if hidden and folder is None:
        lines += _wrapped(counted(MORE_LISTED, hidden).format(count=hidden), "  ")
    elif hidden:
        lines += _wrapped(
            counted(MORE, hidden).format(count=hidden, command=rerun_command(folder, step.id, lang)), "  "
        )
    return lines


def _every_check(result: StepResult) -> list[str]:
    lines = [f"{_(result.step.title)} ({_points(result.earned)}/{_points(result.possible)})"]
    for check in result.checks:
        lines.append(_check_head(check, PASSED_MARK if check.passed else REVIEW_MARK if check.review else FAILED_MARK))
        if not check.passed:
            lines += _wrapped(check.message)
    return lines


def run_line(report: GradeReport, *, seed: bool = True) -> str:
    """The line under the table: the hidden inputs' seed (unless ``seed`` is False) and the isolation layer."""
    isolation = _(ISOLATION).format(isolation=report.isolation)
    if report.seed is None or not seed:
        return isolation
    return _(SEED_AND_ISOLATION).format(seed=_(SEED).format(seed=report.seed), isolation=isolation)


def text(
    report: GradeReport,
    detail: str = NORMAL,
    *,
    lang: str | None = None,
    rerun: bool = True,
    seed: bool = True,
) -> str:
    """The report for a terminal at the level of ``detail`` (:data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`).

    Args:
        lang: the ``--lang`` the hint "and N more failed checks" repeats (default: the active language, unless
            it is the source language, which needs none).
        rerun: whether that hint is the command that shows the rest (False where every check is listed anyway,
            as on Gradescope).
        seed: whether the line under the table shows the hidden inputs' seed.
    """
    head = _(GRADING).format(submission=report.submission) + (_(PUBLIC_ONLY) if report.public_only else "")
    lines = [head, *_table(report), run_line(report, seed=seed)]
    if detail == QUIET:  # the table only
        return "\n".join(lines)
    if detail == VERBOSE:
        for result in report.steps:
            lines += ["", *_every_check(result)]
    else:
        grouped = failures.of_report(report.steps)
        if any(group.to_start for group in grouped):
            lines += ["", *_to_start(tuple(group for group in grouped if group.to_start))]
        review = [check for group in grouped for check in group.for_review]
        if review:
            lines += ["", _(FOR_REVIEW)]
            for check in review:
                lines += [_check_head(check, REVIEW_MARK), *_wrapped(check.message)]
        worked = [group for group in grouped if group.failures]
        if worked:  # when every check passed, the table's last line says so
            lines += ["", _(TO_FIX)]
        shown_lang = lang or (language() if language() != SOURCE else None)
        for group in worked:
            lines += _step_failures(group, report.submission if rerun else None, shown_lang)
    for note in report.notes:
        lines += textwrap.wrap(_(NOTE).format(note=note), WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines)
