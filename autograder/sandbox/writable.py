"""Every folder of this machine that any user may write into: where student code in the user layer could leave
something for a later sandbox (another step, another student) to read, or fill a disk others need.

The user layer has no mount namespace, so these folders cannot be hidden from
student code; each sandbox's uid is its own, so the keeper removes everything
that uid owns in every one of them when the sandbox ends, and counts it
towards the sandbox's quota while it runs (:mod:`autograder.sandbox.keeper`).
The list is found once per grading process, the way ``find / -xdev -perm
-0002 -type d`` would, on every writable filesystem mounted here (``/run/lock``
and ``/dev/mqueue`` as well as ``/tmp``, ``/var/tmp`` and ``/dev/shm``), by
``find`` itself where it is installed (a walk in Python takes several times
longer). Standard library only.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from functools import lru_cache

MOUNTS = "/proc/self/mounts"
# Filesystems that hold no files a process could leave behind (or that the kernel keeps for itself).
VIRTUAL = frozenset(
    {
        "proc", "sysfs", "cgroup", "cgroup2", "devpts", "securityfs", "debugfs", "tracefs", "pstore", "bpf",
        "configfs", "fusectl", "binfmt_misc", "autofs", "nsfs", "efivarfs", "rpc_pipefs", "selinuxfs", "ramfs",
    }
)  # fmt: skip
ALWAYS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")  # where they usually are, if they exist
FIND_TIMEOUT_S = 120.0
MAX_FOUND = 10_000
_started: list[threading.Thread] = []


def warm_up() -> None:
    """Start finding them in a background thread (the first sandbox of the user layer waits for it)."""
    if not _started:
        thread = threading.Thread(target=world_writable, name="attnlab-world-writable", daemon=True)
        _started.append(thread)
        thread.start()


@lru_cache(maxsize=1)
def world_writable() -> tuple[str, ...]:
    """Every folder writable by every user, on every writable, non-virtual filesystem mounted here, sorted."""
    found = {path for path in ALWAYS if _writable_by_all(path)}
    for mount in mount_points():
        found.update(_find(mount))
        if len(found) > MAX_FOUND:
            break
    return tuple(sorted(found))


def mount_points() -> list[str]:
    """The mount points of writable, non-virtual filesystems (``/`` first), from ``/proc/self/mounts``."""
    try:
        with open(MOUNTS, encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return ["/"]
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) < 4 or fields[2] in VIRTUAL or "ro" in fields[3].split(","):
            continue
        point = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
        if point.startswith(("/proc", "/sys")):
            continue
        points.append(point)
    return sorted(set(points), key=lambda p: (p != "/", p))


def _find(mount: str) -> set[str]:
    """World-writable folders on the filesystem mounted at ``mount``, not crossing into other mounts."""
    binary = shutil.which("find")
    if binary is not None:
        try:
            done = subprocess.run(
                [binary, mount, "-xdev", "-type", "d", "-perm", "-0002", "-print0"],
                capture_output=True,
                timeout=FIND_TIMEOUT_S,
            )
            return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
        except (OSError, subprocess.TimeoutExpired):
            pass
    found = set()
    try:
        device = os.lstat(mount).st_dev
    except OSError:
        return found
    pending = [mount]
    while pending and len(found) <= MAX_FOUND:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode) and info.st_dev == device:
                        if info.st_mode & 0o002:
                            found.add(entry.path)
                        pending.append(entry.path)
        except OSError:
            continue
    return found


def _writable_by_all(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and bool(info.st_mode & 0o002)
