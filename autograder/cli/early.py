"""Start what ``attnlab grade`` will wait for before the grader's own imports: the sandbox's fork servers.

The grader imports the engine, pytest and numpy (about 0.5 s) before :func:`autograder.grading.engine.grade` starts the
fork servers (a bubblewrap, a Python and numpy: 0.9 s; with torch 3 s); a one-step grade then waits for them.
Started here instead, from the command line's step list alone, they load while the grader imports. A guess that
turns out wrong costs only time: the engine starts whatever server its submission needs (a numpy step whose
module uses torch gets the torch one), and the servers that are not used end with the grader. The servers see
no submission: each child they fork is confined and gets its own copy later, as before.

The checks' own torch (:mod:`autograder.judge.oracle`) runs in a child of the torch fork server in the namespaces layer,
so a step whose checks use torch starts that server here even when its children need none (``gradients``).
Elsewhere, for one or a few steps that do not measure time and whose checks use torch, the grader's torch is
imported here, on a thread: the grader's checks wait for it. Never where a timing lane may be forked (a fork needs
a process without threads, :mod:`autograder.grading.lanes`).

The steps whose modules are the released stubs (:mod:`autograder.handin.pristine`, read from the hand-in the command
names, without following a link) need no server: the engine reports them without running their checks, so a
folder of untouched stubs starts nothing here (the engine decides again on its own copy of the hand-in).
"""

from __future__ import annotations

import argparse
import importlib
import threading
from collections.abc import Sequence
from pathlib import Path

from autograder.base import tasks
from autograder.handin import pristine
from autograder.judge import oracle

ENV_SWITCH = "ATTNLAB_EARLY"  # "0": start nothing before the engine does
# Where the lab folder is when none is given, from the current folder: the lab folder itself, the student bundle
# or an nbgrader release's parent (lab07_attention/), the instructor kit (assignments/lab07_attention/).
DEFAULT_FOLDERS = (Path("."), Path(tasks.LAB), Path("assignments") / tasks.LAB)
# The options of ``attnlab grade`` that take a value (a test keeps them equal to the command's parser).
VALUE_OPTIONS = (
    "--json", "--hidden", "--reference", "--secret-file", "--student", "--seed", "--timeout", "--isolation", "--lang",
    "--html",
)  # fmt: skip


def default_folder(cwd: Path) -> Path:
    """The first of :data:`DEFAULT_FOLDERS` under ``cwd`` that holds a lab module (else the current folder)."""
    return next((folder for folder in DEFAULT_FOLDERS if tasks.modules_present(cwd / folder)), Path("."))


def _steps(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The ``--step`` values of a ``grade`` command line (None: every step), or () where nothing should start."""
    if not argv or argv[0] != "grade" or {"-h", "--help"} & set(argv):
        return ()
    known = _parse(argv)
    if known.step is None:
        return None
    steps = tuple(step for step in known.step if step in tasks.BY_ID)
    return steps if len(steps) == len(known.step) else ()  # an unknown step: the parser refuses it later


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (a ``grade`` command line) parsed for its ``--step`` values and its folder."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--step", action="append")
    for option in VALUE_OPTIONS:
        parser.add_argument(option)
    parser.add_argument("folder", nargs="?")
    return parser.parse_known_args(list(argv[1:]))[0]


def _folder(argv: Sequence[str]) -> Path:
    """The submission folder a ``grade`` command line names (as the command finds it when none is given)."""
    folder = _parse(argv).folder
    return Path(folder) if folder else default_folder(Path.cwd())


def start(argv: Sequence[str]) -> None:
    """Start the fork servers (and, for a few torch steps, the grader's torch) that ``argv`` will need."""
    import os

    if os.environ.get(ENV_SWITCH, "1") == "0":
        return
    steps = _steps(argv)
    if steps == ():
        return
    wanted = steps or tuple(tasks.BY_ID)
    skipped = set(pristine.untouched(_folder(argv), wanted))
    selected = [tasks.step(step) for step in wanted if step not in skipped]
    if not selected:  # untouched stubs only: nothing will run
        return
    from autograder.sandbox import isolation, zygote  # as client.prestart, without its numpy import (0.2 s)

    child_torch = [step.child_uses_torch for step in selected]
    checks_torch = any(step.grader_uses_torch for step in selected)
    try:
        level = isolation.choose()
        if not all(child_torch):
            zygote.shared(level, torch=False)
        if any(child_torch) or (checks_torch and oracle.boxed(level)):
            zygote.shared(level, torch=True)
    except Exception:  # a guess only: the engine chooses the layer, starts its servers and reports for itself
        return
    single = steps is not None and not any(step.measures_time for step in selected)
    if single and checks_torch and not oracle.boxed(level):
        threading.Thread(target=_import_torch, name="attnlab-torch-preload", daemon=True).start()


def _import_torch() -> None:
    """As :func:`autograder.grading.engine._import_torch`: torch on one thread for the grader's small arrays."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return
    torch.set_num_threads(1)
