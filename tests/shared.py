"""Session fixtures built once per test run, also when pytest-xdist runs the tests in several workers.

Each xdist worker is its own pytest session, so a session fixture would be built once per worker: the
reference graded twice, the student bundle written twice. :func:`once` builds the value in the first worker
that asks, under a file lock in the run's own temporary folder (shared by its workers, new for every run),
and writes it down; the other workers wait on the lock and read it back. Without xdist it just builds.

A value is built with the kit's grading variables at their defaults (:func:`default_grading`): every worker reads
it, so it must not depend on what a test of the worker that built it had set at that moment (under
``ATTNLAB_SKIP_UNTOUCHED=0`` the stubs' checks run, and the stubs' report is another).

Written by hand (``fcntl.flock``, the standard library): the pattern pytest-xdist's documentation gives, without
adding the ``filelock`` package for ten lines.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from autograder import i18n
from autograder.cli import early
from autograder.grading import lanes
from autograder.handin import pristine
from autograder.sandbox import isolation, probecache, zygote

T = TypeVar("T")
# The kit's variables that change what a grade holds or how it is made; unset, each has its default.
GRADING_VARIABLES = (
    pristine.ENV_SWITCH, lanes.ENV_SWITCH, early.ENV_SWITCH, probecache.ENV_SWITCH, zygote.ENV_SWITCH,
    isolation.ENV_LEVEL, i18n.ENV_LANG,
)  # fmt: skip


@contextmanager
def default_grading() -> Iterator[None]:
    """The kit's grading variables unset (their defaults) and English active for a ``with`` block; each variable
    and the language are back as they were afterwards, whatever the block set."""
    saved = {name: os.environ.pop(name, None) for name in GRADING_VARIABLES}
    try:
        with i18n.using(i18n.SOURCE):
            yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


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
    """The value ``make(folder)`` builds in a new empty ``folder`` under :func:`default_grading`, built once per
    run: ``dump`` writes it as text for the other workers, ``load`` reads it back. A build that raises writes
    nothing (the next worker tries)."""
    shared = _run_folder(factory)
    if shared is None:
        with default_grading():
            return make(factory.mktemp(name))
    done = shared / f"{name}.txt"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if done.exists():
            return load(done.read_text(encoding="utf-8"))
        folder = shared / name
        shutil.rmtree(folder, ignore_errors=True)  # left by a build that raised
        folder.mkdir()
        with default_grading():
            value = make(folder)
        partial = done.with_suffix(".partial")
        partial.write_text(dump(value), encoding="utf-8")
        partial.rename(done)
        return value
