"""Grade one request through the warm grading server, or in a fresh grader process when there is none.

A *request* is a JSON object that a *handler* module turns into the engine's
options (``handler.options(request) -> GradeOptions``):
:mod:`autograder.deliver.nbgrader_course.run` for the notebook's grade cells,
:mod:`autograder.deliver.batch.job` for ``attnlab grade-batch``. What comes back is the
report itself (:mod:`autograder.grading.serialize`), or why there is none, as
one of three typed outcomes; the callers word them.

This module is imported by the notebook kernel and by Dask workers: it
imports nothing heavy (the report model, the standard library).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.base import isolated
from autograder.base.text import clean
from autograder.deliver.warm.address import (
    START_LOCK,
    WarmUnavailable,
    enabled,
    holds_current_lock,
    private_folder,
    short_enough,
    socket_path,
)
from autograder.grading import serialize
from autograder.grading.model import GradeReport

START_TIMEOUT_S = 60.0
START_ATTEMPTS = 5  # takes of the start lock, each after an ending server removed the folder under the last
MAX_REPLY = 256 << 20
SERVER = "autograder.deliver.warm.server"


@dataclass(frozen=True)
class Graded:
    """The grader finished: its report."""

    report: GradeReport


@dataclass(frozen=True)
class Overran:
    """The grader did not finish within the deadline of ``seconds`` and was stopped."""

    seconds: float


@dataclass(frozen=True)
class GraderFailed:
    """The grader itself failed (never the student's fault); ``detail`` is its error, one line."""

    detail: str


@dataclass(frozen=True)
class NotTakenIn:
    """The hand-in was not graded for the student's reason (no lab files, past an intake limit): ``reason`` is the
    sentence the student reads."""

    reason: str


Outcome = Graded | Overran | GraderFailed | NotTakenIn


class Stopped(Exception):
    """The grading was stopped by its :class:`Stop` switch (an interrupted batch): there is no outcome."""


class Stop:
    """A switch shared by the gradings of one batch: once :meth:`now` is called, no grading starts, and every
    grader running (a warm server's worker, a fresh grader process, each in a session of its own) is interrupted
    so that it tears its sandboxes down; :meth:`kill` ends those that have not ended yet."""

    def __init__(self) -> None:
        self._requested = threading.Event()
        self._lock = threading.RLock()  # reentrant: a signal handler on the thread holding it may kill too
        self._groups: set[int] = set()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the switch to be used; whether it is."""
        return self._requested.wait(seconds)

    def request(self) -> None:
        """Start no grading from now on (safe in a signal handler: it takes no lock); :meth:`now` interrupts those
        running."""
        self._requested.set()

    def now(self) -> None:
        """Stop: interrupt every grader running, and start none."""
        self._requested.set()
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        """Kill the graders that have not ended since :meth:`now`."""
        self._signal(signal.SIGKILL)

    def running(self) -> int:
        with self._lock:
            return len(self._groups)

    def started(self, group: int) -> None:
        with self._lock:
            self._groups.add(group)
        if self.requested:  # stopped while this one was starting
            signal_group(group, signal.SIGINT)

    def ended(self, group: int) -> None:
        with self._lock:
            self._groups.discard(group)

    def _signal(self, number: int) -> None:
        with self._lock:
            groups = list(self._groups)
        for group in groups:
            signal_group(group, number)


def grade(
    handler: str,
    request: dict[str, Any],
    *,
    deadline_s: float,
    stop_grace_s: float,
    scope: Path | None = None,
    warm: bool = True,
    stop: Stop | None = None,
) -> Outcome:
    """Grade ``request`` with ``handler``: in a worker of the warm server for ``(handler, scope)`` when ``warm``
    (starting the server if none runs), else, or when no server can serve it, in a fresh grader process.

    Args:
        handler: the module whose ``options(request)`` gives the engine's options.
        request: JSON-ready; what the handler reads.
        deadline_s: the whole grading's time limit; past it the grader is stopped (:class:`Overran`).
        stop_grace_s: after an interrupt or the deadline, the grader's time to stop its sandboxes before it is
            killed.
        scope: a folder that names the server (the course's private folder), or None.
        warm: try the warm server first.
        stop: the batch's switch (:class:`Stop`); once it is used, :class:`Stopped` is raised instead of an outcome.

    An interrupt (the notebook cell's time limit) stops the grader, then propagates.
    """
    stop = stop or Stop()
    if stop.requested:
        raise Stopped
    if warm and enabled():
        try:
            return _warm(handler, request, scope, deadline_s, stop_grace_s, stop)
        except WarmUnavailable:
            if stop.requested:
                raise Stopped from None
            # else graded by a fresh process below
    outcome = _fresh(handler, request, deadline_s, stop_grace_s, stop)
    if stop.requested and not isinstance(outcome, Graded):
        raise Stopped
    return outcome


def stop(handler: str, scope: Path | None = None) -> bool:
    """Ask the warm server for ``(handler, scope)`` to exit now; whether one was running."""
    connection = _connect(socket_path(handler, scope))
    if connection is None:
        return False
    with connection:
        try:  # a server that was ending anyway (idle, stopped by another caller) may close before it reads this
            connection.sendall(json.dumps({"stop": True}).encode() + b"\n")
            connection.settimeout(10)
            connection.recv(1)  # returns when the server has closed the connection
        except OSError:
            pass
    return True


def outcome_of(reply: Any) -> Outcome:
    """The outcome of a worker's reply ``{"report": ...}``, ``{"refused": sentence}`` or ``{"error": ...}`` (every
    text escaped: it can name the student's files)."""
    if isinstance(reply, dict) and "report" in reply:
        try:
            return Graded(serialize.report_from_dict(reply["report"]))
        except serialize.FormatError:
            return GraderFailed("its report was unreadable")
    if isinstance(reply, dict) and isinstance(reply.get("refused"), str):
        return NotTakenIn(clean(reply["refused"], 1000))
    error = reply.get("error") if isinstance(reply, dict) else None
    lines = str(error or "it gave no report").strip().splitlines() or ["it gave no report"]
    return GraderFailed(clean(lines[-1], 300))


# -- the warm server -------------------------------------------------------------------------
def _warm(
    handler: str, request: dict, scope: Path | None, deadline_s: float, stop_grace_s: float, stop: Stop | None = None
) -> Outcome:
    stop = stop or Stop()
    path = short_enough(socket_path(handler, scope))
    private_folder(path)
    connection = _connect(path) or _start_and_connect(path, handler)
    with connection:
        connection.settimeout(deadline_s)
        deadline = time.monotonic() + deadline_s
        try:
            connection.sendall(json.dumps(request).encode() + b"\n")
            reader = connection.makefile("rb")
            pid = int(json.loads(reader.readline() or b"{}").get("pid", 0))
            if pid <= 0:
                raise WarmUnavailable("the warm grader did not start a worker")
            stop.started(pid)  # the worker leads a session of its own: its pid is its group
            try:
                reply = json.loads(reader.readline(MAX_REPLY) or b"{}")
            except BaseException:  # the deadline or an interrupt: stop the worker as a grader process would be
                _stop_worker(pid, connection, stop_grace_s)
                raise
            finally:
                stop.ended(pid)
        except (OSError, ValueError) as error:
            if time.monotonic() >= deadline:
                return Overran(deadline_s)
            raise WarmUnavailable(f"the warm grader failed ({error})") from None
    if not reply:
        raise WarmUnavailable("the warm grader's worker ended without a report")
    return outcome_of(reply)


def _connect(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        return None
    return connection


def _start_and_connect(path: Path, handler: str) -> socket.socket:
    """Start a detached server on ``path`` and connect once it listens. One start at a time (a lock file beside the
    socket, shared by every thread and process of this user): a second caller connects to the server the first
    started instead of replacing its socket and leaving it running unreachable."""
    import fcntl  # POSIX, as the warm server is (enabled() needs os.fork)

    for _attempt in range(START_ATTEMPTS):
        private_folder(path)  # again: a server that ended meanwhile removes its folder (address.remove_if_unused)
        try:
            lock = open(path.with_name(START_LOCK), "a")  # closed by the with below
        except FileNotFoundError:
            continue  # the folder went between its making and this
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not holds_current_lock(lock, path):
                continue  # an ending server removed the folder while this caller waited
            connection = _connect(path)  # started by another caller while this one waited
            return connection if connection is not None else _start(path, handler)
    raise WarmUnavailable("the warm grader's folder kept being removed while a server was started")


def _start(path: Path, handler: str) -> socket.socket:
    path.unlink(missing_ok=True)
    server = subprocess.Popen(
        isolated.command(SERVER, "serve", str(path), handler),
        cwd=path.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives the kernel (or Dask worker) that started it
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        connection = _connect(path)
        if connection is not None:
            return connection
        if server.poll() is not None:  # it ended before it listened: no use waiting for it
            raise WarmUnavailable(f"the warm grader ended as it started (exit status {server.returncode})")
        time.sleep(0.05)
    raise WarmUnavailable(f"the warm grader did not start within {START_TIMEOUT_S:g} s")


def _stop_worker(pid: int, connection: socket.socket, grace_s: float) -> None:
    """Interrupt the worker (it tears its sandboxes down), then kill it if it does not stop."""
    try:
        signal_group(pid, signal.SIGINT)
        connection.settimeout(grace_s)
        while connection.recv(1 << 16):
            pass
    except (OSError, ValueError):
        pass
    signal_group(pid, signal.SIGKILL)


def signal_group(pid: int, number: int) -> None:
    """Send ``number`` to the process group ``pid`` (a worker's own session), if it still exists."""
    try:
        os.killpg(pid, number)
    except OSError:
        pass


# -- a fresh grader process --------------------------------------------------------------------
def _fresh(handler: str, request: dict, deadline_s: float, stop_grace_s: float, stop: Stop | None = None) -> Outcome:
    """Grade in a fresh ``python -I`` from a temporary folder (the submission is never on its path).

    The request goes on the grader's standard input, not its command line, which any process of the machine
    may read in ``/proc`` (it can hold the hidden inputs' seed).
    """
    stop = stop or Stop()
    with tempfile.TemporaryDirectory(prefix="attnlab-grade-") as work:
        process = subprocess.Popen(
            isolated.command(SERVER, "grade_once", handler),
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        stop.started(process.pid)
        try:
            out, err = process.communicate(json.dumps(request).encode(), timeout=deadline_s)
        except subprocess.TimeoutExpired:
            _stop(process, stop_grace_s)
            return Overran(deadline_s)
        except BaseException:  # an interrupt: let the grader stop its sandboxes first
            _stop(process, stop_grace_s)
            raise
        finally:
            stop.ended(process.pid)
    try:
        reply = json.loads(out)
    except ValueError:
        lines = err.decode("utf-8", "replace").strip().splitlines() or [f"exit status {process.returncode}"]
        return GraderFailed(clean(lines[-1], 300) if process.returncode else "its report was unreadable")
    return outcome_of(reply)


def _stop(process: subprocess.Popen, grace_s: float) -> None:
    """Interrupt the grader (it tears its sandboxes down), then kill it if it does not stop."""
    try:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
