"""``nbgrader export`` in the course: nbgrader's CSV, plus a row for every hand-in nbgrader could not autograde.

nbgrader scores a submission only through its notebook. A hand-in without one is skipped by ``autograde`` with
a log line and is missing from nbgrader's export; a renamed or unreadable notebook fails its autograde and
exports as a silent 0. The kit's rule, once for every path: **a hand-in gets the points of its ``.py`` files**.
So for each ``submitted/<student>/<assignment>/`` that has no autograded notebook, :class:`KitCsvExport` grades
the hand-in exactly as ``attnlab grade-batch COURSE`` does (:mod:`autograder.deliver.batch.job`: the course's private
folder, secret, seed of that student id and limits), writes those points, and says why in the ``attnlab_note``
column; the notebook's written answers score 0 there (nbgrader never saw them). Every other row is nbgrader's,
written with the csv module (nbgrader's own plugin does not quote a name holding a comma).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import ExportPlugin

from autograder.deliver.batch import job as batch_job
from autograder.deliver.batch.records import cell
from autograder.deliver.nbgrader_course.private import Private
from autograder.deliver.nbgrader_course.run import limits_from
from autograder.grading import engine, serialize

KEYS = (
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
)  # fmt: skip  (nbgrader's CsvExportPlugin's columns, in its order)
NOTE = "attnlab_note"
NO_NOTEBOOK = "no notebook in the hand-in"
RENAMED = "the notebook is named {names}, not {expected}"
UNREADABLE = "{name} cannot be read as a notebook ({error})"
NOT_AUTOGRADED = "nbgrader autograde left no graded notebook (see its log)"
KIT_POINTS = (
    "nbgrader could not autograde this hand-in ({why}); the points are attnlab grade-batch's for its .py files, "
    "and the notebook's written answers score 0"
)
NOT_GRADED = "nbgrader could not autograde this hand-in ({why}), and the kit could not grade it either: {reason}"
NO_HAND_IN = "no hand-in"


@dataclass(frozen=True)
class KitScore:
    """The kit's points for one hand-in nbgrader did not autograde, and the note that says why."""

    points: float
    note: str


class KitCsvExport(ExportPlugin):
    """nbgrader's CSV with one more column, ``attnlab_note``, and a row for every hand-in (see the module)."""

    def export(self, gradebook: Gradebook) -> None:
        coursedir = CourseDirectory(parent=self)
        destination = Path(self.to or "grades.csv")
        self.log.info("Exporting grades to %s", destination)
        rows = []
        for assignment in gradebook.assignments:
            if self.assignment and assignment.name not in map(str, self.assignment):
                continue
            handed_in = _hand_ins(coursedir, assignment.name)
            students = {student.id: student for student in gradebook.students}
            for student_id in sorted(set(students) | set(handed_in)):
                if self.student and student_id not in map(str, self.student):
                    continue
                rows.append(self._row(gradebook, coursedir, assignment, students.get(student_id), student_id))
        with destination.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=[*KEYS, NOTE])
            writer.writeheader()
            for row in rows:  # text a student chose is never a spreadsheet formula (batch.records.cell)
                writer.writerow({key: cell(value) if isinstance(value, str) else value for key, value in row.items()})

    def _row(self, gradebook: Gradebook, coursedir: CourseDirectory, assignment, student, student_id: str) -> dict:
        row = {
            "assignment": assignment.name,
            "duedate": assignment.duedate or "",
            "student_id": student_id,
            "last_name": (student.last_name if student else None) or "",
            "first_name": (student.first_name if student else None) or "",
            "email": (student.email if student else None) or "",
            "max_score": assignment.max_score,
            NOTE: "",
        }
        try:
            submission = gradebook.find_submission(assignment.name, student_id)
        except MissingEntry:
            submission = None
        folder = Path(coursedir.format_path(coursedir.submitted_directory, student_id, assignment.name))
        if folder.is_dir() and not _autograded(coursedir, assignment, student_id):
            kit = kit_score(coursedir, assignment.name, student_id, [n.name for n in assignment.notebooks])
            self.log.warning("attnlab: %s: %s", student_id, kit.note)
            timestamp = coursedir.get_existing_timestamp(str(folder))
            points = round(kit.points, 6)
            return row | {
                "timestamp": timestamp or "",
                "raw_score": points,
                "late_submission_penalty": 0.0,
                "score": points,
                NOTE: kit.note,
            }
        if submission is None:
            return (
                row
                | {"timestamp": "", "raw_score": 0.0, "late_submission_penalty": 0.0, "score": 0.0}
                | {NOTE: NO_HAND_IN}
            )
        penalty = submission.late_submission_penalty or 0.0
        return row | {
            "timestamp": submission.timestamp or "",
            "raw_score": submission.score,
            "late_submission_penalty": penalty,
            "score": max(0.0, submission.score - penalty),
        }


