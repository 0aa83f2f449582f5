"""Grading in two lanes: the steps that time student code in a forked grader on a CPU of their own.

A whole-lab grade spends seconds in the timing step's sandbox measuring the
student's kernels, while the other core waits. With two or more CPUs, the
engine forks a copy of itself (before any thread starts) that grades the
steps which measure time (:attr:`autograder.base.tasks.Step.measures_time`), with
its sandbox children pinned to one *reserved* CPU, while this process grades
every other step with itself and its children kept off that CPU
(``sched_setaffinity``); once the timing lane has ended, this process and its
later children may use every CPU again. So no child of the grader competes
with a measurement for its core, and the measurement overlaps the rest.

The lane is a fork of the grader: it is trusted, runs no student code itself
(its children are sandboxed like every other), shares the sandbox's fork
servers through its own channels, and sends back its steps' results as the
report's lossless JSON (:mod:`autograder.grading.serialize`). A lane that ends
without a report is not fatal: the engine grades its steps in this process.

Lanes are off with ``ATTNLAB_LANES=0``, on a single CPU, where ``fork`` or CPU
affinity is missing, when this process already runs threads, and in the warm
grading server (several students at once would share the one reserved CPU).

Written by hand: ``concurrent.futures``/``multiprocessing`` workers pickle
their results, start their own helper threads and cannot be pinned before
the first instruction of the job.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from autograder.base import tasks

ENV_SWITCH = "ATTNLAB_LANES"  # "0": grade every step in this process, one after the other


@dataclass(frozen=True)
class Plan:
    """Which steps each lane grades and on which CPUs."""

    main: tuple[str, ...]  # graded here, off the reserved CPU while the timing lane runs
    timed: tuple[str, ...]  # graded in the forked lane, its children on the reserved CPU
    reserved: tuple[int, ...]
    others: tuple[int, ...]


def enabled() -> bool:
    return (
        os.environ.get(ENV_SWITCH, "1") != "0"
        and hasattr(os, "fork")
        and hasattr(os, "sched_getaffinity")
        and hasattr(os, "sched_setaffinity")
    )


def plan(selected: Sequence[str]) -> Plan | None:
    """The two lanes for the ``selected`` steps, or None: grade them all here, in order."""
    timed = tuple(s for s in selected if tasks.step(s).measures_time)
    main = tuple(s for s in selected if s not in timed)
    if not (enabled() and timed and main) or threading.active_count() > 1:
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return Plan(main=main, timed=timed, reserved=(cpus[-1],), others=tuple(cpus[:-1]))


def _threads() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return [0]  # this thread only


def pin(cpus: Sequence[int]) -> None:
    """Keep every thread of this process on ``cpus`` (threads started later inherit it from their starter)."""
    for thread in _threads():
        try:
            os.sched_setaffinity(thread, cpus)
        except OSError:
            pass  # a thread that has just ended


class Lane:
    """A forked grader running ``job`` (its result as text) with its own CPU; :meth:`result` waits for it."""

    def __init__(self, job: Callable[[], str], cpus: Sequence[int], on_end: Callable[[], None]) -> None:
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the lane: never returns
            os.close(read)
            _run_lane(job, cpus, write)
        os.close(write)
        self._read, self._text, self._status = read, b"", None
        self._on_end = on_end
        self._reader = threading.Thread(target=self._collect, name="attnlab-lane", daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(self._read)
            self._text = b"".join(chunks)
            self._status = os.waitpid(self.pid, 0)[1]
            self._on_end()

    @property
    def running(self) -> bool:
        return self._reader.is_alive()

    def result(self) -> tuple[str | None, str]:
        """``(text, problem)``: the job's text, or None and why there is none."""
        self._reader.join()
        kind, _, body = self._text.decode("utf-8", errors="replace").partition("\n")
        if kind == "ok":
            return body, ""
        if kind == "error":
            return None, body
        return None, f"the timing lane ended without a report (wait status {self._status})"


def _run_lane(job: Callable[[], str], cpus: Sequence[int], write: int) -> None:
    code = 0
    try:
        pin(cpus)
        try:
            message = "ok\n" + job()
        except BaseException as error:  # the engine decides what a lane's failure means
            message = f"error\n{type(error).__name__}: {error}\n{traceback.format_exc()[-2000:]}"
            code = 1
        data = message.encode("utf-8")
        while data:
            data = data[os.write(write, data) :]
    finally:
        os._exit(code)  # a fork of the grader: no atexit handler (the fork servers belong to the parent)


@contextmanager
def overlapping(lane_plan: Plan, job: Callable[[], str]) -> Iterator[Lane]:
    """Run ``job`` in the timing lane while the block grades the main lane here, off the reserved CPU."""
    everything = tuple(sorted(os.sched_getaffinity(0)))
    lane = Lane(job, lane_plan.reserved, on_end=lambda: pin(everything))
    pin(lane_plan.others)
    try:
        yield lane
    finally:
        lane.result()
        pin(everything)
