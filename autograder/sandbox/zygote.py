"""A fork server for sandbox children: numpy and torch are imported once, each child is forked.

Starting ``python -I`` and importing torch costs about 2 s on the kit's 2-core
machine, and a grading run starts a fresh child for every step (14 of them),
so the imports dominated the grading time. The *zygote* is a process started
like a child (``python -I``, scrubbed environment, its own session; in the
namespaces layer inside bubblewrap, with the folder of working copies as its
only writable mount) that imports the trusted libraries and then only forks on
request: the grader sends it the spec of a child and the child's three
descriptors (request pipe, reply pipe, control socket) over a Unix socket
(``SCM_RIGHTS``), and the fork becomes that child's keeper
(:mod:`autograder.sandbox.keeper`), which confines it (in the namespaces layer:
its own namespaces, only its own working copy visible) before any student code
runs. Student code never runs in the zygote, so every child starts from the same
clean state, and the zygote holds no secret: it sees no more than a child.

Written by hand: ``multiprocessing``'s forkserver starts workers with its own
pickling protocol and the forkserver's environment, and gives no control over
namespaces, sessions or what runs before the first student import.

One zygote serves several grading processes at once (the warm nbgrader server
and batch grading fork their workers from one process): a forked copy of the
owner opens a private channel to the zygote first, so no two processes share a
conversation.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import selectors
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from autograder.base import isolated, safefs
from autograder.sandbox import environment, isolation, probecache, writable
from autograder.sandbox.isolation import Level

ENV_SWITCH = "ATTNLAB_FORKSERVER"  # "0" turns the fork server off (each child is a fresh python -I)
MAX_MESSAGE = 1 << 20
MAX_FDS = 8  # a child's request, reply, control, its copy's source and its cgroups' procs files
PRELOAD = ("numpy",)  # trusted, imported before any fork
PRELOAD_TORCH = ("torch", "torch.nn.functional")  # also, when torch steps will be graded
SPAWN_TIMEOUT_S = 10.0


class ZygoteError(Exception):
    """The fork server is gone or did not answer; the caller starts the child directly instead."""


# -- the zygote process ---------------------------------------------------------
def serve(control_fd: int | str, preload: str = ",".join(PRELOAD)) -> None:
    """Import ``preload`` (comma-separated modules), then answer requests on the socket ``control_fd`` (and on
    the channels opened through it) until it closes."""
    for name in filter(None, preload.split(",")):
        try:
            __import__(name)
        except ImportError:  # a kit without torch still grades its numpy steps
            pass
    from autograder.sandbox import child, keeper, seccomp, unaudited  # noqa: F401  (child imports the probes too)

    seccomp.available()  # imports the filter's library and loads libc for it once, before any fork
    unaudited.prepare()  # where the modules hold the functions each child replaces, found once for every child

    gc.freeze()  # the preloaded heap stays out of every child's collections, so its pages are never copied

    control = socket.socket(fileno=int(control_fd))
    channels = selectors.DefaultSelector()
    channels.register(control, selectors.EVENT_READ)
    keepers: set[int] = set()
    while True:
        _reap(keepers)
        for key, _ in channels.select(timeout=1.0):
            channel: socket.socket = key.fileobj  # type: ignore[assignment]
            try:
                message, fds, _, _ = socket.recv_fds(channel, MAX_MESSAGE, MAX_FDS)
            except OSError:
                message, fds = b"", []
            if not message:
                channels.unregister(channel)
                channel.close()
                if channel is control:
                    return  # the owner is gone
                continue
            request = json.loads(message)
            if request["kind"] == "channel":
                channels.register(socket.socket(fileno=fds[0]), selectors.EVENT_READ)
                continue
            if request["kind"] == "spawn":
                reply = _spawn(request["spec"], fds, channels, keepers)
            else:  # "kill": a keeper that did not end when asked (never a pid this zygote did not start)
                pid = int(request.get("pid", 0))
                if pid in keepers:
                    os.kill(pid, signal.SIGKILL)
                reply = {"killed": pid in keepers}
            try:
                channel.sendall(json.dumps(reply).encode())
            except OSError:
                pass


def _spawn(spec: dict, fds: list[int], channels: selectors.BaseSelector, keepers: set[int]) -> dict[str, Any]:
    from autograder.sandbox import keeper

    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(report_read)
        for key in list(channels.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        channels.close()
        keeper.start(spec, tuple(fds), report_fd=report_write)
    os.close(report_write)
    for fd in fds:
        os.close(fd)
    with os.fdopen(report_read, "rb") as report:
        line = report.readline(1 << 16)
    try:
        reply = json.loads(line)
    except ValueError:
        reply = {"error": "the child's keeper ended before it started"}
    if "pid" in reply:
        keepers.add(int(reply["pid"]))
    return reply


def _reap(keepers: set[int]) -> None:
    """Collect every ended child (the keepers, and as PID 1 any orphan)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        keepers.discard(pid)


