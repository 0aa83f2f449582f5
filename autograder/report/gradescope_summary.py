"""The summary Gradescope shows above the tests (``results.json``'s top-level ``output``), in Markdown.

The parts and their order are the terminal's (:mod:`autograder.report.render_terminal`): the per-step
table with the total, the line on the isolation used, the steps not started (the functions still to
write), then each step's first failures grouped by cause (at most
:data:`~autograder.report.render_terminal.SHOWN_PER_STEP`, then how many more: every check is a test
below it). Gradescope renders Markdown in a proportional font, so the table is a Markdown table, not
the terminal's aligned columns. Hidden checks are shown to students only once the grades are published
(their tests are ``after_published``), so the summary is built from the visible checks and says what the
hidden ones are worth. Every text that may quote student code is escaped, so nothing in it is read as
markup. The hidden inputs' seed stays in ``extra_data``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from autograder.base import tasks
from autograder.grading.model import GradeReport
from autograder.i18n import Nn_, _, counted, language
from autograder.report import failures, render_terminal

MARKUP = re.compile(r"([\\`*_{}\[\]<>()#+!|~&-])")
HIDDEN_LATER = Nn_(
    "Hidden checks worth {points} more point are not in this summary; they show below once your instructor "
    "publishes the grades.",
    "Hidden checks worth {points} more points are not in this summary; they show below once your instructor "
    "publishes the grades.",
)


def markdown_text(text: str) -> str:
    """``text`` shown literally in Markdown: every character Markdown could read as markup is escaped."""
    return MARKUP.sub(r"\\\1", text)


def visible(report: GradeReport) -> GradeReport:
    """``report`` with only the checks a student sees before the grades are published (the public ones)."""
    steps = tuple(replace(result, checks=tuple(c for c in result.checks if not c.hidden)) for result in report.steps)
    return replace(report, steps=tuple(result for result in steps if result.checks))


def _points(value: float) -> str:
    return f"{value:g}"


def _table(report: GradeReport) -> list[str]:
    name, earned, points, checks = (markdown_text(_(h)) for h in render_terminal.HEADINGS)
    lines = [f"| {name} | {earned} | {points} | {checks} |", "|---|---:|---:|---:|"]
    for result in report.steps:
        passed = len(result.checks) - len(result.failed)
        lines.append(
            f"| {markdown_text(_(result.step.title))} | {_points(result.earned)} | {_points(result.possible)} "
            f"| {passed}/{len(result.checks)} |"
        )
    passed = sum(len(r.checks) - len(r.failed) for r in report.steps)
    count = sum(len(r.checks) for r in report.steps)
    total = markdown_text(_(render_terminal.TOTAL))
    lines.append(f"| **{total}** | **{_points(report.earned)}** | **{_points(report.possible)}** | {passed}/{count} |")
    return lines


def _to_start(grouped: tuple[failures.StepFailures, ...]) -> list[str]:
    lines = [f"**{markdown_text(_(render_terminal.TO_START).format(handout=tasks.handout_file(language())))}**", ""]
    for group in grouped:
        what = "; ".join([", ".join(group.not_implemented)] * bool(group.not_implemented) + list(group.not_started))
        lines.append(f"- **{markdown_text(_(group.result.step.title))}**: {markdown_text(what)}")
    return lines


def _step_failures(group: failures.StepFailures) -> list[str]:
    result = group.result
    lines = [f"**{markdown_text(_(result.step.title))}** ({_points(result.earned)}/{_points(result.possible)})", ""]
    for entry in group.failures[: render_terminal.SHOWN_PER_STEP]:
        check = entry.check
        head = f"{check.title} [{render_terminal.worth(check.points)}]"
        lines.append(f"- ✗ **{markdown_text(head)}**: {markdown_text(check.message)}")
        if entry.count > 1:
            more = render_terminal.same_cause(entry.count - 1, entry.points)
            lines.append(f"  {markdown_text(more)}")
    hidden = sum(e.count for e in group.failures[render_terminal.SHOWN_PER_STEP :])
    if hidden:
        lines.append(f"- {markdown_text(counted(render_terminal.MORE_LISTED, hidden).format(count=hidden))}")
    return [*lines, ""]


def markdown(report: GradeReport) -> str:
    """The summary of the checks of ``report`` a student sees now, in Markdown (active language)."""
    shown = visible(report)
    lines = [*_table(shown), "", markdown_text(render_terminal.run_line(shown, seed=False)), ""]
    later = report.possible - shown.possible
    if later:
        lines += [markdown_text(counted(HIDDEN_LATER, later).format(points=_points(later))), ""]
    grouped = failures.of_report(shown.steps)
    started = tuple(group for group in grouped if group.to_start)
    if started:
        lines += [*_to_start(started), ""]
    worked = [group for group in grouped if group.failures]
    if worked:
        lines += [f"**{markdown_text(_(render_terminal.TO_FIX))}**", ""]
    for group in worked:
        lines += _step_failures(group)
    lines += [markdown_text(_(render_terminal.NOTE).format(note=note)) + "\n" for note in report.notes]
    return "\n".join(lines).strip() + "\n"


def instructor_text(report: GradeReport) -> str:
    """The whole report as the terminal shows it (hidden checks and the seed included): ``run_autograder``'s
    stdout, which Gradescope shows to instructors only."""
    return render_terminal.text(report, rerun=False)
