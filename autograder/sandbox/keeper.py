"""The keeper of one sandboxed child: confines it, watches it, and ends everything it started.

Every sandbox child is a pair of processes. The *keeper* (trusted, never runs
student code) forks the *student* process, which drops what it may not keep and
becomes :func:`autograder.sandbox.child.main`. The keeper then waits for one of
two things: the student process ends (the keeper sends its wait status to the
grader on the control socket), or the grader shuts the control socket (the
keeper kills the student process). Meanwhile the grader may ask, one byte
:data:`CPU_QUERY` on the control socket, for the CPU nanoseconds of every
process of the child so far (:func:`autograder.sandbox.cpuclock.tree_ns`, read
from the kernel's accounting: a clock no student code can change); the keeper
answers with one line, ``{"cpu_ns": int | null}``, and ignores any other byte.
Only the grader holds the other end of that socket: the student process closes
its copy before any student code runs, and the keeper is not dumpable (no
process of the same uid may trace it or take its descriptors). Either way the keeper kills every process
the student process started, waits until they are gone, and only then closes
the control socket: the grader's end of it reading end-of-file means nothing of
that child is left. The keeper is PID 1 of its own PID namespace in the
namespaces layer (leaving it ends the namespace); elsewhere it is a child
subreaper (orphans of the student process become its children), and in the
user layer it also removes what the sandbox's own uid left in the shared
temporary folders.

Inside the fork server of the namespaces layer, each child first gets its own
namespaces (:func:`_confine`): a new PID, mount, network, IPC and UTS namespace
(and user namespace when not root), a size-limited tmpfs of its own at
:data:`environment.HOME`, a private ``/tmp`` and ``/dev/shm``, and a ``/proc``
that shows only its own processes. The working copy is not mounted from the
host at all: the student process, once it has dropped its privileges and
before any student code runs, copies the grader's copy in through a descriptor
the grader opened (:func:`autograder.handin.intake.copy_from`), so the fork server
and the child never see another student's files, and what student code writes
is bounded by the tmpfs. In the other layers the working copy is a folder of
the host, and the keeper stops the student process once it holds more than its
quota (checked every :data:`QUOTA_POLL_S` seconds).

The spec (JSON, from the grader: over the fork server's socket, or in a
descriptor for a keeper started as its own process, never on a command line)
says which of that applies::

    {"work": folder, "env": {...}, "limits": {...},
     "confine": null | {"userns": bool, "work_bytes": int},  # the fork server's child: own namespaces
     "fill": bool,                          # copy the working copy in from the fourth descriptor
     "uid": null | int, "gid": null | int,  # the student process drops to these (the grader runs as root)
     "quota": null | int,                   # bytes the working copy (and what the uid left in "shared") may hold
     "shared": [folder, ...],               # world-writable folders cleaned of the uid's files when it ends
     "checked": bool,                       # refuse to run student code with any capability left
     "cpus": null | [int, ...],             # the CPUs the child may run on (null: any)
     "joins": int}                          # the last descriptors: the child's cgroup.procs, which the student
                                            # process writes itself into first (autograder.sandbox.cgroup)

The student process is the out-of-memory killer's first choice (``oom_score_adj``
1000): a child that spends the machine's memory is the one ended, never the
keeper or the grader.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import stat
import tempfile
from typing import Any, NoReturn

from autograder.base import safefs
from autograder.handin import intake
from autograder.sandbox import cgroup, cpuclock, environment, linux

EXIT_SETUP_FAILED = 71  # the student process could not be confined; no student code ran
STUDENT_OOM_SCORE = 1000  # the student process is the out-of-memory killer's first choice, never the grader's
TMP_SIZE = "size=64m"
SHM_SIZE = "size=16m"
POLL_S = 0.01
QUOTA_POLL_S = 0.2
MAX_COUNTED = 20_000  # names counted towards a quota; more is over it
CPU_QUERY = b"c"  # the grader's question on the control socket: the child's CPU nanoseconds so far


# -- entry points -------------------------------------------------------------------------
def main(spec_fd: str) -> int:
    """A keeper started as its own process (``python -I``, possibly inside bubblewrap), its spec in the
    descriptor ``spec_fd``; never returns."""
    with os.fdopen(int(spec_fd), "rb") as source:
        spec = json.loads(source.read())
    fds = spec["fds"]
    base = tuple(fds[name] for name in ("request", "reply", "control", "source") if name in fds)
    start(spec, base + tuple(fds.get("joins", ())))
    return EXIT_SETUP_FAILED  # not reached


def start(spec: dict[str, Any], fds: tuple[int, ...], report_fd: int | None = None) -> NoReturn:
    """Run in a fresh process (a fork of the fork server, or :func:`main`): confine if asked, then keep.

    ``report_fd`` receives one JSON line, ``{"pid": keeper}`` or ``{"error": ...}`` (the fork server's
    view of the keeper, for a last-resort kill).
    """
    _pin(spec.get("cpus"))
    label = str(spec["limits"].get("label", "child"))
    linux.set_name(f"ak:{label}")
    try:
        if spec.get("confine"):
            _enter_namespaces(spec["confine"])
            keeper = os.fork()  # the first process of the new PID namespace
            if keeper:
                _report(report_fd, {"pid": keeper})
                os._exit(0)
            if report_fd is not None:
                os.close(report_fd)
            _confine(spec["confine"])
        else:
            _report(report_fd, {"pid": os.getpid()})
            if os.getpid() != 1:
                linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
            if os.getsid(0) != os.getpid():
                os.setsid()
    except BaseException as error:
        _report(report_fd, {"error": f"{type(error).__name__}: {error}"})
        _fail(fds[2], f"the sandbox could not confine the child: {error}")
    fds, joins = _split(fds, spec)
    student = os.fork()
    if student == 0:
        linux.set_name(f"as:{label}")
        _become_student(spec, fds, joins)
    for fd in (*fds[3:], *joins):
        os.close(fd)  # the grader's copy, the cgroups: the student process has its own descriptors of them
    _keep(student, fds, spec)


def _split(fds: tuple[int, ...], spec: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The child's descriptors (request, reply, control, the grader's copy), and the ``cgroup.procs`` to join."""
    count = int(spec.get("joins") or 0)
    return fds[: len(fds) - count], fds[len(fds) - count :]