# -- the grader's side -------------------------------------------------------------
class Zygote:
    """The grader's handle on one fork server (of one isolation level)."""

    def __init__(self, level: Level, preload: tuple[str, ...] = PRELOAD + PRELOAD_TORCH, start_timeout_s: float = 60.0):
        self.level, self.preload, self.start_timeout_s = level, preload, start_timeout_s
        self.home = Path(tempfile.mkdtemp(prefix="attnlab-zygote-"))
        self.works = self.home / "works"  # the user and hook layers' working copies (namespaces: a tmpfs each)
        self.works.mkdir(mode=0o700)
        if level == Level.USER:  # student uids must reach their own copy, never list the others
            self.home.chmod(0o711)
            self.works.chmod(0o711)
            writable.warm_up()  # every world-writable folder, found while the server imports
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = environment.PACKAGE_PARENT if level == Level.NAMESPACES else isolated.PACKAGE_ROOT
        command = isolated.command(
            "autograder.sandbox.zygote", "serve", str(theirs.fileno()), ",".join(preload), root=root
        )
        if level == Level.NAMESPACES:
            command = isolation.zygote_bwrap(command)
        self._proc = subprocess.Popen(
            command,
            cwd=self.home,
            env=environment.child_env("/" if level == Level.NAMESPACES else str(self.home)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
        theirs.close()
        self._control = ours
        self._channel_pid = os.getpid()
        self._ready = False
        self._owner = os.getpid()  # a forked copy of this process shares the server but does not own it

    @property
    def confined(self) -> bool:
        """Whether each child gets its own namespaces (the zygote runs inside bubblewrap)."""
        return self.level == Level.NAMESPACES

    def alive(self) -> bool:
        if os.getpid() != self._owner:
            try:
                os.kill(self._proc.pid, 0)
            except OSError:
                return False
            return True
        return self._proc.poll() is None

    def workspace(self) -> Path:
        """A new, empty folder for one working copy, under the folder the zygote sees."""
        return Path(tempfile.mkdtemp(prefix="w-", dir=self.works))

    def spawn(self, spec: dict[str, Any], fds: tuple[int, int, int]) -> int:
        """Fork a keeper for ``spec`` serving on ``fds``; its pid as the zygote sees it."""
        timeout = SPAWN_TIMEOUT_S if self._ready else self.start_timeout_s  # the first answer waits for the preload
        reply = self.request({"kind": "spawn", "spec": spec}, fds, timeout)
        self._ready = True
        if "pid" not in reply:
            raise ZygoteError(f"the sandbox fork server could not start a child: {reply.get('error')}")
        return int(reply["pid"])

    def kill(self, pid: int) -> None:
        """Kill keeper ``pid`` (a last resort: a keeper ends its child itself when asked)."""
        try:
            self.request({"kind": "kill", "pid": pid}, (), SPAWN_TIMEOUT_S)
        except ZygoteError:
            pass

    def request(self, message: dict, fds: tuple[int, ...], timeout: float | None) -> dict[str, Any]:
        channel = self._channel()
        try:
            channel.settimeout(timeout)
            socket.send_fds(channel, [json.dumps(message).encode()], list(fds))
            reply = channel.recv(MAX_MESSAGE)
        except OSError as error:  # socket.timeout is an OSError
            self._forget_probe()
            self.close()
            raise ZygoteError(f"the sandbox fork server did not answer ({error})") from None
        if not reply:
            self._forget_probe()
            self.close()
            raise ZygoteError("the sandbox fork server ended")
        return json.loads(reply)

    def _forget_probe(self) -> None:
        """A server inside bubblewrap that failed: the next grade probes bubblewrap again (no remembered answer)."""
        if self.level == Level.NAMESPACES:
            probecache.forget()

    def _channel(self) -> socket.socket:
        """This process's own conversation with the zygote (a forked copy of the owner opens a new one)."""
        if self._channel_pid != os.getpid():
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                socket.send_fds(self._control, [json.dumps({"kind": "channel"}).encode()], [theirs.fileno()])
            except OSError as error:
                raise ZygoteError(f"the sandbox fork server did not answer ({error})") from None
            finally:
                theirs.close()
            self._control, self._channel_pid = ours, os.getpid()
        return self._control

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
        safefs.remove_tree(self.home)


_shared: dict[tuple[Level, bool], Zygote] = {}  # (level, preloads torch) -> this process's fork server


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def _running(level: Level, torch: bool) -> Zygote | None:
    """The live fork server of ``level`` with (or without) torch, if this process has one."""
    current = _shared.get((level, torch))
    if current is not None and not current.alive():
        current.close()
        del _shared[(level, torch)]
        return None
    return current


def shared(level: Level, torch: bool | None = None) -> Zygote | None:
    """This process's fork server for ``level``, started on first use (and again if it died); None when off.

    A process may hold two: one that preloads numpy only (its forks are cheaper, and it is ready seconds before
    torch has loaded) and one that preloads torch too.

    Args:
        torch: True: the one that preloads torch; False: the numpy-only one if running, else the torch one if
            running, else a new numpy-only one; None: the torch one if running, else the numpy-only one if
            running, else a new one with torch.
    """
    if not enabled():
        return None
    if torch is True:
        order = (True,)
    elif torch is False:
        order = (False, True)
    else:
        order = (True, False)
    for preloads_torch in order:
        current = _running(level, preloads_torch)
        if current is not None:
            return current
    wanted = torch is not False
    current = _shared[(level, wanted)] = Zygote(level, PRELOAD + (PRELOAD_TORCH if wanted else ()))
    return current


@atexit.register
def _close_shared() -> None:
    for server in _shared.values():
        server.close()
