"""The CPU time of a sandbox child's processes, read from the kernel's accounting by its keeper.

Student code can change every clock of its own process (rebind ``time.thread_time``, or write memory through
ctypes), so the grader's timing harness never asks the child how long a call took: it asks the keeper
(:mod:`autograder.sandbox.keeper`), which runs no student code, for the CPU nanoseconds of every process of the
child so far, before and after a timed request. The keeper reads them here:

- each process's own CPU time from its *process CPU clock*: all its threads, live and ended, in nanoseconds.
  The clock id is the one the kernel's ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`` makes, ``(~pid << 3) | 2``,
  which is exactly what glibc's ``clock_getcpuclockid(pid)`` returns; it is computed here so that the keeper
  makes no foreign call (``tests/test_sandbox_cpu.py`` checks it against libc). The kernel lets any process
  read the clock of a process it can see (the keeper sees every process of its child);
- the processes it started and reaped (``cutime`` + ``cstime`` of ``/proc/<pid>/stat``), in the kernel's clock
  ticks (``SC_CLK_TCK``, 10 ms): coarse, so work moved into short-lived processes is counted to within a tick
  per reading. The audit hook refuses every way to start a process in every layer; this counts them where the
  hook was got round;
- every process below the keeper, found through ``/proc/<pid>/task/<tid>/children`` (a scan of ``/proc`` where
  the kernel lacks that file): orphans are the keeper's own children (it is a subreaper, or PID 1 of the
  child's namespace), so a process that left its parent is still counted.

Linux only; elsewhere :func:`tree_ns` gives None (the harness then counts the grader's own wall clock).
"""

from __future__ import annotations

import os
import sys
import time

CPUCLOCK_SCHED = 2  # the kernel's per-process clock of scheduled run time
MAX_PROCESSES = 4096  # more processes than this in one child: the count is given up (None)


def process_clock(pid: int) -> int:
    """The clock id of process ``pid``'s CPU clock (``clock_getcpuclockid(pid)`` on Linux)."""
    return (~pid << 3) | CPUCLOCK_SCHED


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's closing parenthesis (the state is field 0)."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
        return file.read().rpartition(")")[2].split()


def _own_ns(pid: int, fields: list[str]) -> int:
    """Process ``pid``'s CPU nanoseconds, all threads: its CPU clock, or (a zombie) its ticks of utime + stime."""
    try:
        return time.clock_gettime_ns(process_clock(pid))
    except OSError:
        return _ticks_ns(int(fields[11]) + int(fields[12]))


def _ticks_ns(ticks: int) -> int:
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int] | None:
    """``pid``'s children from ``/proc/<pid>/task/*/children``; None where the kernel does not list them."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as file:
                found += [int(child) for child in file.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{task}"):
                continue  # the thread ended meanwhile
            return None
        except (OSError, ValueError):
            continue
    return found


def _by_scan(root: int) -> list[int]:
    """Every process below ``root``, from the parent ids of all of ``/proc``."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parents.setdefault(int(_stat_fields(int(name))[1]), []).append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    found, pending = [], [root]
    while pending:
        children = parents.get(pending.pop(), [])
        found += children
        pending += children
    return found


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (children, theirs, ...), at the moment of reading."""
    found: list[int] = []
    pending = [root]
    while pending and len(found) <= MAX_PROCESSES:
        children = _children(pending.pop())
        if children is None:
            return _by_scan(root)
        found += children
        pending += children
    return found


def tree_ns(root: int | None = None) -> int | None:
    """The CPU nanoseconds of every process below ``root`` (default: this process), each with the processes
    it reaped; None off Linux, or when the tree cannot be read.

    Processes that end while this reads may be counted once, twice (as themselves, then in their parent's
    reaped time) or not at all; the grader takes the smaller of this and its own wall clock.
    """
    if not sys.platform.startswith("linux"):
        return None
    root = os.getpid() if root is None else root
    try:
        pids = descendants(root)
    except OSError:
        return None
    if len(pids) > MAX_PROCESSES:
        return None
    total = 0
    for pid in pids:
        try:
            fields = _stat_fields(pid)
            total += _own_ns(pid, fields) + _ticks_ns(int(fields[13]) + int(fields[14]))
        except (OSError, ValueError, IndexError):
            continue  # ended and reaped meanwhile: counted in its parent's reaped time from now on
    return total
