"""The few Linux system calls the sandbox needs that Python 3.10/3.11 does not wrap.

``unshare`` (``os.unshare`` arrived in 3.12), ``mount``, ``capset`` and
``prctl``, through the C library. Written by hand: no well-kept Python library
wraps them, and bubblewrap (which the sandbox uses for everything it can) cannot
be entered by an already running, pre-imported fork server. Each call raises
``OSError`` with the C library's errno.

Only trusted code calls these, in a freshly forked process, before any student
code runs.
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
CAPABILITY_VERSION_3 = 0x20080522
LAST_CAPABILITY = 63  # the bounding set is dropped up to here (unknown ones fail quietly)


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def unshare(flags: int) -> None:
    """Move this (single-threaded) process into new namespaces (``CLONE_NEW*`` flags)."""
    _check(_libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """mount(2)."""
    _check(
        _libc().mount(_bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), _bytes(data)),
        f"mount {target}",
    )


def prctl(option: int, value: int) -> None:
    _check(_libc().prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def set_name(name: str) -> None:
    """This thread's command name (at most 15 bytes; what ``ps``, ``top`` and process accounting show).

    Best effort: a name is a label for people and profiles, never evidence (student code can change its own).
    """
    buffer = ctypes.create_string_buffer(os.fsencode(name)[:15])
    _libc().prctl(PR_SET_NAME, buffer, 0, 0, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_bounding_set() -> None:
    """Drop every capability from the bounding set (needs CAP_SETPCAP; nothing can be gained back afterwards)."""
    for cap in range(LAST_CAPABILITY + 1):
        if _libc().prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            _check(-1, f"dropping capability {cap} from the bounding set")


def clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets (and with them the ambient set)."""
    data = (_CapData * 2)()
    _check(_libc().capset(ctypes.byref(_CapHeader(CAPABILITY_VERSION_3, 0)), data), "capset")


def capabilities() -> dict[str, int]:
    """This process's capability sets as ``/proc/self/status`` shows them (``{"CapEff": 0, ...}``)."""
    found = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name.startswith("Cap"):
                found[name] = int(value.strip(), 16)
    return found


def write_id_maps(uid: int, gid: int) -> None:
    """Map ``uid``/``gid`` to themselves in the user namespace this process just created."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1\n"), ("gid_map", f"{gid} {gid} 1\n")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as file:
            file.write(text)


def tasks_of(uid: int) -> int:
    """The processes and threads whose real uid is ``uid`` (what ``RLIMIT_NPROC`` counts), from ``/proc``."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue  # ended meanwhile
    return count
