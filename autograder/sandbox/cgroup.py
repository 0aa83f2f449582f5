"""A control group per sandbox child: a cap on its processes and threads, and on its memory wherever it lives.

Resource limits (``setrlimit``) count per process (the address space) or per
uid (the processes), and miss memory that belongs to no process's address
space: a ``memfd`` written with ``write``, SysV and POSIX shared memory, files
on a tmpfs. The kernel charges every page to the memory cgroup of the process
that made it, and counts every process and thread in its pids cgroup, so one
cgroup per child bounds all of it, and what passes the limit is killed inside
that cgroup only: never the keeper, the grader or a classmate graded alongside.

The grader (this module runs on its side only) makes the cgroup of each child
where the machine lets it: cgroup v1's ``memory`` and ``pids`` hierarchies
(a folder under the grader's own cgroup), or cgroup v2 with those controllers
enabled for a folder it may write (a sibling of the grader's own cgroup, which
holds processes and so cannot have children with controllers; as root, or
where systemd delegated the tree to this user). It writes the limits, and hands
the child's student process an open ``cgroup.procs`` of each; the student
process writes ``0`` into it (moves itself in) first thing after it is forked,
before it drops its privileges and before any student code runs, so everything
it starts is counted. The kernel checks that write against the credentials
and cgroup namespace of whoever *opened* the file (the grader), so it works
from inside the namespaces layer's own cgroup namespace, where no cgroup file
system is mounted. The keeper stays outside: it still reports how the child
ended. Docker does not let a container write its cgroups (Gradescope's
included): there the child has no cgroup and the other walls (rlimits per uid,
the seccomp filter of :mod:`autograder.sandbox.seccomp`) stand alone.

``ATTNLAB_CGROUPS=0`` turns them off (to test the walls of a machine that cannot make them). Linux only; standard
library only.
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ENV_SWITCH = "ATTNLAB_CGROUPS"
CONTROLLERS = ("memory", "pids")
PREFIX = "attnlab-"  # attnlab-<grader pid>-<n>: a folder whose grader is gone is removed by the next one
REMOVE_WAIT_S = 2.0
_sequence = itertools.count()
_made: set[Path] = set()  # this process's cgroups not yet removed (removed at exit)


@dataclass(frozen=True)
class Parent:
    """Where this process makes its children's cgroups for one ``controller``: under ``folder``, of cgroup
    ``version`` 1 or 2."""

    controller: str
    version: int
    folder: Path


@dataclass(frozen=True)
class Support:
    """What this machine gives: the parents found (none: no cgroup per child), and what was found or why not."""

    parents: tuple[Parent, ...]
    why: str

    def gives(self, controller: str) -> bool:
        return any(parent.controller == controller for parent in self.parents)


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0" and sys.platform.startswith("linux")


@lru_cache(maxsize=1)
def support() -> Support:
    """The cgroup parents this process may use (found once per process; stale folders of ended graders removed)."""
    if not enabled():
        reason = f"{ENV_SWITCH}=0 turns them off" if sys.platform.startswith("linux") else "Linux only"
        return Support((), reason)
    try:
        mounts, own = _mounts(), _own_paths()
    except OSError as error:
        return Support((), f"the cgroup file system cannot be read ({error})")
    parents: list[Parent] = []
    notes: list[str] = []
    for controller in CONTROLLERS:
        found = _v1_parent(controller, mounts, own) or _v2_parent(controller, mounts, own)
        if found is None:
            notes.append(f"no {controller} controller this process may use")
            continue
        problem = _try(found)
        if problem is None:
            parents.append(found)
        else:
            notes.append(f"{controller}: {problem}")
    got = ", ".join(f"{p.controller} (v{p.version}, under {p.folder})" for p in parents)
    return Support(tuple(parents), "; ".join(filter(None, [got and f"one per child: {got}", *notes])))


# -- one child's cgroup ----------------------------------------------------------------------------------------
class Group:
    """The cgroup folders of one child (one per v1 hierarchy, or one v2 folder), limits written."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    def open_procs(self) -> list[int]:
        """A descriptor of each folder's ``cgroup.procs``, open for writing: the student process writes ``0``
        into each (:func:`join`). The caller closes them once the child holds its copies."""
        opened: list[int] = []
        try:
            for folder in self.folders:
                opened.append(os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in opened:
                os.close(fd)
            raise
        return opened

    def remove(self) -> None:
        """Remove the folders (every process of the child has ended; any left is killed first)."""
        for folder in self.folders:
            _remove(folder)


def make(memory_bytes: int | None, processes: int | None) -> Group | None:
    """A cgroup for one child with at most ``memory_bytes`` of memory (None or infinite: no memory limit) and
    ``processes`` processes and threads (None: no cap); None where this machine gives none.

    Raises:
        OSError: the machine gave cgroups to this process, but this one could not be made.
    """
    found = support()
    if not found.parents:
        return None
    name = f"{PREFIX}{os.getpid()}-{next(_sequence)}"
    folders: dict[Path, int] = {}
    for parent in found.parents:
        folders.setdefault(parent.folder / name, parent.version)
    group = Group(list(folders))
    try:
        for folder in folders:
            folder.mkdir(mode=0o755)
            _made.add(folder)
        for parent in found.parents:
            folder = parent.folder / name
            if parent.controller == "memory":
                _limit_memory(folder, parent.version, memory_bytes)
            elif processes is not None:
                _write(folder / "pids.max", str(int(processes)))
    except OSError:
        group.remove()
        raise
    return group


def join(fds: list[int] | tuple[int, ...]) -> None:
    """Move this process into the cgroups whose ``cgroup.procs`` the grader opened (``fds``), and close them.

    Raises:
        OSError: the kernel refused; the caller runs no student code.
    """
    try:
        for fd in fds:
            os.write(fd, b"0")
    finally:
        for fd in fds:
            os.close(fd)


def _limit_memory(folder: Path, version: int, limit: int | None) -> None:
    """The memory limit of a child's cgroup: no swap either, and (v2) an out-of-memory kill takes all of it."""
    unlimited = limit is None or limit < 0 or limit >= 1 << 62
    if version == 2:
        _write(folder / "memory.max", "max" if unlimited else str(int(limit)))
        _write(folder / "memory.oom.group", "1")
        _write(folder / "memory.swap.max", "0", optional=True)
    else:
        _write(folder / "memory.limit_in_bytes", "-1" if unlimited else str(int(limit)))
        _write(folder / "memory.memsw.limit_in_bytes", "-1" if unlimited else str(int(limit)), optional=True)


def _write(path: Path, value: str, optional: bool = False) -> None:
    try:
        with open(path, "w", encoding="ascii") as file:
            file.write(value)
    except FileNotFoundError:
        if not optional:
            raise
    except OSError:
        if not optional:
            raise


def _remove(folder: Path) -> None:
    """rmdir ``folder``: retried while processes leave it (killed when they do not within :data:`REMOVE_WAIT_S`)."""
    deadline = time.monotonic() + REMOVE_WAIT_S
    killed = False
    while True:
        try:
            folder.rmdir()
        except FileNotFoundError:
            break
        except OSError:
            if time.monotonic() < deadline:
                time.sleep(0.01)
                continue
            if killed:
                break  # left to the next grader's sweep
            _kill_all(folder)
            killed, deadline = True, time.monotonic() + REMOVE_WAIT_S
            continue
        break
    _made.discard(folder)


def _kill_all(folder: Path) -> None:
    """SIGKILL every process still in ``folder`` (v2: ``cgroup.kill`` where the kernel has it)."""
    try:
        _write(folder / "cgroup.kill", "1")
        return
    except OSError:
        pass
    try:
        pids = (folder / "cgroup.procs").read_text(encoding="ascii").split()
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass


@atexit.register
def _remove_made() -> None:
    for folder in list(_made):
        if folder.name.startswith(f"{PREFIX}{os.getpid()}-"):
            _remove(folder)


# -- finding where -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Mount:
    point: Path
    root: str  # the mount's root inside its hierarchy
    version: int
    controllers: frozenset[str]  # v1: the hierarchy's controllers


def _mounts() -> list[_Mount]:
    """The cgroup file systems mounted here (``/proc/self/mountinfo``)."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
        for line in table:
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            point = Path(_unescape(fields[4]))
            if tail[0] == "cgroup2":
                found.append(_Mount(point, _unescape(fields[3]), 2, frozenset()))
            else:
                found.append(_Mount(point, _unescape(fields[3]), 1, frozenset(tail[2].split(","))))
    return found


def _unescape(text: str) -> str:
    return text.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _own_paths() -> dict[str, str]:
    """This process's cgroup per v1 controller, and under ``""`` its v2 cgroup (``/proc/self/cgroup``)."""
    own: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as table:
        for line in table:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _inside(mount: _Mount, path: str) -> Path | None:
    """The folder of cgroup ``path`` in ``mount`` (None: the mount does not show it)."""
    root = mount.root.rstrip("/")
    if root and path != root and not path.startswith(root + "/"):
        return None
    folder = mount.point / path[len(root) :].lstrip("/")
    return folder if folder.is_dir() else None


def _v1_parent(controller: str, mounts: list[_Mount], own: dict[str, str]) -> Parent | None:
    """v1: the grader's own cgroup of the ``controller`` hierarchy, if mounted and writable."""
    for mount in mounts:
        if mount.version == 1 and controller in mount.controllers and controller in own:
            folder = _inside(mount, own[controller])
            if folder is not None and os.access(folder, os.W_OK):
                return Parent(controller, 1, folder)
    return None


def _v2_parent(controller: str, mounts: list[_Mount], own: dict[str, str]) -> Parent | None:
    """v2: the nearest ancestor of the grader's own cgroup that enables ``controller`` for its children and that
    this process may write, with the common ancestor's ``cgroup.procs`` writable (the kernel's rule for moving a
    process between two cgroups)."""
    if "" not in own:
        return None
    for mount in mounts:
        if mount.version != 2:
            continue
        mine = _inside(mount, own[""])
        if mine is None:
            continue
        for folder in [mine, *mine.parents]:
            if not str(folder).startswith(str(mount.point)):
                break
            try:
                enabled = (folder / "cgroup.subtree_control").read_text(encoding="ascii").split()
            except OSError:
                continue
            if controller in enabled and os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK):
                return Parent(controller, 2, folder)
    return None


def _try(parent: Parent) -> str | None:
    """Make and remove a cgroup under ``parent`` (removing those of graders that ended); None when that works."""
    _sweep(parent.folder)
    probe = parent.folder / f"{PREFIX}{os.getpid()}-probe"
    try:
        probe.mkdir(mode=0o755)
    except FileExistsError:
        pass
    except OSError as error:
        return f"cannot make a cgroup under {parent.folder} ({error.strerror})"
    try:
        limit = "pids.max" if parent.controller == "pids" else "memory.max" if parent.version == 2 else None
        if limit is not None:
            _write(probe / limit, "max")
        else:
            _write(probe / "memory.limit_in_bytes", "-1")
        return None
    except OSError as error:
        return f"cannot set a limit under {parent.folder} ({error.strerror})"
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


def _sweep(folder: Path) -> None:
    """Remove the empty cgroups left under ``folder`` by graders that are gone."""
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.name.startswith(PREFIX) and entry.is_dir()]
    except OSError:
        return
    for name in names:
        owner = name[len(PREFIX) :].split("-")[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            try:
                (folder / name).rmdir()
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
