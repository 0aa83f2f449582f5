"""The batch's jobs on a Dask cluster (``--dask ADDRESS``): Dask distributed schedules, retries and reports.

Each job is one student (:func:`autograder.deliver.batch.job.grade`), submitted with
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

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autograder.base.text import clean
from autograder.deliver.batch import records
from autograder.deliver.batch.job import GRADER_FAILED, Job, Result, grade
from autograder.deliver.warm import client as warm
from autograder.deliver.warm import job as warm_job

RETRIES = 2  # a job that raised on a worker is run again this many times (a lost worker is rescheduled anyway)
LOST = "the cluster could not grade this submission ({error})"
NO_FILE = "the scheduler file {path} does not exist (dask scheduler --scheduler-file writes it when it starts)"
BAD_FILE = "the scheduler file {path} names no scheduler address ({error})"
NO_ANSWER = "no Dask scheduler answers at {address} within {seconds:g} s ({error}); start one, or check the address"
NOT_AN_ADDRESS = "{address} is not a Dask scheduler address (tcp://host:8786) or scheduler file (*.json)"


class Unreachable(Exception):
    """No scheduler answers at the address given; the message says why, in one sentence."""


def scheduler_address(address: str) -> str:
    """The scheduler's address: ``address`` itself, or the one its scheduler file (``*.json``) holds."""
    if not address.endswith(".json"):
        return address
    path = Path(address)
    if not path.is_file():
        raise Unreachable(NO_FILE.format(path=path))
    try:
        found = json.loads(path.read_text(encoding="utf-8"))["address"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise Unreachable(BAD_FILE.format(path=path, error=f"{type(error).__name__}: {error}")) from None
    if not isinstance(found, str):
        raise Unreachable(BAD_FILE.format(path=path, error="its address is not a string"))
    return found


def reachable(address: str, seconds: float) -> str:
    """The scheduler address behind ``address`` once a TCP connection to it opened within ``seconds``;
    :class:`Unreachable` otherwise (a missing scheduler file, a closed port, a host that does not answer).

    Only the connection is tried (Dask's own client waits 30 s and then raises a long traceback); an address of
    another transport (``inproc://``, ``ucx://``) is left to Dask.
    """
    target = scheduler_address(address)
    parts = urlsplit(target if "://" in target else f"tcp://{target}")
    if parts.scheme not in ("tcp", "tls"):
        return target
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise Unreachable(NOT_AN_ADDRESS.format(address=address))
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise Unreachable(NO_ANSWER.format(address=target, seconds=seconds, error=reason)) from None
    return target


POLL_S = 0.2  # how often the coordinator looks at the batch's stop switch while it waits
STOP_GRACE_S = 5.0  # on a worker, after an interrupt: the graders' time to tear their sandboxes down


def execute(jobs: list[Job], address: str, stop: warm.Stop | None = None) -> Iterator[Result]:
    """The jobs' results as they finish on the cluster at ``address``. Once ``stop`` is used, the jobs not finished
    are cancelled and the gradings running on the workers interrupted, and this ends. When it ends, the warm
    grading server of every worker is stopped. A cluster that cannot be reached, or is lost, gives every job not
    finished a row saying so (the grader's failure), never an exception."""
    from distributed import Client, as_completed

    stop = stop or warm.Stop()
    futures: dict[Any, Job] = {}
    try:
        client = Client(scheduler_file=address) if address.endswith(".json") else Client(address)
    except Exception as error:
        yield from (_lost(each, error) for each in jobs)
        return
    with client:
        try:
            futures = {
                client.submit(
                    grade_on_worker, each, key=f"attnlab-{records.file_stem(each.student)}-{each.digest[:12]}",
                    retries=RETRIES,
                ): each
                for each in jobs
            }  # fmt: skip
            # One watcher for the whole batch: polling `distributed.wait` on the pending futures left one coroutine
            # per pending future behind each time it timed out, until that future finished (about 330 MB more in
            # the coordinator at 300 students).
            finished = as_completed(list(futures))
            while futures and not stop.requested:
                batch = finished.next_batch(block=False)
                if not batch:
                    stop.wait(POLL_S)
                    continue
                # Each future is forgotten once read, so the scheduler frees its result on the worker (else a worker
                # holds every result it computed until the batch ends).
                for future in batch:
                    yield _result(future, futures.pop(future))
        except Exception as error:  # the scheduler lost mid-batch: the jobs not finished are said, not raised
            yield from (_lost(each, error) for each in futures.values())
            futures = {}
        finally:
            _end(client, set(futures), stop.requested)


def _end(client: Any, pending: set[Any], interrupted: bool) -> None:  # a distributed.Client and its futures
    """Cancel the jobs not finished; after an interrupt, interrupt the gradings running on the workers; stop every
    worker's warm grading server. A worker gone is skipped (its server stops itself when idle)."""
    try:
        if pending:
            client.cancel(list(pending))
        if interrupted:
            client.run(_interrupt_on_worker)
        client.run(_stop_warm_server)
    except Exception:
        pass


def _result(future: Any, each: Job) -> Result:  # a distributed.Future
    try:
        return future.result()
    except Exception as error:  # KilledWorker after the scheduler's retries, a job that kept raising
        lost = type(error).__name__ == "KilledWorker"
        detail = clean(f"{type(error).__name__}: {error}", 300)
        reason = LOST.format(error=detail) if lost else GRADER_FAILED.format(detail=detail)
        return Result(each.student, each.digest, reason=reason, grader_failed=True)


def _lost(each: Job, error: BaseException) -> Result:
    return Result(each.student, each.digest, reason=LOST.format(error=clean(f"{type(error).__name__}: {error}", 300)),
                  grader_failed=True)  # fmt: skip


# -- on a worker -------------------------------------------------------------------------------------------------
_running = warm.Stop()  # the gradings this worker process runs, so that an interrupted batch can stop them
_lock = threading.Lock()


def grade_on_worker(job: Job) -> Result:
    """On a worker: :func:`autograder.deliver.batch.job.grade`, its grader interruptible by
    :func:`_interrupt_on_worker`."""
    with _lock:
        stop = _running
    return grade(job, stop)


def _interrupt_on_worker() -> int:
    """On a worker: interrupt the gradings it runs (a later batch's are not: they get a new switch); how many."""
    global _running
    with _lock:
        stop, _running = _running, warm.Stop()
    stop.now()
    deadline = time.monotonic() + STOP_GRACE_S
    while stop.running() and time.monotonic() < deadline:
        time.sleep(POLL_S / 4)
    count = stop.running()
    stop.kill()
    return count


def _stop_warm_server() -> bool:
    """On a worker: stop the warm grading server of its machine (run by ``Client.run`` on every worker)."""
    return warm.stop(warm_job.HANDLER)
