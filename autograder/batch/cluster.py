"""The batch's jobs on a Dask cluster (``--dask ADDRESS``): Dask distributed schedules, retries and reports.

Each job is one student (:func:`autograder.batch.job.grade`), submitted with
:data:`RETRIES` retries; a worker lost mid-batch makes the scheduler run its
jobs again elsewhere, so it costs a retry, not a student. Every worker grades
through the warm grading server of its own machine. The submissions, the
hidden graders and the reference must be at the same paths on every worker (a
shared filesystem: an HPC cluster's home or project space, a Kubernetes volume).

``ADDRESS`` is a scheduler's address (``tcp://host:8786``) or a scheduler file
(``*.json``, as ``dask-jobqueue``, ``dask-mpi`` or ``dask scheduler
--scheduler-file`` write it).
"""

from __future__ import annotations

from collections.abc import Iterator

from autograder.batch import records
from autograder.batch.job import GRADER_FAILED, Job, Result, grade
from autograder.text import clean

RETRIES = 2  # a job that raised on a worker is run again this many times (a lost worker is rescheduled anyway)
LOST = "the cluster could not grade this submission ({error})"


def execute(jobs: list[Job], address: str) -> Iterator[Result]:
    """The jobs' results as they finish on the cluster at ``address``."""
    from distributed import Client, as_completed

    client = Client(scheduler_file=address) if address.endswith(".json") else Client(address)
    with client:
        futures = {
            client.submit(
                grade, each, key=f"attnlab-{records.file_stem(each.student)}-{each.digest[:12]}", retries=RETRIES
            ): each
            for each in jobs
        }
        for future in as_completed(futures):
            each = futures[future]
            try:
                yield future.result()
            except Exception as error:  # KilledWorker after the scheduler's retries, a job that kept raising
                lost = type(error).__name__ == "KilledWorker"
                detail = clean(f"{type(error).__name__}: {error}", 300)
                reason = LOST.format(error=detail) if lost else GRADER_FAILED.format(detail=detail)
                yield Result(each.student, each.digest, reason=reason, grader_failed=True)