def selftest(spec_json: str) -> int:
    """Confine a throw-away child exactly as a sandbox child is (``spec``: ``confine``, ``uid``, ``gid``), and
    drop its privileges; print ``ok`` or what failed. Exit status 0 either way."""
    spec = json.loads(spec_json)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _enter_namespaces(spec["confine"])
            if os.fork() == 0:  # PID 1 of the new namespace
                _confine(spec["confine"])
                student = os.fork()
                if student == 0:
                    _drop_privileges(spec)
                    with open(f"{environment.HOME}/selftest", "w", encoding="ascii") as probe:
                        probe.write("ok")  # the working copy's tmpfs is the student's to write
                    os.write(write, b"ok")
                    os._exit(0)
                os.waitpid(student, 0)
                os._exit(0)
        except BaseException as error:
            os.write(write, f"{type(error).__name__}: {error}".encode()[:500])
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        text = answer.read().decode(errors="replace")
    os.waitpid(pid, 0)
    print(text or "the confined test process ended without an answer")
    return 0


def loads() -> int:
    """Import what a child imports (exit 0 when that works): run as the student uid to check it can read Python."""
    import numpy  # noqa: F401

    from autograder.sandbox import child  # noqa: F401

    return 0


def _pin(cpus: list[int] | None) -> None:
    """Keep this child (and everything it starts) on ``cpus``: a step that measures time gets a core of its own
    while the grader's other steps run on the others. A matter of timing quality, never of isolation: a
    machine that refuses it grades unpinned."""
    if cpus and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, [int(cpu) for cpu in cpus])
        except (OSError, ValueError):
            pass


# -- confinement ------------------------------------------------------------------------------------
def _enter_namespaces(confine: dict[str, Any]) -> None:
    """New namespaces for this (single-threaded, just forked) process; its next child is their PID 1."""
    uid, gid = os.getuid(), os.getgid()
    flags = linux.CLONE_NEWNS | linux.CLONE_NEWPID | linux.CLONE_NEWNET | linux.CLONE_NEWIPC | linux.CLONE_NEWUTS
    if confine.get("userns"):
        flags |= linux.CLONE_NEWUSER
    linux.unshare(flags)
    if confine.get("userns"):
        linux.write_id_maps(uid, gid)


def _confine(confine: dict[str, Any]) -> None:
    """In the new mount namespace (as its PID 1): a working copy of its own (an empty tmpfs of
    ``confine["work_bytes"]`` bytes, filled by the student process), a private /tmp, /dev/shm and /proc."""
    private = linux.MS_NOSUID | linux.MS_NODEV
    linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
    # mode 0777: the student uid copies its files in; the mount exists in this namespace only
    linux.mount("tmpfs", environment.HOME, "tmpfs", private, f"size={int(confine['work_bytes'])},mode=0777")
    # A Python installed under /tmp (a CI's or a course's virtual environment) sits on the fork server's /tmp;
    # hold each such folder by descriptor, so it can be mounted again on top of the private /tmp.
    held = [(root, os.open(root, os.O_PATH | os.O_DIRECTORY)) for root in _roots_under(environment.TMP)]
    linux.mount("tmpfs", environment.TMP, "tmpfs", private, f"{TMP_SIZE},mode=1777")
    for root, fd in held:
        os.makedirs(root, exist_ok=True)
        linux.mount(f"/proc/self/fd/{fd}", root, None, linux.MS_BIND | linux.MS_REC)  # read-only, as bwrap bound it
        os.close(fd)
    if os.path.isdir("/dev/shm"):
        linux.mount("tmpfs", "/dev/shm", "tmpfs", private | linux.MS_NOEXEC, f"{SHM_SIZE},mode=1777")
    linux.mount("proc", "/proc", "proc", private | linux.MS_NOEXEC)


