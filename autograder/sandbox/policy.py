"""What student code in the child may touch, enforced with a CPython audit hook.

The hook is installed before the first student import and cannot be removed
from Python. It keeps the child inside its working copy: files are written only
there; files are read only there and in Python's own installation (stdlib,
site-packages) and the system's read-only places; no processes, no sockets, no
signals to other processes, no raising of resource limits, and native
libraries load only from those same places. Native code reached through a
library can bypass an audit hook, so this is a second wall: the first is that
the child never sees expected values, hidden inputs or the reference.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from pathlib import Path
from typing import Any

DENIED_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "resource.prlimit",
        "os.setuid",
        "os.setgid",
        "os.chroot",
        "webbrowser.open",
    }
)
WRITE_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.symlink",
        "os.link",
        "os.truncate",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.move",
    }
)
PATH_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.chdir"})
SYSTEM_READ_ROOTS = ("/usr", "/lib", "/lib64", "/etc", "/sys/devices/system/cpu", "/sys/fs/cgroup")
PROC_FILES = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys/vm/overcommit_memory")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class SandboxViolation(PermissionError):
    """Student code tried something the sandbox does not allow."""


def python_roots() -> tuple[str, ...]:
    """Python's own installation: stdlib and every site-packages folder."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()["stdlib"]}
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(r) for r in roots if r))


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


class Policy:
    """The decisions; kept apart from the hook so tests can ask it directly."""

    def __init__(self, work: Path, allowed_callers: tuple = ()) -> None:
        self.work = os.path.realpath(work)
        pid = str(os.getpid())
        self.read_roots = (
            self.work,
            *python_roots(),
            *SYSTEM_READ_ROOTS,
            "/dev",
            "/proc/self",
            f"/proc/{pid}",
            "/proc/thread-self",
            *PROC_FILES,
        )
        self.write_roots = (self.work, "/dev/null")
        self.allowed_callers = allowed_callers

    def resolve(self, path: Any) -> str | None:
        if isinstance(path, int) or path is None:
            return None  # an already open descriptor
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return os.path.realpath(os.path.join(self.work, os.fspath(path)))

    def check(self, event: str, args: tuple, caller: Any = None) -> None:
        if event in DENIED_EVENTS:
            raise SandboxViolation(f"the grading sandbox does not allow {event}")
        if event == "resource.setrlimit" and caller not in self.allowed_callers:
            raise SandboxViolation("the grading sandbox does not allow changing resource limits")
        if event == "open":
            path, mode, flags = ([*list(args), None, None])[:3]
            writing = any(c in (mode or "") for c in "wax+") or bool((flags or 0) & WRITE_FLAGS)
            self._check_path(path, writing)
        elif event in WRITE_EVENTS:
            self._check_path(args[0], True)
            if event in {"os.rename", "os.symlink", "os.link", "shutil.copyfile", "shutil.move"} and len(args) > 1:
                self._check_path(args[1], True)
        elif event in PATH_READ_EVENTS:
            self._check_path(args[0] if args else ".", False)
        elif event in {"os.kill", "os.killpg"}:
            if args and args[0] not in (0, os.getpid()):
                raise SandboxViolation("the grading sandbox does not allow signalling other processes")
        elif event == "ctypes.dlopen":
            name = args[0] if args else None
            if name is None or not os.path.isabs(os.fsdecode(name)):
                raise SandboxViolation("the grading sandbox loads native libraries only by absolute path")
            self._check_path(name, False)

    def _check_path(self, path: Any, writing: bool) -> None:
        resolved = self.resolve(path)
        if resolved is None:
            return
        roots = self.write_roots if writing else self.read_roots
        if not _inside(resolved, roots):
            verb = "write" if writing else "read"
            raise SandboxViolation(f"the grading sandbox does not allow code to {verb} {os.fspath(path)!s:.120}")


def install(work: Path, allowed_callers: tuple = ()) -> Policy:
    """Install the hook for the rest of this process's life."""
    policy = Policy(work, allowed_callers)

    def hook(event: str, args: tuple) -> None:
        if (
            event in ("open", "resource.setrlimit")
            or event in DENIED_EVENTS
            or event in WRITE_EVENTS
            or event in PATH_READ_EVENTS
            or event.startswith(("os.kill", "ctypes.dlopen"))
        ):
            caller = sys._getframe(1).f_code if event == "resource.setrlimit" else None
            policy.check(event, args, caller)

    sys.addaudithook(hook)
    return policy
