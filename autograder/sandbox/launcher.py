"""Start one sandbox child at an isolation level, and end it so that nothing of it is left.

A child is its working copy (a fresh copy of the grader's copy of the hand-in,
the only place it may write), its keeper (:mod:`autograder.sandbox.keeper`) and
the student process the keeper watches. It is forked by the fork server of its
level (:mod:`autograder.sandbox.zygote`) or, without one, started as a fresh
``python -I`` (inside bubblewrap in the namespaces layer). Three descriptors
connect it to the grader: the request pipe, the reply pipe and the keeper's
control socket, on which the keeper answers the grader's questions about the
child's CPU time (:meth:`Child.cpu_ns`), reports how the student process ended
and then closes once every process of the child is gone. In the namespaces layer a
fourth, a descriptor of the grader's copy, lets the student process fill its own
size-limited working copy; elsewhere the copy is made here, closed to every
other uid, and the keeper holds it to a quota.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.base import isolated, safefs
from autograder.handin import intake
from autograder.sandbox import bwrap, cgroup, environment, isolation, linux, writable, zygote
from autograder.sandbox.isolation import Level
from autograder.sandbox.keeper import CPU_QUERY

USER_UID_BASE = 1 << 31  # student uids as root (user layer, namespaces layer): one per sandbox, no real account
STOP_WAIT_S = 1.0  # for a child to end after its request pipe closed
KILL_WAIT_S = 5.0  # for a keeper to end everything after it was told to
CPU_WAIT_S = 2.0  # for a keeper's answer to a CPU query
_NOT_AN_ANSWER = object()
_sequence = itertools.count()


def _give(folder: Path, uid: int, gid: int) -> None:
    """Make ``folder`` and everything in it belong to the student uid (the grader runs as root)."""
    os.lchown(folder, uid, gid)
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.lchown(os.path.join(parent, name), uid, gid)


def student_ids(level: Level) -> tuple[int | None, int | None]:
    """The uid and gid student code runs as (None: this process's own, or a user namespace's).

    As root (the user layer, and the namespaces layer as root), one uid per sandbox: students cannot signal or
    read each other's processes, and the kernel's count of a uid's processes and threads (``RLIMIT_NPROC``) is
    the count of that one child's, never of a classmate graded alongside."""
    if level == Level.USER or (level == Level.NAMESPACES and isolation.running_as_root()):
        uid = USER_UID_BASE + (os.getpid() % (1 << 22)) * 64 + next(_sequence) % 64  # below 2**32 - 1
        return uid, uid
    return None, None


def process_cap(level: Level, uid: int | None, processes: int | None) -> int | None:
    """``RLIMIT_NPROC`` for the student process (None: none), which the kernel counts per uid in each user
    namespace: exact where the child has a uid of its own (``uid``); in a user namespace of its own (the
    namespaces layer, not root) the count also holds its keeper; in the hook layer, the processes and threads
    this uid has now plus ``processes`` (an approximation: the uid is the grader's); root is exempt from it."""
    if processes is None or not hasattr(os, "fork"):
        return None
    if uid is not None:
        return int(processes)
    if level == Level.NAMESPACES:
        return int(processes) + 1
    if isolation.running_as_root() or not os.path.isdir("/proc"):
        return None
    return linux.tasks_of(os.getuid()) + int(processes)


@dataclass
class Ended:
    """How a child's student process ended: a wait ``status``, or the keeper's ``error`` (nothing ran)."""

    status: int | None = None
    error: str | None = None
    exceeded: int | None = None  # the quota of bytes its working copy passed, when the keeper stopped it for that