def _roots_under(folder: str) -> list[str]:
    """The Python installation's folders (as bubblewrap mounted them) that lie inside ``folder``."""
    from autograder.sandbox.bwrap import python_roots

    return [root for root in python_roots() if root.startswith(folder.rstrip("/") + "/") and os.path.isdir(root)]


def _become_student(spec: dict[str, Any], fds: tuple[int, ...], joins: tuple[int, ...] = ()) -> NoReturn:
    """The student process: into its cgroups, drop privileges, check nothing is left, fill and move into the
    working copy, serve.

    Never returns: whatever happens, this process ends here (it is a fork of trusted code).
    """
    try:
        try:
            os.setsid()  # its own session and process group: a signal to its group never reaches the keeper
            cgroup.join(joins)  # everything it starts is counted there; the keeper stays outside
            _first_to_go()
            _drop_privileges(spec)
            if spec.get("fill"):  # as the student uid, so every file of the copy is its own
                with safefs.opened(safefs.open_root(spec["work"])) as work:
                    intake.copy_from(fds[3], work)
                os.close(fds[3])
            os.chdir(spec["work"])
            os.environ.clear()
            os.environ.update(spec["env"])
            tempfile.tempdir = None  # recomputed from the child's TMPDIR
            from autograder.sandbox import child
        except BaseException as error:  # no student code runs; the grader learns why
            _fail(fds[2], f"the sandbox could not confine the child: {type(error).__name__}: {error}")
        os.close(fds[2])
        child.main(json.dumps(spec["limits"] | {"request_fd": fds[0], "reply_fd": fds[1]}))
        code = 0
    except BaseException:
        code = 70
    os._exit(code)


def _first_to_go() -> None:
    """Make this process the out-of-memory killer's first choice (as root, for good: student code cannot lower it
    again; elsewhere no lower than the grader's own). A machine that refuses it keeps the other walls."""
    try:
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as score:
            score.write(str(STUDENT_OOM_SCORE))
    except OSError:
        pass


def _drop_privileges(spec: dict[str, Any]) -> None:
    """To the unprivileged uid (as root) or no capabilities at all (in a user namespace); then check."""
    if spec.get("uid") is not None:
        linux.drop_bounding_set()
        os.setgroups([])
        os.setgid(int(spec["gid"]))
        os.setuid(int(spec["uid"]))
        linux.clear_capabilities()  # the inheritable set survives a change of uid
    elif (spec.get("confine") or {}).get("userns"):
        linux.drop_bounding_set()
        linux.clear_capabilities()
    linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)  # after any uid change, which clears it
    if spec.get("checked"):
        caps = linux.capabilities()
        left = {name: value for name, value in caps.items() if name != "CapBnd" and value}
        if left or (spec.get("uid") is not None and 0 in (os.getuid(), os.geteuid())):
            raise PermissionError(f"privileges left after dropping them: {left}")


# -- keeping ----------------------------------------------------------------------------------------
def _keep(student: int, fds: tuple[int, ...], spec: dict[str, Any]) -> NoReturn:
    """Wait for the student process or the grader; then end everything and report."""
    os.close(fds[0])
    os.close(fds[1])
    _undumpable()
    control = socket.socket(fileno=fds[2])
    try:
        status, exceeded = _wait_for(student, control, spec)
        report: dict[str, Any] = {"status": status} | ({"exceeded": exceeded} if exceeded else {})
        control.sendall(json.dumps(report).encode() + b"\n")
    except OSError:
        pass  # the grader is gone; still end everything
    finally:
        _end_all()
        _remove_leftovers(spec)
        os._exit(0)  # closes the control socket: the grader reads end-of-file once nothing is left


