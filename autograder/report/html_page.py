"""A report as one self-contained HTML page: the per-step table and every failed check with its message.

Minimal on purpose (``attnlab grade-batch`` writes one per student); everything
from the report is HTML-escaped, since messages quote what student code
returned or raised.
"""

from __future__ import annotations

import html

from autograder.report.model import GradeReport

STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}
td.n{text-align:right}.full{color:#17622b}.lost{color:#9b1c1c}li{margin:.4rem 0}.why{color:#555}"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title><style>{style}</style></head>
<body><h1>{title}</h1>
<p>{summary}</p>
<table><thead><tr><th>step</th><th>earned</th><th>points</th><th>checks passed</th></tr></thead>
<tbody>{rows}</tbody></table>
{failures}
{notes}
</body></html>
"""


def _points(value: float) -> str:
    return f"{value:g}"


def page(report: GradeReport, title: str) -> str:
    """The page of ``report`` under the heading ``title``."""
    rows, failures = [], []
    for result in report.steps:
        passed = len(result.checks) - len(result.failed)
        kind = "full" if result.earned >= result.possible else "lost"
        rows.append(
            f'<tr class="{kind}"><td><a href="#{html.escape(result.step.id)}">{html.escape(result.step.title)}</a></td>'
            f'<td class="n">{_points(result.earned)}</td><td class="n">{_points(result.possible)}</td>'
            f'<td class="n">{passed}/{len(result.checks)}</td></tr>'
        )
        if result.failed:
            items = "".join(
                f"<li><b>{html.escape(check.title)}</b> [{_points(check.points)} pt]"
                f"{' (hidden)' if check.hidden else ''}<br>{html.escape(check.message)}</li>"
                for check in result.failed
            )
            failures.append(
                f'<h2 id="{html.escape(result.step.id)}">{html.escape(result.step.title)}</h2><ul>{items}</ul>'
            )
    kind = "public checks only" if report.public_only else "public and hidden checks"
    summary = f"<b>{_points(report.earned)} of {_points(report.possible)} points</b> ({kind})"
    if report.seed is not None:
        summary += f"; hidden inputs seed {report.seed}"
    notes = "".join(f'<p class="why">Note: {html.escape(note)}</p>' for note in report.notes)
    return PAGE.format(
        title=html.escape(title),
        style=STYLE,
        summary=summary,
        rows="".join(rows),
        failures="".join(failures),
        notes=notes,
    )


def failure_page(title: str, reason: str) -> str:
    """The page of a submission that has no report: the reason, and 0 points."""
    return PAGE.format(
        title=html.escape(title),
        style=STYLE,
        summary=f"<b>0 points</b>: {html.escape(reason)}",
        rows="",
        failures="",
        notes="",
    )
