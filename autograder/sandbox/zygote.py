"""A fork server for sandbox children: numpy and torch are imported once, each child is forked.

Starting ``python -I`` and importing torch costs about 2 s on the kit's 2-core
machine, and a grading run starts a fresh child for every step (13 of them),
so the imports dominated the grading time. The *zygote* is a process started
exactly like a child (``python -I``, scrubbed environment, its own session)
that imports the trusted libraries and then only forks on request: the grader
sends it the two pipe ends of a new child over a Unix socket (``SCM_RIGHTS``),
the zygote forks, and the fork becomes an ordinary child (new session, working
copy as its directory, then :func:`autograder.sandbox.child.main`: limits,
output redirection, audit hook, student code). Student code never runs in the
zygote itself, so every child starts from the same clean state.

Written by hand: ``multiprocessing``'s forkserver starts workers with its own
pickling protocol and the forkserver's environment, and gives no control over
sessions, working directories or what runs before the first student import.

The zygote reaps its children and reports their exit status (a child is the
zygote's, not the grader's, so only the zygote can ``waitpid`` it).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder import isolated
from autograder.sandbox.environment import child_env

ENV_SWITCH = "ATTNLAB_FORKSERVER"  # "0" turns the fork server off (each child is a fresh python -I)
MAX_MESSAGE = 1 << 16
PRELOAD = ("numpy",)  # trusted, imported before any fork
PRELOAD_TORCH = ("torch", "torch.nn.functional")  # also, when torch steps will be graded
POLL_S = 0.005


class ZygoteError(Exception):
    """The fork server is gone or did not answer; the caller starts the child directly instead."""


# -- the zygote process ---------------------------------------------------------
def serve(control_fd: int | str, preload: str = ",".join(PRELOAD)) -> None:
    """Import ``preload`` (comma-separated modules), then answer ``spawn`` and ``wait`` requests on the socket
    ``control_fd`` until it closes."""
    for name in filter(None, preload.split(",")):
        try:
            __import__(name)
        except ImportError:  # a kit without torch still grades its numpy steps
            pass
    from autograder.sandbox import child  # noqa: F401  (imports the probes too)

    control = socket.socket(fileno=int(control_fd))
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, MAX_MESSAGE, 2)
        except OSError:
            return
        if not message:
            return
        request = json.loads(message)
        if request["kind"] == "spawn":
            reply = {"pid": _fork_child(request, fds, control)}
        else:
            reply = _wait(int(request["pid"]), request.get("timeout"))
        control.sendall(json.dumps(reply).encode())


def _fork_child(request: dict, fds: list[int], control: socket.socket) -> int:
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    code = 0
    try:
        control.close()
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # recomputed from the child's TMPDIR
        from autograder.sandbox import child

        child.main(json.dumps(request["limits"] | {"request_fd": fds[0], "reply_fd": fds[1]}))
    except BaseException:
        code = 70
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float | None) -> dict[str, Any]:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        except ChildProcessError:
            return {"returncode": None}
        if done:
            return {"returncode": os.waitstatus_to_exitcode(status)}
        if time.monotonic() >= deadline:
            return {"timeout": True}
        time.sleep(POLL_S)


# -- the grader's side -------------------------------------------------------------
class ForkedChild:
    """A child forked by the zygote, with the part of ``subprocess.Popen``'s interface the sandbox uses."""

    def __init__(self, pid: int, zygote: Zygote) -> None:
        self.pid, self._zygote, self.returncode = pid, zygote, None

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status as ``Popen.returncode`` gives it (``-signal`` when killed); ``TimeoutExpired`` at
        ``timeout``."""
        if self.returncode is None:
            try:
                reply = self._zygote.request(
                    {"kind": "wait", "pid": self.pid, "timeout": timeout}, (), None if timeout is None else timeout + 5
                )
            except ZygoteError:
                return None  # the zygote is gone; so is the status
            if reply.get("timeout"):
                raise subprocess.TimeoutExpired(f"sandbox child {self.pid}", timeout)
            self.returncode = reply["returncode"]
        return self.returncode


class Zygote:
    """The grader's handle on one fork server."""

    def __init__(self, preload: tuple[str, ...] = PRELOAD + PRELOAD_TORCH, start_timeout_s: float = 60.0) -> None:
        self.preload = preload
        self.start_timeout_s = start_timeout_s
        self._home = Path(tempfile.mkdtemp(prefix="attnlab-zygote-"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            isolated.command("autograder.sandbox.zygote", "serve", str(theirs.fileno()), ",".join(preload)),
            cwd=self._home,
            env=child_env(self._home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
        theirs.close()
        self._control = ours
        self._ready = False
        self._owner = os.getpid()  # a forked copy of this process shares the server but does not own it

    def alive(self) -> bool:
        if os.getpid() != self._owner:
            try:
                os.kill(self._proc.pid, 0)
            except OSError:
                return False
            return True
        return self._proc.poll() is None

    def spawn(self, cwd: Path, env: dict[str, str], limits: dict[str, Any], fds: tuple[int, int]) -> ForkedChild:
        """Fork a child that serves requests on ``fds`` (its request and reply ends) from ``cwd``."""
        timeout = 10.0 if self._ready else self.start_timeout_s  # the first answer waits for the preload
        reply = self.request({"kind": "spawn", "cwd": str(cwd), "env": env, "limits": limits}, fds, timeout)
        self._ready = True
        return ForkedChild(int(reply["pid"]), self)

    def request(self, message: dict, fds: tuple[int, ...], timeout: float | None) -> dict[str, Any]:
        try:
            self._control.settimeout(timeout)
            socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
            reply = self._control.recv(MAX_MESSAGE)
        except OSError as error:  # socket.timeout is an OSError
            self.close()
            raise ZygoteError(f"the sandbox fork server did not answer ({error})") from None
        if not reply:
            self.close()
            raise ZygoteError("the sandbox fork server ended")
        return json.loads(reply)

    def close(self) -> None:
        try:
            self._control.close()
        except OSError:
            pass
        if os.getpid() != self._owner:
            return  # the owner stops the server and removes its folder
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._proc.wait()
        shutil.rmtree(self._home, ignore_errors=True)


_shared: Zygote | None = None


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def shared(torch: bool | None = None) -> Zygote | None:
    """This process's fork server, started on first use (and again if it died); None when turned off.

    Args:
        torch: True: one that preloads torch (a running one without it is replaced);
            False: any running one, else a new one without torch; None: any running one,
            else a new one with torch.
    """
    global _shared
    if not enabled():
        return None
    wanted = torch is not False
    stale = _shared is not None and (not _shared.alive() or (torch is True and "torch" not in _shared.preload))
    if stale:
        _shared.close()
    if _shared is None or stale:
        _shared = Zygote(PRELOAD + (PRELOAD_TORCH if wanted else ()))
    return _shared


def prestart(torch: bool = True) -> None:
    """Start the fork server now, so its imports overlap with the grader's own start-up.

    Args:
        torch: preload torch (only worth its 2 s when a torch step will be graded).
    """
    shared(torch)


@atexit.register
def _close_shared() -> None:
    if _shared is not None:
        _shared.close()
