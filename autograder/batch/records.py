"""Each student's result on disk, and the class's CSV for a gradebook.

::

    OUT/students/<student>.json   the result: student, digest, reason, seconds, the report document
    OUT/students/<student>.html   the student's feedback page
    grades.csv                    one row per student: id, points per step, total, max_score, status, reason

A result file is written as soon as the student is graded (a batch stopped
half-way keeps what it did), through a temporary file so it is never half
written. The CSV is plain comma-separated UTF-8 with a header row, which
Canvas, Moodle and Gradescope import (choose ``student_id`` and ``total``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from autograder import tasks
from autograder.batch.job import Result
from autograder.report import html_page, serialize
from autograder.report.model import GradeReport

STUDENTS = "students"
SAFE = re.compile(r"[^\w.@+-]")


def file_stem(student: str) -> str:
    """``student`` as a file name (characters outside letters, digits and ``. @ + -`` become ``_``)."""
    stem = SAFE.sub("_", student).lstrip(".")
    return stem or "_"


def result_path(out: Path, student: str) -> Path:
    return Path(out) / STUDENTS / f"{file_stem(student)}.json"


def write(out: Path, result: Result) -> Path:
    """Write the result and the feedback page of one student; the result's path."""
    path = result_path(out, result.student)
    data = {
        "student": result.student,
        "digest": result.digest,
        "reason": result.reason,
        "seconds": result.seconds,
        "report": result.report,
    }
    _write_atomically(path, serialize.json_text(data))
    title = f"Lab 7 feedback: {result.student}"
    report = report_of(result)
    page = html_page.page(report, title) if report else html_page.failure_page(title, result.reason)
    _write_atomically(path.with_suffix(".html"), page)
    return path


def read(out: Path, student: str) -> Result | None:
    """The result written for ``student``, or None (none, or unreadable: graded again)."""
    path = result_path(out, student)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        result = Result(
            str(data["student"]), str(data["digest"]), data.get("report"), str(data.get("reason", "")), data["seconds"]
        )
        if result.report is not None:
            serialize.report_from_dict(result.report)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return result


def report_of(result: Result) -> GradeReport | None:
    return serialize.report_from_dict(result.report) if result.report is not None else None


def write_csv(path: Path, results: Iterable[Result], steps: tuple[str, ...], max_score: float) -> Path:
    """The gradebook CSV: one row per student (a failed one with 0 points, status ``failed`` and its reason)."""
    rows = []
    for result in sorted(results, key=lambda r: r.student):
        report = report_of(result)
        earned = {s.step.id: s.earned for s in report.steps} if report else {}
        rows.append(
            [result.student]
            + [_points(earned.get(step, 0.0)) for step in steps]
            + [
                _points(report.earned if report else 0.0),
                _points(report.possible if report else max_score),
                "graded" if report else "failed",
                result.reason,
            ]
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", newline="", encoding="utf-8", dir=path.parent, delete=False) as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", *steps, "total", "max_score", "status", "reason"])
        writer.writerows(rows)
    os.replace(handle.name, path)
    return path


def steps_graded(steps: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(steps) if steps else tuple(tasks.BY_ID)


def _points(value: float) -> str:
    return f"{value:g}"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".partial") as f:
        f.write(text)
    os.replace(f.name, path)
