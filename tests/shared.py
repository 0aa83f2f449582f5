"""Session fixtures built once per test run, also when pytest-xdist runs the tests in several workers.

Each xdist worker is its own pytest session, so a session fixture would be built once per worker: the
reference graded twice, the student bundle written twice. :func:`once` builds the value in the first worker
that asks, under a file lock in the run's own temporary folder (shared by its workers, new for every run),
and writes it down; the other workers wait on the lock and read it back. Without xdist it just builds.

Written by hand (``fcntl.flock``, the standard library): the pattern pytest-xdist's documentation gives, without
adding the ``filelock`` package for ten lines.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def _run_folder(factory: pytest.TempPathFactory) -> Path | None:
    """The folder every worker of this xdist run shares (its workers' base folders' parent), or None: no xdist."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    folder = factory.getbasetemp().parent / "shared"
    folder.mkdir(exist_ok=True)
    return folder


def once(
    factory: pytest.TempPathFactory,
    name: str,
    make: Callable[[Path], T],
    dump: Callable[[T], str],
    load: Callable[[str], T],
) -> T:
    """The value ``make(folder)`` builds in a new empty ``folder``, built once per run: ``dump`` writes it as text
    for the other workers, ``load`` reads it back. A build that raises writes nothing (the next worker tries)."""
    shared = _run_folder(factory)
    if shared is None:
        return make(factory.mktemp(name))
    done = shared / f"{name}.txt"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if done.exists():
            return load(done.read_text(encoding="utf-8"))
        folder = shared / name
        shutil.rmtree(folder, ignore_errors=True)  # left by a build that raised
        folder.mkdir()
        value = make(folder)
        partial = done.with_suffix(".partial")
        partial.write_text(dump(value), encoding="utf-8")
        partial.rename(done)
        return value
