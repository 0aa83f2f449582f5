"""A Dask batch forgets each student's future once its result is read, so the scheduler frees that result on its
worker (a coordinator that kept every future to the end left each worker holding every result it computed).

``distributed`` is replaced by a stand-in here: the test follows the futures' lifetimes, not a cluster's."""

from __future__ import annotations

import gc
import sys
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


def _wait(pending: set[_Future], **_kwargs: Any) -> tuple[set[_Future], set[_Future]]:
    """One future done at a time, the student with the smallest number first."""
    first = min(pending, key=lambda future: future.job.student)
    return {first}, pending - {first}


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("distributed")
    module.Client, module.wait = _Client, _wait  # type: ignore[attr-defined]
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