def _hand_ins(coursedir: CourseDirectory, assignment: str) -> set[str]:
    """The students with a hand-in folder ``submitted/<student>/<assignment>/``."""
    pattern = Path(coursedir.format_path(coursedir.submitted_directory, "*", assignment))
    return {path.parent.name for path in pattern.parent.parent.glob(f"*/{pattern.name}") if path.is_dir()}


def _autograded(coursedir: CourseDirectory, assignment, student_id: str) -> bool:
    """Whether nbgrader left an autograded notebook for each of the assignment's notebooks."""
    folder = Path(coursedir.format_path(coursedir.autograded_directory, student_id, assignment.name))
    return all((folder / f"{notebook.name}.ipynb").is_file() for notebook in assignment.notebooks)


def why_not_autograded(folder: Path, notebooks: list[str]) -> str:
    """Why nbgrader did not autograde the hand-in ``folder``, from what it holds."""
    found = sorted(path.name for path in folder.glob("*.ipynb") if path.is_file())
    expected = [f"{name}.ipynb" for name in notebooks]
    if not found:
        return NO_NOTEBOOK
    missing = [name for name in expected if name not in found]
    if missing:
        return RENAMED.format(names=", ".join(found), expected=", ".join(missing))
    for name in expected:
        try:
            nbformat.read(folder / name, as_version=4)
        except Exception as error:  # whatever nbformat rejects: nbgrader's autograde failed on it too
            return UNREADABLE.format(name=name, error=" ".join(f"{type(error).__name__}: {error}".split())[:200])
    return NOT_AUTOGRADED


def kit_score(coursedir: CourseDirectory, assignment: str, student_id: str, notebooks: list[str]) -> KitScore:
    """The points ``attnlab grade-batch COURSE`` gives the student's hand-in, and the note saying why they are
    the kit's (0 and the reason when the kit cannot grade it either)."""
    course = Path(coursedir.root)
    hand_in = Path(coursedir.format_path(coursedir.submitted_directory, student_id, assignment))
    why = why_not_autograded(hand_in, notebooks)
    private = Private(course / "private")
    settings = private.settings()
    secret = private.secret() or engine.DEFAULT_SECRET
    folder = hand_in.parent.resolve()  # as grade-batch takes it: the student's folder, the lab found inside
    result = batch_job.grade(
        batch_job.Job(
            student=student_id,
            folder=folder,
            digest=batch_job.digest_of(folder),
            hidden=private.hidden,
            reference=private.reference,
            seed=engine.seed_for(secret, student_id),
            limits=limits_from(settings.limits),
            deadline_s=settings.deadline_s,
            given=private.reference,
            isolation=settings.isolation,
        )
    )
    if not result.graded:
        return KitScore(0.0, NOT_GRADED.format(why=why, reason=result.reason))
    return KitScore(serialize.report_from_dict(result.report).earned, KIT_POINTS.format(why=why))
