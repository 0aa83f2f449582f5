"""Each student's result on disk, and the class's CSV for a gradebook.

::

    OUT/students/<student>.json   the result: student, digest, reason, seconds, the report document
    OUT/students/<student>.html   the student's feedback page
    grades.csv                    one row per student: id, points per step, total, max_score, status, reason,
                                  review (a hand-in like another's: autograder.deliver.batch.similarity)

A result file is written as soon as the student is graded (a batch stopped
half-way keeps what it did), through a temporary file so it is never half
written. The CSV is plain comma-separated UTF-8 with a header row, which
Canvas, Moodle and Gradescope import (choose ``student_id`` and ``total``).
A row whose grading failed for the grader's reason (status ``grader failed``)
has no points at all, so that a gradebook never records the grader's failure
as a student's 0. Every cell a hand-in could have chosen (ids from folder
names, reasons naming files) is control-character escaped, and a cell that a
spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) is quoted
with a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

from autograder.base import tasks
from autograder.base.files import write_atomically
from autograder.base.text import clean
from autograder.deliver.batch.job import Result
from autograder.grading import serialize
from autograder.grading.model import GradeReport
from autograder.i18n import _
from autograder.report import render_html

STUDENTS = "students"
SAFE = re.compile(r"[^\w.@+-]")
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet cell a formula (CSV injection)
NO_ROW = "its result could not be read into the CSV ({error})"


def file_stem(student: str) -> str:
    """``student`` as a file name (characters outside letters, digits and ``. @ + -`` become ``_``)."""
    stem = SAFE.sub("_", student).lstrip(".")
    return stem or "_"


def result_path(out: Path, student: str) -> Path:
    return Path(out) / STUDENTS / f"{file_stem(student)}.json"


def write(out: Path, result: Result, *, page: bool = True) -> Path:
    """Write the result and the feedback page of one student; the result's path. ``page=False``: the page only
    where there is none yet (a change of the review flags, which the student's page never shows: the page written
    with the result is the same, and drawing it again cost the coordinator a decoded report per flagged student)."""
    path = result_path(out, result.student)
    data = {
        "student": result.student,
        "digest": result.digest,
        "reason": result.reason,
        "seconds": result.seconds,
        "report": result.report,
        "grader_failed": result.grader_failed,
        "review": list(result.review),
    }
    write_atomically(path, serialize.json_text(data))
    if not page and path.with_suffix(".html").is_file():
        return path
    title = _(render_html.TITLE).format(submission=clean(result.student, 200))
    try:
        report = report_of(result) if result.graded else None
        html = render_html.page(report, title) if report else render_html.failure_page(title, result.reason)
    except Exception as error:  # the page is a convenience: the result is kept whatever a report holds
        html = render_html.failure_page(title, clean(f"{result.reason} (no feedback page: {error})", 500))
    write_atomically(path.with_suffix(".html"), html)
    return path


def read(out: Path, student: str) -> Result | None:
    """The result written for ``student``, or None (none, or unreadable: graded again)."""
    path = result_path(out, student)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        result = Result(
            str(data["student"]),
            str(data["digest"]),
            data.get("report"),
            str(data.get("reason", "")),
            data["seconds"],
            bool(data.get("grader_failed", False)),
            tuple(str(text) for text in data.get("review", ())),
        )
        if result.report is not None:
            serialize.report_from_dict(result.report)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return result


def report_of(result: Result) -> GradeReport | None:
    return serialize.report_from_dict(result.report) if result.report is not None else None


def write_csv(path: Path, results: Iterable[Result], steps: tuple[str, ...], max_score: float) -> Path:
    """The gradebook CSV: one row per student (a failed one with 0 points, status ``failed`` and its reason; one
    the grader failed on with no points, status ``grader failed``). A result whose report cannot be read into a row
    gets the grader-failed row that says so: one student never costs the CSV."""
    rows = []
    for result in sorted(results, key=lambda r: r.student):
        try:
            rows.append(_row(result, steps, max_score))
        except Exception as error:
            unread = Result(result.student, result.digest, reason=NO_ROW.format(error=clean(repr(error), 300)),
                            grader_failed=True, review=result.review)  # fmt: skip
            rows.append(_row(unread, steps, max_score))
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(["student_id", *steps, "total", "max_score", "status", "reason", "review"])
    writer.writerows(rows)
    return write_atomically(Path(path), buffer.getvalue())


def _row(result: Result, steps: tuple[str, ...], max_score: float) -> list[str]:
    report = report_of(result) if result.graded else None
    earned = {s.step.id: s.earned for s in report.steps} if report else {}
    points = [_points(earned.get(step, 0.0)) for step in steps] + [_points(report.earned if report else 0.0)]
    if result.grader_failed:
        points = [""] * len(points)
    possible = _points(report.possible if report else max_score)
    review = cell("; ".join(result.review))
    return [cell(result.student), *points, possible, result.status, cell(result.reason), review]


def cell(text: str) -> str:
    """``text`` safe in a spreadsheet: control characters escaped, never read as a formula."""
    shown = clean(text)
    return "'" + shown if shown.startswith(FORMULA) else shown


def steps_graded(steps: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(steps) if steps else tuple(tasks.BY_ID)


def _points(value: float) -> str:
    return f"{value:g}"
