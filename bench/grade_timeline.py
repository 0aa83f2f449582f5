"""Profile: the timeline of one `attnlab grade`: when each fork server starts, when each sandbox child is forked
(and from which server), and when the timing lane measures; what a whole-lab grade's wall time waits for.

Runs ``attnlab grade FOLDER`` in this process with a few of the kit's functions wrapped to print a timestamp
(seconds since this script started) and the process id (the timing lane is a forked copy of the grader). Not a
test: the times are this machine's, under its load. Written by hand: a sampling profiler shows where CPU goes,
not which process waits for which.

    python bench/grade_timeline.py [FOLDER] [attnlab grade options...]
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.base import threads  # noqa: E402

threads.one_thread()  # as `attnlab grade` does, before NumPy loads (autograder.base.threads)

from autograder.judge.timing import verified  # noqa: E402
from autograder.sandbox import zygote  # noqa: E402


def mark(what: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.3f} s] pid {os.getpid()}: {what}", file=sys.__stderr__, flush=True)


def wrapped(function: Callable[..., Any], before: Callable[..., str] | None, after: Callable[..., str] | None) -> Any:
    """``function``, marking ``before(*args)`` when it is called and ``after(*args)`` when it has returned."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        if before:
            mark(before(*args, **kwargs))
        value = function(*args, **kwargs)
        if after:
            mark(after(*args, **kwargs))
        return value

    return call


def main() -> None:
    zygote.Zygote.__init__ = wrapped(
        zygote.Zygote.__init__,
        lambda _self, _level, preload=zygote.PRELOAD + zygote.PRELOAD_TORCH, *_a, **_k: (
            f"fork server starts ({', '.join(preload)})"
        ),
        None,
    )
    zygote.Zygote.spawn = wrapped(  # the first fork waits until the server has imported what it preloads
        zygote.Zygote.spawn,
        None,
        lambda self, spec, _fds: (
            f"child {spec['limits'].get('label')} forked ({'torch' if 'torch' in self.preload else 'numpy'} server)"
        ),
    )
    verified.measure = wrapped(
        verified.measure, lambda *_a, **_k: "timing measurement starts", lambda *_a, **_k: "timing measurement ends"
    )
    folder = sys.argv[1:] or [str(ROOT / "solutions" / "lab07_attention")]
    sys.argv = ["attnlab", "grade", *folder, "--quiet"]
    from autograder.cli import main as attnlab

    mark("grade starts")
    try:
        attnlab()
    finally:
        mark("grade ends")


if __name__ == "__main__":
    main()
