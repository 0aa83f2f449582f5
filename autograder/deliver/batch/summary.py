"""The class summary of a batch: for every step, how many students lost points and the mistakes most named.

Written as a Markdown table (``summary.md``, also printed), a bar chart
(``summary.png``: students who lost points per step, each bar labelled with
its most common mistake) and an HTML page holding both with the submissions
that could not be graded (``summary.html``).
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks
from autograder.deliver.batch.job import Result
from autograder.deliver.batch.records import report_of
from autograder.deliver.batch.similarity import Flag
from autograder.judge.diagnose.catalog import MISTAKES

TOP = 3  # mistakes shown per step
KINDS = {  # what a flagged group shares, as the summary says it
    "timing": "timing reports alike (raw times the same up to a common scale)",
    "predictions": "prediction sets alike, with unusual entries (wrong and uncommon, or over-precise) in common",
}
FILES = {"table": "summary.md", "chart": "summary.png", "page": "summary.html"}


@dataclass(frozen=True)
class StepSummary:
    """One step over the class: students graded on it, those who lost points, the mean, the common mistakes."""

    step: tasks.Step
    graded: int
    lost: int
    mean: float
    mistakes: tuple[tuple[str, int], ...]  # (mistake id, students whose failed checks named it), most common first


@dataclass(frozen=True)
class ClassSummary:
    students: int
    failed: tuple[tuple[str, str], ...]  # (student, reason) of the submissions that have no report
    steps: tuple[StepSummary, ...]
    mean_total: float
    max_total: float
    grader_failed: int = 0  # of ``failed``: the rows the grader itself failed on (not the students' doing)
    review: tuple[tuple[str, str], ...] = ()  # (the students of a group, what they share) for an instructor to look at


def most_common(named: Counter[str], top: int = TOP) -> tuple[tuple[str, int], ...]:
    """The ``top`` mistakes named most often, ties by name: the same order whatever order the results came in
    (a Dask cluster returns them as they finish; ``Counter.most_common`` keeps ties in the order first met)."""
    return tuple(sorted(named.items(), key=lambda item: (-item[1], item[0]))[:top])


def summarise(results: Iterable[Result], flags: Iterable[Flag] = ()) -> ClassSummary:
    """The summary of the students' results (failed ones are counted apart, not as zeros per step)."""
    results = list(results)
    reports = [r for r in (report_of(result) for result in results if result.graded) if r is not None]
    steps = []
    for step in tasks.STEPS:
        graded = [report.step(step.id) for report in reports if any(s.step.id == step.id for s in report.steps)]
        if not graded:
            continue
        named: Counter[str] = Counter()
        for result in graded:
            named.update({check.mistake for check in result.failed if check.mistake})
        lost = sum(result.earned < result.possible for result in graded)
        mean = sum(result.earned for result in graded) / len(graded)
        steps.append(StepSummary(step, len(graded), lost, mean, most_common(named)))
    return ClassSummary(
        students=len(results),
        failed=tuple(sorted((r.student, r.reason) for r in results if not r.graded)),
        steps=tuple(steps),
        mean_total=sum(r.earned for r in reports) / len(reports) if reports else 0.0,
        max_total=max((r.possible for r in reports), default=0.0),
        grader_failed=sum(r.grader_failed for r in results),
        review=tuple(sorted((", ".join(f.students), KINDS[f.kind]) for f in flags)),
    )


def _mistakes(step: StepSummary) -> str:
    return ", ".join(f"{mistake} ({count})" for mistake, count in step.mistakes) or "-"


def table(summary: ClassSummary) -> str:
    """The summary as a Markdown table, with a line for the whole class."""
    lines = [
        f"{summary.students} students: {summary.students - len(summary.failed)} graded, mean "
        f"{summary.mean_total:.1f} of {summary.max_total:g} points; not graded {len(summary.failed)}"
        + (f" ({summary.grader_failed} because the grader itself failed)." if summary.grader_failed else "."),
        "",
        "| step | graded | lost points | mean | most common mistakes (students) |",
        "|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {s.step.title} | {s.graded} | {s.lost} | {s.mean:.1f} of {s.step.points:g} | {_mistakes(s)} |"
        for s in summary.steps
    ]
    if summary.review:
        lines += ["", "For review (hand-ins alike; no score was changed):", ""]
        lines += [f"- {students}: {what}" for students, what in summary.review]
    return "\n".join(lines)


