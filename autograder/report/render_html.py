"""The HTML report (``attnlab grade --html``): one self-contained page, its pictures inline.

The page holds the per-step table, then every failed check of every step with
its message, and for each failed check whose value is a matrix the heatmaps of
:mod:`autograder.report.render_figures` (expected, yours, difference), once per
cause (:mod:`autograder.report.failures`): the later checks of the same cause
point to the first one's. When an
attention step was graded it also shows the student's attention weights on the
worked example beside the chapter's. Text from student code is HTML-escaped
here (it was control-character escaped where it entered the grader). Each
step's handout reference (the one :func:`autograder.judge.messages.handout` writes
into its messages) is a link to that section of the handout's HTML page.
"""

from __future__ import annotations

import html
from typing import TypeGuard

import numpy as np

from autograder.base import chapter, tasks
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.i18n import N_, _, language
from autograder.judge import messages
from autograder.judge.evidence import KEY_POSITION, QUERY_POSITION, WORKED_EXAMPLE, Evidence
from autograder.report import failures, htmlpage, render_figures, render_terminal

ATTENTION_STEPS = ("softmax", "scaling", "mask")  # steps whose answer includes attention weights
TITLE = N_("Lab 7 feedback: {submission}")
FAILED_HEADING = N_("Failed checks, step by step")
NONE_FAILED = N_("Every check passed.")
WORKED_HEADING = N_("Your attention weights on the worked example")
WORKED_TEXT = N_(
    "The chapter's sentence kedi sütü içti: each row is a query token, each column a key token, and each "
    "row of weights sums to 1."
)
NO_WEIGHTS = N_("No weights came back from your code on the worked example yet, so only the chapter's are shown.")
NO_REPORT = N_("0 points: this submission could not be graded.")
CHECKS_COST = N_("Checks it costs: {titles}")
PICTURE = N_("Heatmaps of expected, yours and their difference for {call}")
SAME_PICTURE = N_("The same cause as “{title}” above: its heatmaps show it.")

STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; line-height: 1.45; color: #1d1d1d; max-width: 62rem;
       margin: 1.5rem auto; padding: 0 1rem; }
