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
from autograder.warm import client as warm
from autograder.warm import job as warm_job

RETRIES = 2  # a job that raised on a worker is run again this many times (a lost worker is rescheduled anyway)
LOST = "the cluster could not grade this submission ({error})"
POLL_S = 0.2  # how often the coordinator looks at the batch's stop switch while it waits


def execute(jobs: list[Job], address: str, stop: warm.Stop | None = None) -> Iterator[Result]:
    """The jobs' results as they finish on the cluster at ``address``. Once ``stop`` is used, the jobs not finished
    are cancelled (a job a worker is running finishes there, unrecorded) and this ends. When it ends, the warm
    grading server of every worker is stopped."""
    from distributed import Client, wait

    stop = stop or warm.Stop()
    client = Client(scheduler_file=address) if address.endswith(".json") else Client(address)
    with client:
        futures = {
            client.submit(
                grade, each, key=f"attnlab-{records.file_stem(each.student)}-{each.digest[:12]}", retries=RETRIES
            ): each
            for each in jobs
        }
        pending = set(futures)
        try:
            while pending and not stop.requested:
                try:
                    done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    continue
                for future in done:
                    yield _result(future, futures[future])
        finally:
            if pending:
                client.cancel(list(pending))
            try:
                client.run(_stop_warm_server)
            except Exception:  # a worker gone: its server stops itself when idle
                pass


def _result(future, each: Job) -> Result:  # future: distributed.Future
    try:
        return future.result()
    except Exception as error:  # KilledWorker after the scheduler's retries, a job that kept raising
        lost = type(error).__name__ == "KilledWorker"
        detail = clean(f"{type(error).__name__}: {error}", 300)
        reason = LOST.format(error=detail) if lost else GRADER_FAILED.format(detail=detail)
        return Result(each.student, each.digest, reason=reason, grader_failed=True)


def _stop_warm_server() -> bool:
    """On a worker: stop the warm grading server of its machine (run by ``Client.run`` on every worker)."""
    return warm.stop(warm_job.HANDLER)