def figure(summary: ClassSummary):  # -> matplotlib.figure.Figure (matplotlib is imported only when drawing)
    """The bar chart: students who lost points per step, each bar labelled with its most common mistake.

    The axis ends at the number of students graded (nobody can lose points past the class): a label goes
    inside its bar when the bar is long, else right of it.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    steps = list(reversed(summary.steps))
    drawing = Figure(figsize=(9, 0.45 * len(steps) + 1.4), dpi=100, layout="constrained")
    FigureCanvasAgg(drawing)
    axes = drawing.add_subplot()
    bars = axes.barh([s.step.title for s in steps], [s.lost for s in steps], color="#c0504d")
    graded = max((s.graded for s in summary.steps), default=0)
    top = max(graded, 1)
    for bar, step in zip(bars, steps):
        if step.mistakes:
            inside = bar.get_width() > top / 2
            axes.annotate(
                f" {step.mistakes[0][0]} ({step.mistakes[0][1]}) ",
                (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                va="center",
                ha="right" if inside else "left",
                color="white" if inside else "black",
                fontsize=8,
            )
    axes.set_xlim(0, top)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(f"students who lost points (of {graded} graded)")
    axes.set_title("Where the class lost points, with the mistake named most often")
    return drawing


def chart(summary: ClassSummary) -> bytes:
    """The bar chart (:func:`figure`) as PNG bytes."""
    buffer = io.BytesIO()
    figure(summary).savefig(buffer, format="png")
    return buffer.getvalue()


def page(summary: ClassSummary, png: bytes) -> str:
    """The HTML page: the table, the chart (embedded) and the submissions that could not be graded."""
    rows = "".join(
        f"<tr><td>{html.escape(s.step.title)}</td><td>{s.graded}</td><td>{s.lost}</td>"
        f"<td>{s.mean:.1f} of {s.step.points:g}</td><td>{_mistake_cells(s)}</td></tr>"
        for s in summary.steps
    )
    failed = (
        "".join(f"<li><b>{html.escape(a)}</b>: {html.escape(b)}</li>" for a, b in summary.failed) or "<li>none</li>"
    )
    review = (
        "".join(f"<li><b>{html.escape(a)}</b>: {html.escape(b)}</li>" for a, b in summary.review) or "<li>none</li>"
    )
    image = base64.b64encode(png).decode("ascii")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Lab 7: class summary</title>
<style>body{{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}}
table{{border-collapse:collapse;width:100%}}th,td{{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}}
</style></head><body><h1>Lab 7: class summary</h1>
<p>{html.escape(table(summary).splitlines()[0])}</p>
<table><thead><tr><th>step</th><th>graded</th><th>lost points</th><th>mean</th><th>most common mistakes</th></tr>
</thead><tbody>{rows}</tbody></table>
<p><img alt="students who lost points per step" src="data:image/png;base64,{image}"></p>
<h2>Not graded</h2><ul>{failed}</ul>
<h2>For review: hand-ins alike (no score was changed)</h2><ul>{review}</ul>
</body></html>
"""


def _mistake_cells(step: StepSummary) -> str:
    return "<br>".join(
        f"<b>{html.escape(m)}</b> ({n}): {html.escape(MISTAKES[m].text) if m in MISTAKES else ''}"
        for m, n in step.mistakes
    )


def write(summary: ClassSummary, out: Path) -> dict[str, Path]:
    """Write the table, the chart and the page into ``out``; their paths by kind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    png = chart(summary)
    paths = {kind: out / name for kind, name in FILES.items()}
    paths["table"].write_text(table(summary) + "\n", encoding="utf-8")
    paths["chart"].write_bytes(png)
    paths["page"].write_text(page(summary, png), encoding="utf-8")
    return paths
