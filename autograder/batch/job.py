"""One student's grading as a job: what a coordinator thread or a Dask worker runs.

:func:`grade` finds the lab's files in the student's folder, lays them out
when they need it (a notebook's ``%%writefile`` cells, the toy model's weights
the student left out), and grades them through the warm grader of the machine
it runs on (:mod:`autograder.warm`: one server per machine, one fork per
student, several at once), or a fresh grader process when there is none. It
never raises for a student's reason: a folder without lab files, a deadline or
a failing grader is a :class:`Result` with its ``reason``. Jobs and results are
plain dataclasses, so Dask ships them between machines as they are.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder import submission, tasks
from autograder.engine import GradeOptions
from autograder.report import serialize
from autograder.sandbox.client import Limits
from autograder.warm import client
from autograder.warm import job as warm_job

STOP_GRACE_S = 15.0
OVERRAN = "grading did not finish within {seconds:g} s (code that hangs or runs very slowly)"
GRADER_FAILED = "the grader itself failed ({detail})"
DIGESTED = ("*.py", "*.ipynb", "*.npz", "reports/*")  # what a student's result depends on


@dataclass(frozen=True)
class Job:
    """One student's grading: their folder, the graders, the seed and the limits."""

    student: str
    folder: Path
    digest: str  # of the folder's lab files: a changed hand-in is graded again on resume
    hidden: Path | None
    reference: Path | None
    seed: int | None
    steps: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    deadline_s: float = 900.0
    warm: bool = True
    given: Path | None = None  # a folder with the lab's given data files (the toy model's weights)


@dataclass(frozen=True)
class Result:
    """What grading one student gave: the report document, or why there is none."""

    student: str
    digest: str
    report: dict[str, Any] | None = None  # autograder.report.serialize.report_dict
    reason: str = ""
    seconds: float = 0.0

    @property
    def graded(self) -> bool:
        return self.report is not None


def digest_of(folder: Path) -> str:
    """A digest of the files a student's result depends on (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(p for pattern in DIGESTED for p in Path(folder).rglob(pattern) if p.is_file()):
        digest.update(f"{path.relative_to(folder)}\0{path.stat().st_size}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:32]


def grade(job: Job) -> Result:
    """Grade one student (see the module's description); never raises for the student's reasons."""
    started = time.monotonic()

    def result(**outcome: Any) -> Result:
        return Result(job.student, job.digest, seconds=round(time.monotonic() - started, 3), **outcome)

    located = submission.locate(job.folder)
    if not located.found:
        return result(reason=located.problem)
    work = Path(tempfile.mkdtemp(prefix="attnlab-batch-"))
    try:
        folder = _laid_out(located, job.given, work)
        options = GradeOptions(
            submission=folder,
            hidden=job.hidden,
            reference=job.reference,
            seed=job.seed if job.hidden is not None else None,
            public_only=job.hidden is None,
            steps=job.steps,
            limits=job.limits,
        )
        outcome = client.grade(
            warm_job.HANDLER,
            warm_job.request_for(options),
            deadline_s=job.deadline_s,
            stop_grace_s=STOP_GRACE_S,
            warm=job.warm,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if isinstance(outcome, client.Graded):
        return result(report=serialize.report_dict(replace(outcome.report, submission=job.student)))
    if isinstance(outcome, client.Overran):
        return result(reason=OVERRAN.format(seconds=outcome.seconds))
    return result(reason=GRADER_FAILED.format(detail=outcome.detail))


def _laid_out(located: submission.Located, given_folder: Path | None, work: Path) -> Path:
    """The folder to grade: the student's own, or a copy with the notebook's modules and the missing data files."""
    given = submission.data_files(given_folder) if given_folder is not None else []
    missing = [data for data in given if located.folder is None or not (located.folder / data.name).exists()]
    if located.folder is not None and not missing:
        return located.folder
    return submission.prepare(located, work / tasks.LAB, missing)