def _wait_for(student: int, control: socket.socket, spec: dict[str, Any]) -> tuple[int, int | None]:
    """The student process's wait status, and the quota it passed (None: it did not); it is killed first if the
    grader shuts the control socket or the working copy grows past its quota."""
    try:
        watch = os.pidfd_open(student)
    except (AttributeError, OSError):
        watch = None
    quota = spec.get("quota")
    wait = POLL_S if watch is None else QUOTA_POLL_S if quota else None
    while True:
        watched = [control] + ([watch] if watch is not None else [])
        ready, _, _ = select.select(watched, [], [], wait)
        done, status = os.waitpid(student, os.WNOHANG)
        if done:
            return status, None
        if control in ready:
            asked = control.recv(64)
            if not asked:  # the grader's shutdown: stop the student process
                os.kill(student, signal.SIGKILL)
                return os.waitpid(student, 0)[1], None
            _answer(control, asked)
        if quota and usage(spec["work"], spec.get("uid"), spec.get("shared", ()), quota) > quota:
            os.kill(student, signal.SIGKILL)
            return os.waitpid(student, 0)[1], int(quota)


def _answer(control: socket.socket, asked: bytes) -> None:
    """One line per :data:`CPU_QUERY` byte in ``asked``: the CPU nanoseconds of every process below this keeper
    (the student process and all it started), or null where they cannot be read; other bytes are ignored."""
    for _ in range(asked.count(CPU_QUERY)):
        control.sendall(json.dumps({"cpu_ns": cpuclock.tree_ns()}).encode() + b"\n")


def _undumpable() -> None:
    """No process of this keeper's uid (the student's, in the hook layer and a user namespace) may trace it or
    take its descriptors (``pidfd_getfd``): the control socket stays the grader's. Once the student process is
    forked (the flag is inherited); a machine that refuses it keeps the other walls."""
    try:
        linux.prctl(linux.PR_SET_DUMPABLE, 0)
    except (OSError, AttributeError):
        pass


def usage(work: str, uid: int | None, shared: Any, limit: int) -> int:
    """Bytes on disk of the working copy and, for a uid of the sandbox's own, of what it owns in the shared
    folders; counting stops past ``limit`` (or past :data:`MAX_COUNTED` names, which counts as past it)."""
    pending = [work] + [
        entry.path for folder in (shared if uid is not None else ()) for entry in _owned(folder, int(uid))
    ]
    total = names = 0
    while pending and total <= limit:
        path = pending.pop()
        try:
            info = os.lstat(path)
        except OSError:
            continue
        names += 1
        if names > MAX_COUNTED:
            return limit + 1
        total += info.st_blocks * 512
        if stat.S_ISDIR(info.st_mode):
            try:
                pending += [entry.path for entry in os.scandir(path)]
            except OSError:
                pass
    return total


def _owned(folder: str, uid: int) -> list[os.DirEntry]:
    """The entries of ``folder`` owned by ``uid``."""
    try:
        with os.scandir(folder) as entries:
            return [entry for entry in entries if _owner(entry) == uid]
    except OSError:
        return []


def _owner(entry: os.DirEntry) -> int | None:
    try:
        return entry.stat(follow_symlinks=False).st_uid
    except OSError:
        return None


def _end_all() -> None:
    """Kill every process left of this child and reap it (PID 1: everything in the namespace; otherwise every
    descendant, which as a subreaper this process inherits)."""
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)  # PID 1 of its own namespace: every other process in it
        except ProcessLookupError:
            pass
    while True:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _remove_leftovers(spec: dict[str, Any]) -> None:
    """The user layer: what the sandbox's own uid left in any world-writable folder of the machine (``shared``:
    every one, found when the fork server started) goes with it (that uid is this sandbox's alone, so everything
    it owns there is the child's)."""
    uid = spec.get("uid")
    if uid is None or spec.get("confine") or uid == 0:
        return
    for folder in spec.get("shared", ()):
        for entry in _owned(folder, int(uid)):
            try:
                if entry.is_dir(follow_symlinks=False):
                    safefs.remove_tree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _children() -> list[int]:
    """This process's children (``/proc/self/task/*/children``; a scan of ``/proc`` where that is missing)."""
    me = os.getpid()
    listed = f"/proc/{me}/task/{me}/children"
    try:
        with open(listed, encoding="ascii") as file:
            return [int(pid) for pid in file.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as file:
                    if int(file.read().rpartition(")")[2].split()[1]) == me:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return found


# -- reporting --------------------------------------------------------------------------------------
def _report(fd: int | None, message: dict[str, Any]) -> None:
    if fd is None:
        return
    try:
        os.write(fd, json.dumps(message).encode() + b"\n")
        os.close(fd)
    except OSError:
        pass


def _fail(control_fd: int, error: str) -> NoReturn:
    """Tell the grader the child could not be confined (no student code ran) and end."""
    try:
        with socket.socket(fileno=control_fd) as control:
            control.sendall(json.dumps({"error": error[:500]}).encode() + b"\n")
    except OSError:
        pass
    try:
        os.write(2, error.encode(errors="replace") + b"\n")
    finally:
        os._exit(EXIT_SETUP_FAILED)
