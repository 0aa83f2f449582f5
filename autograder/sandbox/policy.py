"""What student code in the child may touch, enforced with a CPython audit hook (on in every isolation layer).

The hook is installed before the first student import and cannot be removed
from Python. It keeps the child inside its working copy: files are written only
there (and in the private ``/tmp`` of the namespaces layer); files are read only
there, in Python's own installation and in the system's read-only places; no
processes, no sockets, no signals to other processes, no raising of resource
limits, no symbolic or hard links, no folder opened outside the working copy
(so no ``dir_fd`` can point outside it), and native libraries load only from
the read-only places.

Paths are resolved by the kernel (an ``O_PATH`` descriptor and its
``/proc/self/fd`` link), against the real current folder, so ``/proc/self/root``,
``chdir`` tricks and symbolic links resolve exactly as the real call will. The
decisions are closures over data fixed at installation and over functions
captured then: replacing anything in this module, in ``os`` or in ``posixpath``
from student code changes nothing. The functions that start processes or signal
them without an audit event (``_posixsubprocess.fork_exec``, ``os.pidfd_open``,
``signal.pidfd_send_signal``, ``os.mkfifo``, ``os.mknod``) are replaced before
student code runs, and modules that write files without an audit event
(``readline``, ``sqlite3``, ``dbm``) cannot be imported.

Native code can still get around an audit hook (``ctypes`` memory access, a
compiled extension): that is why this is the second wall, behind the namespaces
or the separate uid of :mod:`autograder.sandbox.isolation`.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.sandbox import bwrap

DENIED_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.symlink",
        "os.link",
        "os.setxattr",
        "os.removexattr",
        "pty.spawn",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.sethostname",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "resource.prlimit",
        "os.setuid",
        "os.setgid",
        "os.chroot",
        "sqlite3.connect",
        "webbrowser.open",
    }
)
# write events: (index of dir_fd in the event's arguments or None, whether the call follows a final link)
WRITE_EVENTS = {
    "os.remove": (1, False),
    "os.rmdir": (1, False),
    "os.mkdir": (2, False),
    "os.chmod": (2, True),
    "os.chown": (3, True),
    "os.utime": (3, True),
    "os.truncate": (None, True),
}
TWO_PATH_EVENTS = frozenset({"os.rename"})  # (src, dst, src_dir_fd, dst_dir_fd)
READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.getxattr", "os.listxattr"})
DENIED_IMPORTS = frozenset(
    {
        "readline",
        "sqlite3",
        "_sqlite3",
        "dbm",
        "_dbm",
        "_gdbm",
        "_posixsubprocess",
        "_ctypes",
        "posix",
        "_signal",
        "_testcapi",
        "_testinternalcapi",
        "_xxsubinterpreters",
        "_xxinterpchannels",
    }
)  # re-imports too: a fresh _posixsubprocess would bring back fork_exec
SYSTEM_READ_ROOTS = ("/usr", "/lib", "/lib64", "/etc", "/sys/devices/system/cpu", "/sys/fs/cgroup")
PROC_FILES = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys/vm/overcommit_memory")
PROC_SELF_DENIED = ("root", "cwd", "fd", "map_files", "task", "mem")  # of /proc/<own pid>/
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
O_PATH = getattr(os, "O_PATH", 0)


class SandboxViolation(PermissionError):
    """Student code tried something the sandbox does not allow."""


class Policy:
    """The decisions, as data fixed at creation; kept apart from the hook so tests can ask it directly.

    Args:
        work: the working copy (readable and writable).
        writable: more writable folders (the namespaces layer's private ``/tmp``).
        allowed_callers: code objects that may change resource limits (the child's own CPU limit).
    """

    __slots__ = ("_check",)

    def __init__(self, work: Path, allowed_callers: tuple = (), writable: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "_check", _decider(work, allowed_callers, writable))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a sandbox policy cannot be changed")

    def check(self, event: str, args: tuple, caller: Any = None) -> None:
        """Raise :class:`SandboxViolation` if ``event`` with ``args`` is not allowed."""
        self._check(event, args, caller)


def _decider(work: Path, allowed_callers: tuple, writable: tuple[str, ...]) -> Callable[[str, tuple, Any], None]:
    """The check as a closure: every name it uses, builtins included, is bound here, before any student code runs
    (student code can rebind ``builtins.type`` or ``os.path.realpath``; these closures never look them up again)."""
    _type, _any, _bool, _list, _len, _int, _str, _bytes = type, any, bool, list, len, int, str, bytes
    _getattr, _tuple = getattr, tuple
    real, isabs, isdir = os.path.realpath, os.path.isabs, os.path.isdir
    work_root = real(work)
    pid = os.getpid()
    own_proc = f"/proc/{pid}"
    read_roots = (
        work_root,
        *writable,
        *bwrap.python_roots(),
        *SYSTEM_READ_ROOTS,
        "/dev",
        own_proc,
        *PROC_FILES,
    )
    write_roots = (work_root, *writable, "/dev/null")
    denied_proc = _tuple(f"{own_proc}/{name}" for name in PROC_SELF_DENIED)
    callers = _tuple(allowed_callers)
    denied, writes, two_paths, reads, denied_imports = (
        DENIED_EVENTS,
        dict(WRITE_EVENTS),
        TWO_PATH_EVENTS,
        READ_EVENTS,
        DENIED_IMPORTS,
    )
    posix_open, posix_close, posix_fstat, posix_lstat, readlink = os.open, os.close, os.fstat, os.lstat, os.readlink
    is_dir, is_link, getframe = stat.S_ISDIR, stat.S_ISLNK, sys._getframe
    o_path = O_PATH
    kernel_paths = _bool(o_path) and isdir("/proc/self/fd")
    write_flags, nofollow, cloexec = WRITE_FLAGS, getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_CLOEXEC", 0)
    violation, not_found, os_error = SandboxViolation, FileNotFoundError, OSError
    student_prefix = work_root.rstrip("/") + "/"

    def inside(path: str, roots: tuple[str, ...]) -> bool:
        return _any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)

    def refuse(what: str) -> None:
        raise violation(f"the grading sandbox does not allow {what}")

    def text(path: Any) -> str | None:
        if path is None or _type(path) is _int:
            return None
        if _type(path) is _bytes:
            return path.decode("utf-8", "surrogateescape")
        if _type(path) is _str:
            return path
        refuse(f"a path of type {_type(path).__name__} here")

    def fd_path(fd: int) -> str:
        return readlink(f"/proc/self/fd/{fd}")

    def resolve(path: Any, follow: bool = True, dir_fd: Any = None) -> tuple[str, bool] | None:
        """``(real path, is a folder)`` as the kernel sees it; None for a descriptor that is not a file's."""
        if _type(path) is _int:
            if not kernel_paths:
                return None
            link = fd_path(path)
            return (link, False) if link.startswith("/") else None  # a pipe or socket already open
        name = text(path)
        if name is None:
            return None
        if _type(dir_fd) is _int and dir_fd >= 0 and not name.startswith("/"):
            if not kernel_paths:
                refuse("paths relative to a folder descriptor here")
            name = f"{fd_path(dir_fd)}/{name}"
        if not kernel_paths:  # no /proc (macOS): the best the standard library knows
            return real(name), isdir(name)
        try:
            fd = posix_open(name, o_path | cloexec | (0 if follow else nofollow))
        except not_found:
            parent, _, base = name.rstrip("/").rpartition("/")
            if base in ("", ".", ".."):
                raise
            try:
                if is_link(posix_lstat(name).st_mode):
                    refuse(f"following the dangling link {name[:120]}")
            except not_found:
                pass
            parent_real = resolve(parent or ("/" if name.startswith("/") else "."))
            return (f"{parent_real[0].rstrip('/')}/{base}", False) if parent_real else None
        try:
            return fd_path(fd), is_dir(posix_fstat(fd).st_mode)
        finally:
            posix_close(fd)

    def check_path(path: Any, writing: bool, follow: bool = True, dir_fd: Any = None, opening: bool = False) -> None:
        try:
            found = resolve(path, follow, dir_fd)
        except violation:
            raise
        except os_error:
            found = (None, False)
        if found is None:
            return  # an already open pipe or socket
        resolved, folder = found
        roots = write_roots if writing else read_roots
        verb = "write" if writing else "read"
        shown = (text(path) if _type(path) is not _int else f"descriptor {path}") or "?"
        if resolved is None or not resolved.startswith("/") or not inside(resolved, roots):
            refuse(f"code to {verb} {shown[:120]}")
        if inside(resolved, denied_proc):
            refuse(f"code to {verb} {shown[:120]}")
        if opening and folder and not inside(resolved, write_roots):
            refuse(f"opening the folder {shown[:120]} (only folders of the working copy can be opened)")

    def from_student() -> bool:
        frame = getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.startswith(student_prefix):
                return True
            frame = frame.f_back
        return False

    def check(event: str, args: tuple, caller: Any = None) -> None:
        if event in denied:
            refuse(event)
        if event == "resource.setrlimit":
            if caller not in callers:
                refuse("changing resource limits")
        elif event == "open":
            path, mode, flags = ([*_list(args), None, None])[:3]
            writing = _any(c in (mode or "") for c in "wax+") or _bool((flags or 0) & write_flags)
            check_path(path, writing, opening=True)
        elif event in writes:
            dir_fd_at, follow = writes[event]
            dir_fd = args[dir_fd_at] if dir_fd_at is not None and _len(args) > dir_fd_at else None
            check_path(args[0], True, follow=follow, dir_fd=dir_fd)
        elif event in two_paths:
            check_path(args[0], True, follow=False, dir_fd=args[2] if _len(args) > 2 else None)
            check_path(args[1], True, follow=False, dir_fd=args[3] if _len(args) > 3 else None)
        elif event in reads:
            check_path(args[0] if args else ".", False)
        elif event == "os.chdir":
            check_path(args[0] if args else ".", True)  # only within the working copy
        elif event in ("os.kill", "os.killpg"):
            if args and args[0] not in (0, pid):
                refuse("signalling other processes")
        elif event == "import":
            if args and args[0] in denied_imports:
                refuse(f"importing {args[0]}")
        elif event == "ctypes.dlopen":
            name = args[0] if args else None
            if name is None or not isabs(text(name) or ""):
                refuse("loading native libraries except by absolute path")
            check_path(name, False)
        elif event in ("ctypes.dlsym", "ctypes.dlsym/handle"):
            if from_student():
                refuse("looking up native functions (ctypes) from student code")

    return check


WATCHED_PREFIXES = ("os.", "ctypes.dl", "signal.", "socket.", "sys.", "gc.", "resource.", "sqlite3.")
WATCHED = frozenset({"open", "import", "glob.glob", "subprocess.Popen", "pty.spawn", "webbrowser.open"})


def _disarm_unaudited() -> None:
    """Replace the process and signal functions that raise no audit event (before any student code runs).

    Every reference a loaded module holds is replaced too (``subprocess`` keeps its own ``_fork_exec``).
    """
    import _posixsubprocess
    import posix
    import signal

    def refused(name: str) -> Callable[..., None]:
        def stand_in(*args: object, **kwargs: object) -> None:
            raise SandboxViolation(f"the grading sandbox does not allow {name}")

        return stand_in

    originals = {}
    for module, names in (
        (_posixsubprocess, ("fork_exec",)),
        (posix, ("pidfd_open", "mkfifo", "mknod", "fork", "forkpty")),
        (signal, ("pidfd_send_signal",)),
    ):
        for name in names:
            if hasattr(module, name):
                originals[id(getattr(module, name))] = refused(f"{name}")
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if callable(value) and id(value) in originals:
                namespace[name] = originals[id(value)]


def install(work: Path, allowed_callers: tuple = (), writable: tuple[str, ...] = ()) -> None:
    """Install the hook for the rest of this process's life (nothing of it is reachable from Python)."""
    check = _decider(work, allowed_callers, writable)
    watched, prefixes, getframe, _getattr = WATCHED, WATCHED_PREFIXES, sys._getframe, getattr
    busy = threading.local()  # the hook's own calls (its O_PATH opens) are not checked again

    def hook(event: str, args: tuple) -> None:
        if (event in watched or event.startswith(prefixes)) and not _getattr(busy, "on", False):
            busy.on = True
            try:
                caller = getframe(1).f_code if event == "resource.setrlimit" else None
                check(event, args, caller)
            finally:
                busy.on = False

    _disarm_unaudited()
    sys.addaudithook(hook)