class Child:
    """One running child: where to send requests, where replies come from, and its keeper."""

    def __init__(
        self,
        folder: Path,
        requests: int,
        replies: int,
        control: socket.socket,
        keeper: int | None,
        server: zygote.Zygote | None,
        process: subprocess.Popen | None,
        remove: Path | None,
        group: cgroup.Group | None = None,
    ) -> None:
        self.folder, self.replies, self.control, self._remove = folder, replies, control, remove
        self._group = group
        self.requests = os.fdopen(requests, "wb")
        self._keeper, self._server, self._process = keeper, server, process
        self._buffer, self._eof, self.ended = b"", False, None
        self._cpu: object = _NOT_AN_ANSWER  # the keeper's last answer to a CPU query, until it is taken

    @property
    def eof(self) -> bool:
        """Whether the keeper closed the control socket (nothing of the child is left)."""
        return self._eof

    def poll_ended(self, timeout: float) -> Ended | None:
        """The keeper's report, if it comes within ``timeout`` seconds (the student process has ended)."""
        deadline = time.monotonic() + timeout
        while self.ended is None and not self._eof:
            if not self._read(deadline - time.monotonic()):
                break
        return self.ended

    def _read(self, timeout: float) -> bool:
        """Read what the keeper sent within ``timeout``; False when nothing came."""
        ready, _, _ = select.select([self.control], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            chunk = self.control.recv(1 << 12)
        except OSError:
            chunk = b""
        if not chunk:
            self._eof = True
            return True
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            answer = _cpu_answer(line)
            if answer is not _NOT_AN_ANSWER:
                self._cpu = answer
            elif self.ended is None:
                self.ended = _parse_report(line)
        return True

    def cpu_ns(self, timeout: float = CPU_WAIT_S) -> int | None:
        """The keeper's count of the CPU nanoseconds of every process of this child so far (from the kernel's
        accounting, out of student code's reach); None when it cannot tell, or the child has ended."""
        self._cpu = _NOT_AN_ANSWER
        try:
            self.control.sendall(CPU_QUERY)
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while self._cpu is _NOT_AN_ANSWER and self.ended is None and not self._eof:
            if not self._read(deadline - time.monotonic()):
                return None
        answer, self._cpu = self._cpu, _NOT_AN_ANSWER
        return None if answer is _NOT_AN_ANSWER or self.ended is not None else answer  # type: ignore[return-value]

    def stop(self, graceful: bool = True) -> None:
        """End the child and wait until nothing of it is left, then remove its working copy."""
        try:
            self.requests.close()  # a serving child exits on end-of-file
        except OSError:
            pass
        if graceful:
            self._wait_eof(STOP_WAIT_S)
        if not self._eof:
            try:
                self.control.shutdown(socket.SHUT_WR)  # the keeper kills the student process and everything else
            except OSError:
                pass
            self._wait_eof(KILL_WAIT_S)
        if not self._eof:  # a keeper that does not answer: the last resort
            if self._process is not None:
                self._process.kill()
            elif self._server is not None and self._keeper is not None:
                self._server.kill(self._keeper)
            self._wait_eof(KILL_WAIT_S)
        for closing in (self.control.close, lambda: os.close(self.replies)):
            try:
                closing()
            except OSError:
                pass
        if self._process is not None:
            self._process.wait()
        if self._group is not None:
            self._group.remove()
        if self._remove is not None:
            safefs.remove_tree(self._remove)

    def _wait_eof(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._eof and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())


def _cpu_answer(line: bytes) -> object:
    """The keeper's answer to a CPU query in ``line`` (an int, or None), or :data:`_NOT_AN_ANSWER`."""
    try:
        answer = json.loads(line)
    except ValueError:
        return _NOT_AN_ANSWER
    if not isinstance(answer, dict) or set(answer) != {"cpu_ns"}:
        return _NOT_AN_ANSWER
    value = answer["cpu_ns"]
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _parse_report(line: bytes) -> Ended:
    try:
        report = json.loads(line)
    except ValueError:
        return Ended(error="the child's keeper sent an unreadable report")
    if isinstance(report, dict) and isinstance(report.get("status"), int):
        exceeded = report.get("exceeded")
        return Ended(status=report["status"], exceeded=exceeded if isinstance(exceeded, int) else None)
    return Ended(error=str(report.get("error") if isinstance(report, dict) else report)[:500])


def stage(submission: Path) -> Path:
    """A copy of ``submission`` by the intake's rules (regular files and folders only, never through a link,
    bounded), without what no child needs (:func:`environment.left_out_of_copy`): the source of every working copy
    of one sandbox. It sits in a folder only this process's user can enter; inside, it is readable by the student
    uid, which in the namespaces layer copies it in through a descriptor.

    Raises:
        OSError: it could not be made (``intake.HandInRefused`` for a folder past the intake's limits included).
    """
    holder = Path(tempfile.mkdtemp(prefix="attnlab-stage-"))
    staged = holder / "copy"
    try:
        intake.copy_tree(submission, staged, environment.left_out_of_copy)
        staged.chmod(0o755)
    except intake.HandInRefused as error:
        safefs.remove_tree(holder)
        raise OSError(f"the working copy could not be made ({error})") from None
    except BaseException:
        safefs.remove_tree(holder)
        raise
    return staged


def unstage(staged: Path) -> None:
    safefs.remove_tree(staged.parent)


def start(
    submission: Path,
    level: Level,
    limits: dict[str, Any],
    torch: bool | None = None,
    cpus: tuple[int, ...] | None = None,
    work_bytes: int = 64 << 20,
) -> Child:
    """A new child for ``submission`` (a copy made by :func:`stage`) at ``level``, serving requests with
    ``limits`` (on ``cpus`` only, if given); its working copy may hold ``work_bytes`` more than ``submission``'s
    files.

    Raises:
        OSError: the child could not be started at all.
    """
    server = zygote.shared(level, torch)
    uid, gid = student_ids(level)
    inside = level == Level.NAMESPACES
    size = _size(submission) + int(work_bytes)
    source: int | None = None
    folder: Path | None = None
    remove: Path | None = None
    if inside:  # the student process fills its own tmpfs from this descriptor
        source = safefs.open_root(submission)
    elif server is not None:
        folder = remove = server.workspace()
    else:
        remove = Path(tempfile.mkdtemp(prefix="attnlab-sandbox-"))
        if level == Level.USER:
            remove.chmod(0o711)  # the student uid reaches its own copy, never lists the folder
        folder = remove / "work"
        folder.mkdir(mode=0o700)
    if folder is not None:
        try:
            intake.copy_tree(submission, folder)
        except (OSError, intake.HandInRefused) as error:
            safefs.remove_tree(remove)
            raise OSError(f"the working copy could not be made ({error})") from None
        folder.chmod(0o700)
        if uid is not None:
            _give(folder, uid, gid)
    nproc = process_cap(level, uid, limits.get("processes"))
    spec: dict[str, Any] = {
        "work": environment.HOME if inside else str(folder),
        "env": environment.child_env(environment.HOME, environment.TMP) if inside else environment.child_env(folder),
        "limits": limits | {"writable": list(environment.PRIVATE if inside else ()), "nproc": nproc},
        "confine": {"userns": not isolation.running_as_root(), "work_bytes": size} if inside and server else None,
        "fill": inside,
        "uid": uid,
        "gid": gid,
        "quota": None if inside else size,
        "shared": list(writable.world_writable()) if level == Level.USER else [],
        "checked": level > Level.HOOK,
        "cpus": sorted(cpus) if cpus else None,
    }
    group = None
    try:
        group = cgroup.make(limits.get("memory_bytes"), limits.get("processes"))
        joins = tuple(group.open_procs()) if group is not None else ()
    except OSError as error:
        if group is not None:
            group.remove()
        for fd in () if source is None else (source,):
            os.close(fd)
        if remove is not None:
            safefs.remove_tree(remove)
        raise OSError(f"the child's cgroup could not be made ({error})") from None
    spec["joins"] = len(joins)  # the last descriptors: the student process moves itself into its cgroup
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    fds = (request_read, reply_write, theirs.fileno(), *(() if source is None else (source,)), *joins)
    keeper = process = None
    try:
        if server is not None:
            try:
                keeper = server.spawn(spec, fds)
            except zygote.ZygoteError:
                server = None  # started directly instead; the next sandbox starts a fresh fork server
                spec["confine"] = None
        if server is None:
            process = _start_directly(spec, fds, folder, level, size)
    except BaseException:
        for fd in (request_write, reply_read):
            os.close(fd)
        ours.close()
        if group is not None:
            group.remove()
        raise
    finally:
        for fd in (request_read, reply_write, *(() if source is None else (source,)), *joins):
            os.close(fd)
        theirs.close()
    return Child(folder, request_write, reply_read, ours, keeper, server, process, remove, group)


def _size(folder: Path) -> int:
    """Bytes of the regular files under the grader's copy ``folder`` (a tmpfs for it holds them and more)."""
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                pass
    return total


def _spec_descriptor(spec: dict[str, Any]) -> int:
    """A descriptor holding ``spec`` as JSON, for a keeper started as its own process: never its command line,
    which every process of the machine may read in ``/proc``."""
    data = json.dumps(spec).encode()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("attnlab-spec", 0)
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd
    read, write = os.pipe()
    os.write(write, data)  # a spec is a few kilobytes: within a pipe's buffer
    os.close(write)
    return read


def _start_directly(
    spec: dict[str, Any], fds: tuple[int, ...], folder: Path | None, level: Level, size: int
) -> subprocess.Popen:
    """A fresh ``python -I`` keeper (inside bubblewrap in the namespaces layer) for ``spec``."""
    base = fds[: len(fds) - spec["joins"]]
    names = ("request", "reply", "control", "source")
    spec_fd = _spec_descriptor(spec | {"fds": dict(zip(names, base)) | {"joins": list(fds[len(base) :])}})
    try:
        if level == Level.NAMESPACES:
            inner = isolated.command("autograder.sandbox.keeper", "main", str(spec_fd), root=environment.PACKAGE_PARENT)
            command = bwrap.command(
                inner,
                work_bytes=size,
                privileged=isolation.running_as_root(),
                capabilities=bwrap.CHILD_CAPABILITIES,
                chdir="/",  # the student process moves in itself
            )
        else:
            command = isolated.command("autograder.sandbox.keeper", "main", str(spec_fd))
        return subprocess.Popen(
            command,
            cwd=folder if folder is not None else "/",
            env=spec["env"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(*fds, spec_fd),
            start_new_session=True,
        )
    finally:
        os.close(spec_fd)