table { border-collapse: collapse; margin: .8rem 0; }
th, td { border: 1px solid #d0d0d0; padding: .2rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.full td { background: #eef6ee; } tr.zero td { background: #fbeeee; } tfoot td { font-weight: bold; }
.check { border-left: 4px solid #c0392b; padding: .1rem .8rem; margin: .8rem 0; }
.check.todo { border-color: #d4a017; }
.message { white-space: pre-wrap; font-size: .95em; }
img { max-width: 100%; height: auto; display: block; margin: .4rem 0; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: .9em; }
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def handout_page(lang: str) -> str:
    """The handout's HTML page in ``lang`` as the lab folder holds it (``handouts/lab07_attention.tr.html``)."""
    return tasks.handout_file(lang).removesuffix(".md") + ".html"


def _linked(escaped: str, step: tasks.Step, page: str) -> str:
    """``escaped`` (HTML) with the step's handout reference made a link to its section of ``page``."""
    reference = _e(messages.handout(step))
    link = f'<a href="{_e(page)}#{_e(step.anchor)}">{reference}</a>'
    return escaped.replace(reference, link)


def _points(value: float) -> str:
    return f"{value:g}"


def table(report: GradeReport) -> str:
    """The per-step table as HTML."""
    names = [_(h) for h in render_terminal.HEADINGS]
    rows = []
    for result in report.steps:
        passed = len(result.checks) - len(result.failed)
        kind = "full" if not result.failed else "zero" if result.earned == 0 else ""
        rows.append(
            f'<tr class="{kind}"><td><a href="#step-{result.step.id}">{_e(_(result.step.title))}</a></td>'
            f"<td>{_points(result.earned)}</td><td>{_points(result.possible)}</td>"
            f"<td>{passed}/{len(result.checks)}</td></tr>"
        )
    passed = sum(len(r.checks) - len(r.failed) for r in report.steps)
    count = sum(len(r.checks) for r in report.steps)
    return (
        "<table><thead><tr>" + "".join(f"<th>{_e(n)}</th>" for n in names) + "</tr></thead><tbody>"
        + "".join(rows) + "</tbody>"
        f"<tfoot><tr><td>{_e(_(render_terminal.TOTAL))}</td><td>{_points(report.earned)}</td>"
        f"<td>{_points(report.possible)}</td><td>{passed}/{count}</td></tr></tfoot></table>"
    )  # fmt: skip


def _drawable(evidence: Evidence | None) -> TypeGuard[Evidence]:
    """Whether a check's evidence is drawn: a failed check's array of at least one axis."""
    return evidence is not None and not evidence.passed and evidence.expected.ndim > 0


def pictures(evidence: Evidence | None) -> str:
    """The heatmaps of one check's evidence as an inline image, or nothing when there is none."""
    if not _drawable(evidence):
        return ""
    alt = _(PICTURE).format(call=evidence.call)
    return f'<img class="heatmaps" alt="{_e(alt)}" src="{render_figures.data_uri(render_figures.heatmaps(evidence))}">'


def _check(check: CheckResult, step: tasks.Step, page: str, shown: CheckResult | None = None) -> str:
    """One failed check: its title, its message and its heatmaps; or, when ``shown`` (a check of the same cause
    above it) already has them, a line that points there."""
    head = f"{_e(check.title)} [{_e(render_terminal.worth(check.points))}]"
    if shown is not None and shown is not check and _drawable(check.evidence):
        drawn = f'<p class="same">{_e(_(SAME_PICTURE).format(title=shown.title))}</p>'
    else:
        drawn = pictures(check.evidence)
    return (
        f'<div class="check"><p><b>{head}</b></p><p class="message">{_linked(_e(check.message), step, page)}</p>'
        f"{drawn}</div>"
    )


def step_failures(result: StepResult, page: str | None = None) -> str:
    """One step's failures: the functions not written yet, then every other failed check with its pictures, drawn
    once per cause (``page``: the handout's HTML page the references link to; default: the lab folder's, in the
    active language)."""
    page = page or handout_page(language())
    group = failures.of_step(result)
    todo = [c for c in result.failed if failures.is_to_start(c)]
    heads = [messages.not_implemented(result.step, list(group.not_implemented))] * bool(group.not_implemented)
    heads += list(group.not_started)
    parts = []
    if todo:
        parts.append(
            '<div class="check todo">'
            + "".join(f"<p><b>{_linked(_e(head), result.step, page)}</b></p>" for head in heads)
            + f"<p>{_e(_(CHECKS_COST).format(titles='; '.join(c.title for c in todo)))}</p></div>"
        )
    # a cause's heatmaps once, on its first check (a wrong softmax upstream fails a dozen checks alike: one picture
    # shows it, and each picture costs the batch a fifth of a second to draw)
    shown: dict[int, CheckResult] = {}  # id of a check -> the check of its cause whose heatmaps are drawn
    for entry in group.failures:
        first = next((c for c in entry.checks if _drawable(c.evidence)), None)
        if first is not None:
            shown.update({id(c): first for c in entry.checks})
    parts += [_check(c, result.step, page, shown.get(id(c))) for c in result.failed if not failures.is_to_start(c)]
    return "\n".join(parts)


def worked_example_weights(report: GradeReport) -> np.ndarray | None:
    """The student's attention weights on the worked example, if a check recorded them.

    A check that exhibits them (:data:`WORKED_EXAMPLE`) says so, and the last such
    check wins: the scaling step's ``attention`` on the worked example comes after
    the softmax step's ``softmax`` of its scores. Otherwise a failed check whose
    expected value is the chapter's weight matrix of the worked example holds the
    student's weights for exactly those scores.
    """
    chapter_weights = np.asarray(chapter.value("T72-A"), dtype=float)
    found = [c.evidence for r in report.steps for c in r.checks if c.evidence is not None]
    for evidence in reversed(found):
        if evidence.exhibit == WORKED_EXAMPLE:
            return evidence.got
    for evidence in found:
        if evidence.expected.shape == chapter_weights.shape and np.allclose(evidence.expected, chapter_weights):
            return evidence.got
    return None


def _worked_example(report: GradeReport) -> str:
    if not any(r.step.id in ATTENTION_STEPS for r in report.steps):
        return ""
    chapter_weights = chapter.value("T72-A")
    yours = worked_example_weights(report)
    exhibits = [yours] if yours is not None else []
    png = render_figures.weights_side_by_side(
        chapter_weights, yours, chapter.tokens(), (_(QUERY_POSITION), _(KEY_POSITION))
    )
    note = "" if exhibits else f"<p>{_e(_(NO_WEIGHTS))}</p>"
    return (
        f'<h2 id="worked-example">{_e(_(WORKED_HEADING))}</h2><p>{_e(_(WORKED_TEXT))}</p>{note}'
        f'<img class="worked" alt="{_e(_(WORKED_HEADING))}" src="{render_figures.data_uri(png)}">'
    )


def body(report: GradeReport, handout: str | None = None) -> str:
    """The page's content (no ``<html>`` around it): also what the notebook feedback embeds. ``handout``: the URL
    of the handout's HTML page, relative to where the page is written (default: :func:`handout_page`)."""
    head = _(render_terminal.GRADING).format(submission=report.submission)
    if report.public_only:
        head += _(render_terminal.PUBLIC_ONLY)
    # the page is the student's feedback (grade-batch's students/<id>.html): no hidden-input seed on it
    parts = [f"<h1>{_e(head)}</h1>", table(report), f"<p>{_e(render_terminal.run_line(report, seed=False))}</p>"]
    parts += [f"<p>{_e(_(render_terminal.NOTE).format(note=note))}</p>" for note in report.notes]
    parts.append(_worked_example(report))
    failed = [r for r in report.steps if r.failed]
    parts.append(f"<h2>{_e(_(FAILED_HEADING) if failed else _(NONE_FAILED))}</h2>")
    for result in failed:
        parts.append(
            f'<h3 id="step-{result.step.id}">{_e(_(result.step.title))} '
            f"({_points(result.earned)}/{_points(result.possible)})</h3>"
        )
        parts.append(step_failures(result, handout))
    return "\n".join(p for p in parts if p)


def page(report: GradeReport, title: str | None = None, *, handout: str | None = None) -> str:
    """The whole self-contained page (titled after the submission unless ``title`` is given; ``handout``: see
    :func:`body`)."""
    title = title or _(TITLE).format(submission=report.submission)
    return htmlpage.page(body(report, handout), title=title, style=STYLE, lang=language())


def failure_page(title: str, reason: str) -> str:
    """The page of a submission that has no report (e.g. a batch grader's row with its reason): 0 points, why."""
    content = f"<h1>{_e(title)}</h1><p><b>{_e(_(NO_REPORT))}</b> {_e(reason)}</p>"
    return htmlpage.page(content, title=title, style=STYLE, lang=language())
