"""A warm grading server for ``nbgrader autograde``: one process keeps the grader's imports, each student gets a fork.

``nbgrader autograde`` runs one notebook after another, and every notebook's
first grade cell used to start a fresh grader process: Python, pytest, numpy
and torch imported again, and a fresh sandbox fork server, for every student
(about 4 s of the 8 s a student's grading took on 2 cores). The first grade
cell with a private folder now starts this server instead (detached, so it
outlives the notebook's kernel); the server imports all of that once, starts
the sandbox fork server, and forks one worker per request. A worker is a
fresh copy of the warm process: it grades one submission exactly as
:mod:`autograder.nbgrader_course.run` does, writes the report to the
connection and exits, so nothing of one student's run reaches the next.
Requests are served one at a time (the sandbox fork server is shared). The
server exits after :data:`IDLE_S` seconds without a request.

Its socket lives in a folder only the instructor's user can enter, named
from the private folder, the kit's source and the Python in use, so a changed
kit or course starts a new server. Anything unexpected (no server, a stale
socket, a dead worker) makes the cell start the grader process directly, as
before. Written by hand: no library forks a pre-imported Python per request
with its own session and returns the child's pid to the caller.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder import isolated

ENV_SWITCH = "ATTNLAB_WARM_GRADER"  # "0": every student gets a fresh grader process
IDLE_S = 120.0
START_TIMEOUT_S = 60.0
SOCKET = "grader.sock"
MAX_REPLY = 64 << 20


class WarmUnavailable(Exception):
    """No warm server could serve this request; the caller grades in a fresh process."""


# -- where the server listens --------------------------------------------------------
def _kit_digest() -> str:
    """The kit's source as this process sees it (paths, sizes, mtimes): a changed kit gets a new server."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{sys.executable}\0{root}".encode())
    for path in sorted(root.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(root)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def socket_path(private: Path) -> Path:
    """The server's socket for ``private`` (short: Unix socket paths are limited to about 100 bytes)."""
    key = hashlib.sha256(f"{Path(private).resolve()}\0{_kit_digest()}".encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"attnlab-{os.getuid()}-{key}" / SOCKET


def _private_folder(path: Path) -> Path:
    """``path``'s folder, created mode 700; refused unless it is a real folder owned by this user and closed to
    others."""
    folder = path.parent
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise WarmUnavailable(f"{folder} is not a private folder of this user")
    return folder


# -- the cell's side ---------------------------------------------------------------------
def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and hasattr(os, "fork")


def grade(request: dict[str, Any], private: Path, deadline_s: float, stop_grace_s: float) -> tuple[int, bytes, bytes]:
    """Grade ``request`` in a worker of the warm server for ``private``: ``(exit status, stdout, stderr)`` as the
    grader process gives them."""
    path = socket_path(private)
    _private_folder(path)
    connection = _connect(path) or _start_and_connect(path)
    with connection:
        connection.settimeout(deadline_s)
        deadline = time.monotonic() + deadline_s
        try:
            connection.sendall(json.dumps(request).encode() + b"\n")
            reader = connection.makefile("rb")
            pid = int(json.loads(reader.readline() or b"{}").get("pid", 0))
            if pid <= 0:
                raise WarmUnavailable("the warm grader did not start a worker")
            try:
                reply = json.loads(reader.readline(MAX_REPLY) or b"{}")
            except (
                BaseException
            ):  # the cell's time limit, or the deadline: stop the worker as the grader process would be
                _stop_worker(pid, connection, stop_grace_s)
                raise
        except (OSError, ValueError) as error:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("warm grader", deadline_s) from None
            raise WarmUnavailable(f"the warm grader failed ({error})") from None
    if "code" not in reply:
        raise WarmUnavailable("the warm grader's worker ended without a report")
    return int(reply["code"]), str(reply.get("out", "")).encode(), str(reply.get("err", "")).encode()


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


def _start_and_connect(path: Path) -> socket.socket:
    """Start a detached server on ``path`` and connect once it listens."""
    path.unlink(missing_ok=True)
    subprocess.Popen(
        isolated.command("autograder.nbgrader_course.warm", "serve", str(path)),
        cwd=path.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives the kernel that started it
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        connection = _connect(path)
        if connection is not None:
            return connection
        time.sleep(0.05)
    raise WarmUnavailable(f"the warm grader did not start within {START_TIMEOUT_S:g} s")


def _stop_worker(pid: int, connection: socket.socket, grace_s: float) -> None:
    """Interrupt the worker (it tears its sandboxes down), then kill it if it does not stop."""
    try:
        os.killpg(pid, signal.SIGINT)
        connection.settimeout(grace_s)
        while connection.recv(1 << 16):
            pass
    except (OSError, ValueError):
        pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


# -- the server ----------------------------------------------------------------------------
def serve(path: str) -> None:
    """Import the grader once, then fork a worker per connection until idle for :data:`IDLE_S` seconds."""
    import torch  # noqa: F401  the reference's torch steps

    from autograder import engine  # noqa: F401  the imports every worker shares
    from autograder.nbgrader_course import run  # noqa: F401
    from autograder.sandbox import client

    client.prestart()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(8)
    listener.settimeout(IDLE_S)
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            break
        with connection:
            try:
                connection.settimeout(10)
                request = json.loads(connection.makefile("rb").readline())
            except (OSError, ValueError):
                continue
            if request.get("stop"):
                break
            pid = os.fork()
            if pid == 0:
                listener.close()
                _work(connection, request)  # never returns
            try:
                connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            except OSError:
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)  # one student at a time: the sandbox fork server is shared
    listener.close()
    Path(path).unlink(missing_ok=True)
    try:
        Path(path).parent.rmdir()
    except OSError:
        pass  # a new server already listens there


def stop(private: Path) -> bool:
    """Ask the warm server of ``private`` to exit now; whether one was running."""
    connection = _connect(socket_path(private))
    if connection is None:
        return False
    with connection:
        connection.sendall(json.dumps({"stop": True}).encode() + b"\n")
        connection.settimeout(10)
        try:
            connection.recv(1)  # returns when the server has closed the connection
        except OSError:
            pass
    return True


def _work(connection: socket.socket, request: dict) -> None:
    """One worker: grade ``request`` as the grader process does, write the result, exit."""
    code = 70
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        connection.settimeout(None)
        with tempfile.TemporaryDirectory(prefix="attnlab-grade-") as work:  # pytest's plugins may write into the cwd
            os.chdir(work)
            reply = _graded(request)
        connection.sendall(json.dumps(reply).encode() + b"\n")
        code = 0
    except BaseException:
        pass
    finally:
        os._exit(code)


def _graded(request: dict) -> dict[str, Any]:
    """``{code, out, err}``: what :func:`autograder.nbgrader_course.run.main` exits with and prints."""
    import contextlib
    import io

    from autograder.nbgrader_course import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run.main(json.dumps(request))
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}
