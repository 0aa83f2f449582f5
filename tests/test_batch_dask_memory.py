"""A Dask batch forgets each student's future once its result is read, so the scheduler frees that result on its
worker (a coordinator that kept every future to the end left each worker holding every result it computed), and its
wait for the next result leaves nothing behind (polling ``distributed.wait`` left a coroutine per pending future
each time: the coordinator grew with the class size times the batch's length).

The first test replaces ``distributed`` by a stand-in (it follows the futures' lifetimes, not a cluster's); the last
runs a small in-process cluster."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import types
import weakref
from pathlib import Path
from typing import Any

import pytest

from autograder.deliver.batch import cluster
from autograder.deliver.batch.job import Job
from autograder.deliver.batch.records import Result


class _Future:
    def __init__(self, job: Job) -> None:
        self.job = job

    def result(self) -> Result:
        return Result(self.job.student, self.job.digest)


class _Client:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass

    def submit(self, _function: Any, job: Job, **_kwargs: Any) -> _Future:
        return _Future(job)

    def cancel(self, _futures: Any) -> None:
        pass

    def run(self, _function: Any) -> None:
        pass


class _AsCompleted:
    """One future done at a time, the student with the smallest number first."""

    def __init__(self, futures: list[_Future]) -> None:
        self.left = list(futures)

    def next_batch(self, block: bool = True) -> list[_Future]:
        if not self.left:
            return []
        first = min(self.left, key=lambda future: future.job.student)
        self.left.remove(first)
        return [first]


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("distributed")
    module.Client, module.as_completed = _Client, _AsCompleted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "distributed", module)


def test_each_future_is_forgotten_once_its_result_is_read(stand_in: None, tmp_path: Path) -> None:
    jobs = [Job(f"s{n:03d}", tmp_path, f"{n:032x}", None, None, None) for n in range(6)]
    created: list[weakref.ref] = []
    submit = _Client.submit

    def tracked(self: _Client, function: Any, job: Job, **kwargs: Any) -> _Future:
        future = submit(self, function, job, **kwargs)
        created.append(weakref.ref(future))
        return future

    _Client.submit = tracked  # type: ignore[method-assign]
    try:
        results = cluster.execute(jobs, "tcp://127.0.0.1:1")
        for number in range(len(jobs)):
            assert next(results).student == f"s{number:03d}"
            gc.collect()
            alive = {ref().job.student for ref in created if ref() is not None}
            read_before = {f"s{earlier:03d}" for earlier in range(number)}  # the one just read may still be held
            assert not alive & read_before, sorted(alive)
        assert list(results) == []
    finally:
        _Client.submit = submit  # type: ignore[method-assign]


def _slow_grade(job: Job) -> Result:
    """A stand-in for a student's grading on a worker: a few milliseconds."""
    time.sleep(0.01)
    return Result(job.student, job.digest)


def _tasks() -> int:
    gc.collect()
    return sum(isinstance(item, asyncio.Task) for item in gc.get_objects())


def test_waiting_for_results_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a batch of 120 runs, polled every 5 ms, the coordinator's asyncio tasks stay few (the old wait left one
    per pending future at every poll: thousands by the middle of this batch, hundreds of MB at 300 students)."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(cluster, "POLL_S", 0.005)
    monkeypatch.setattr(cluster, "grade_on_worker", _slow_grade)
    jobs = [Job(f"s{n:03d}", tmp_path, f"{n:032x}", None, None, None) for n in range(120)]
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as dask:  # fmt: skip
        before = _tasks()
        counts, read = [], []
        for number, result in enumerate(cluster.execute(jobs, dask.scheduler_address)):
            read.append(result.student)
            if number in (30, 60, 90):
                counts.append(_tasks() - before)
    assert sorted(read) == [job.student for job in jobs]
    # what stays: one tracker per future still pending, and the in-process cluster's own tasks
    assert max(counts) < 3 * len(jobs), counts
