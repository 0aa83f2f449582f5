"""Start what ``attnlab grade`` will wait for before the grader's own imports: the sandbox's fork servers.

The grader imports the engine, pytest and numpy (about 0.5 s) before :func:`autograder.engine.grade` starts the
fork servers (a bubblewrap, a Python and numpy: 0.9 s; with torch 3 s); a one-step grade then waits for them.
Started here instead, from the command line's step list alone, they load while the grader imports. A guess that
turns out wrong costs only time: the engine starts whatever server its submission needs (a numpy step whose
module uses torch gets the torch one), and the servers that are not used end with the grader. The servers see
no submission: each child they fork is confined and gets its own copy later, as before.

For one or a few steps that do not measure time and whose checks use torch in the grader (``kv_cache``), torch is
imported here too, on a thread: the grader's checks wait for it. Never where a timing lane may be forked (a fork
needs a process without threads, :mod:`autograder.lanes`).
"""

from __future__ import annotations

import argparse
import importlib
import threading
from collections.abc import Sequence

from autograder import tasks

ENV_SWITCH = "ATTNLAB_EARLY"  # "0": start nothing before the engine does


def _steps(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The ``--step`` values of a ``grade`` command line (None: every step), or () where nothing should start."""
    if not argv or argv[0] != "grade" or {"-h", "--help"} & set(argv):
        return ()
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--step", action="append")
    known, _ = parser.parse_known_args(list(argv[1:]))
    if known.step is None:
        return None
    steps = tuple(step for step in known.step if step in tasks.BY_ID)
    return steps if len(steps) == len(known.step) else ()  # an unknown step: the parser refuses it later


def start(argv: Sequence[str]) -> None:
    """Start the fork servers (and, for a few torch steps, the grader's torch) that ``argv`` will need."""
    import os

    if os.environ.get(ENV_SWITCH, "1") == "0":
        return
    steps = _steps(argv)
    if steps == ():
        return
    from autograder.sandbox import isolation, zygote  # as client.prestart, without its numpy import (0.2 s)

    selected = [tasks.step(step) for step in (steps or tasks.BY_ID)]
    child_torch = [step.child_uses_torch for step in selected]
    try:
        level = isolation.choose()
        if not all(child_torch):
            zygote.shared(level, torch=False)
        if any(child_torch):
            zygote.shared(level, torch=True)
    except Exception:  # a guess only: the engine chooses the layer, starts its servers and reports for itself
        return
    single = steps is not None and not any(step.measures_time for step in selected)
    if single and any(step.grader_uses_torch for step in selected):
        threading.Thread(target=_import_torch, name="attnlab-torch-preload", daemon=True).start()


def _import_torch() -> None:
    """As :func:`autograder.engine._import_torch`: torch on one thread for the grader's small arrays."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return
    torch.set_num_threads(1)
