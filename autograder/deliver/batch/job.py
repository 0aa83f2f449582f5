"""One student's grading as a job: what a coordinator thread or a Dask worker runs.

:func:`grade` hands the student's folder to the grader of the machine it runs
on (:mod:`autograder.deliver.warm`: one server per machine, one fork per student,
several at once; a fresh grader process when there is none), whose engine takes
the hand-in into a copy of its own (:mod:`autograder.handin.intake`: the lab's files
found wherever they are, regular files only, no link followed, bounded, the
toy model's weights added where missing) and grades that. It never raises for
a student's reason, and it tells the student's reasons from the grader's:

- graded: the report (and, as its reason, what the intake left out: a link, a
  file the grader may not read);
- not graded for the student's reason (no lab files, past an intake limit, a
  deadline): ``reason``, status ``failed``;
- the grader failed (no space left, a dead fork server, an internal error of a
  check): graded once more, and if it fails again the row says the grader
  failed (status ``grader failed``), never the student's lost points.

Jobs and results are plain dataclasses, so Dask ships them between machines as they are.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograder.base.text import clean
from autograder.deliver.warm import client
from autograder.deliver.warm import job as warm_job
from autograder.grading import serialize
from autograder.grading.engine import GradeOptions
from autograder.grading.model import GradeReport
from autograder.handin import intake
from autograder.sandbox.client import Limits

STOP_GRACE_S = 15.0
OVERRAN = "grading did not finish within {seconds:g} s (code that hangs or runs very slowly)"
GRADER_FAILED = "the grader itself failed ({detail})"
CHECKS_FAILED = "the grader itself failed on {count} checks ({detail})"
RETRIED = "; graded twice, it failed both times"
_stop: ContextVar[client.Stop | None] = ContextVar("attnlab_batch_stop", default=None)  # the job's batch switch
LEFT_OUT = "graded without what could not be taken in: {items}"  # a graded row's reason (its feedback says more)
LEFT_OUT_ITEM = "{path} ({kind})"
MAX_LEFT_OUT = 5  # items a reason names
GRADED, FAILED, GRADER_FAILED_STATUS = "graded", "failed", "grader failed"  # the CSV's status column


@dataclass(frozen=True)
class Job:
    """One student's grading: their folder, the graders, the seed and the limits."""

    student: str
    folder: Path
    digest: str  # of what the intake takes from the folder: a changed hand-in is graded again on resume
    hidden: Path | None
    reference: Path | None
    seed: int | None
    steps: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    deadline_s: float = 900.0
    warm: bool = True
    given: Path | None = None  # a folder with the lab's given data files (the toy model's weights)
    search: bool = True  # the lab's files are somewhere below ``folder`` (False: a private copy is the lab folder)
    isolation: str | None = None  # the weakest isolation layer the grader may use
    left_out: tuple[intake.Ignored, ...] = ()  # what the private copy's intake left out of the hand-in


@dataclass(frozen=True)
class Result:
    """What grading one student gave: the report document, or why there is none (and whose failure that is)."""

    student: str
    digest: str
    report: dict[str, Any] | None = None  # autograder.grading.serialize.report_dict
    reason: str = ""
    seconds: float = 0.0
    grader_failed: bool = False  # the grader's failure, not the student's: no points are recorded for it
    review: tuple[str, ...] = ()  # why an instructor should look (a hand-in like another's): no score changes

    @property
    def graded(self) -> bool:
        return self.report is not None and not self.grader_failed

    @property
    def status(self) -> str:
        return GRADER_FAILED_STATUS if self.grader_failed else GRADED if self.report is not None else FAILED


def digest_of(folder: Path, *, search: bool = True) -> str:
    """A digest of what the intake takes from ``folder`` (names and contents; never a link's target)."""
    return intake.fingerprint(folder, search=search)


def grade(job: Job, stop: client.Stop | None = None) -> Result:
    """Grade one student (see the module's description), once more when the grader failed; never raises for the
    student's reasons. :class:`autograder.deliver.warm.client.Stopped` when the batch's ``stop`` switch was used."""
    token = _stop.set(stop)
    try:
        return _graded(job)
    finally:
        _stop.reset(token)


def _graded(job: Job) -> Result:
    first = _grade_once(job)
    if not first.grader_failed:
        return first
    second = _grade_once(job)
    if not second.grader_failed:
        return replace(second, seconds=round(first.seconds + second.seconds, 3))
    return replace(second, reason=second.reason + RETRIED, seconds=round(first.seconds + second.seconds, 3))


def _grade_once(job: Job) -> Result:
    started = time.monotonic()

    def result(**outcome: Any) -> Result:
        return Result(job.student, job.digest, seconds=round(time.monotonic() - started, 3), **outcome)

    options = GradeOptions(
        submission=job.folder,
        hidden=job.hidden,
        reference=job.reference,
        seed=job.seed if job.hidden is not None else None,
        public_only=job.hidden is None,
        steps=job.steps,
        limits=job.limits,
        search=job.search,
        given=job.given,
        isolation=job.isolation,
        left_out=job.left_out,
    )
    request = warm_job.request_for(options)
    outcome = client.grade(
        warm_job.HANDLER, request, deadline_s=job.deadline_s, stop_grace_s=STOP_GRACE_S, warm=job.warm, stop=_stop.get()
    )
    if isinstance(outcome, client.Graded):
        report = replace(outcome.report, submission=job.student)
        document = serialize.report_dict(report)
        if report.internal_errors:  # e.g. a sandbox that could not copy the hand-in: the machine's failure
            return result(report=document, reason=_internal(report), grader_failed=True)
        return result(report=document, reason=left_out_reason(report))
    if isinstance(outcome, client.Overran):
        return result(reason=OVERRAN.format(seconds=outcome.seconds))
    if isinstance(outcome, client.NotTakenIn):
        return result(reason=outcome.reason)
    return result(reason=GRADER_FAILED.format(detail=outcome.detail), grader_failed=True)


def _internal(report: GradeReport) -> str:
    """The reason of a report some of whose checks the grader itself could not run."""
    first = next(c for s in report.steps for c in s.checks if c.internal_error)
    return CHECKS_FAILED.format(count=report.internal_errors, detail=clean(first.message, 300))


def left_out_reason(report: GradeReport) -> str:
    """A graded row's reason: what the intake left out of the hand-in (a link, a file it may not read), or ""."""
    items = [LEFT_OUT_ITEM.format(path=item.path, kind=item.kind) for item in report.ignored]
    if not items:
        return ""
    shown = ", ".join(items[:MAX_LEFT_OUT]) + (f", ... ({len(items)} in all)" if len(items) > MAX_LEFT_OUT else "")
    return clean(LEFT_OUT.format(items=shown), 600)
