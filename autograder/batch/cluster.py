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

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from autograder.batch import records
from autograder.batch.job import GRADER_FAILED, Job, Result, grade
from autograder.text import clean

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
