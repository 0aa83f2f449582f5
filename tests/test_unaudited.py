"""The functions that start processes without an audit event: where a fork server finds them, and what each
child replaces (autograder.sandbox.unaudited). Every check runs in a forked copy of this process, which it
changes for good."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Callable

from autograder.sandbox import unaudited


def _in_a_fork(check: Callable[[], dict]) -> dict:
    """``check()``'s answer, computed in a forked copy of this process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            answer = json.dumps(check())
        except BaseException as error:  # the parent's assertion shows it
            answer = json.dumps({"error": f"{type(error).__name__}: {error}"})
        os.write(write, answer.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        text = source.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def _originals() -> dict[int, object]:
    """The functions themselves (``id`` -> function), taken before anything replaces them."""
    import _posixsubprocess
    import posix
    import signal

    names = {n for _module, group in unaudited.UNAUDITED for n in group}
    return {id(getattr(m, n)): getattr(m, n) for m in (_posixsubprocess, posix, signal) for n in names if hasattr(m, n)}


def _holding_any(originals: dict[int, object]) -> list[str]:
    """Every module name bound to one of ``originals`` (found by identity, not by ``unaudited``)."""
    left = []
    for module_name, module in list(sys.modules.items()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if id(value) in originals and value is originals[id(value)]:
                left.append(f"{module_name}.{name}")
    return sorted(left)


def _module(name: str, **values: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(values)
    sys.modules[name] = module
    return module


def test_a_prepared_child_replaces_every_reference_the_modules_hold() -> None:
    def check() -> dict:
        import _posixsubprocess
        import posix
        import subprocess  # noqa: F401  (holds its own _fork_exec)

        originals = _originals()

        _module("attnlab_noted_holder", spawn=posix.fork)  # noted by prepare() as holding one
        _module("attnlab_noted_replaced", make=posix.mknod)  # noted, then another module takes its name
        before = _holding_any(originals)
        unaudited.prepare()
        _module("attnlab_loaded_later", start=_posixsubprocess.fork_exec, pipe=posix.mkfifo)  # loaded since
        _module("attnlab_noted_replaced", make=posix.mkfifo)
        unaudited.disarm(PermissionError)
        try:
            os.fork()
            refused = ""
        except PermissionError as error:
            refused = str(error)
        return {"before": before, "left": _holding_any(originals), "refused": refused}

    answer = _in_a_fork(check)
    assert {"attnlab_noted_holder.spawn", "os.fork", "subprocess._fork_exec"} <= set(answer["before"]), answer
    assert answer["left"] == [], answer
    assert answer["refused"] == "the grading sandbox does not allow fork"


def test_without_a_fork_server_a_child_reads_every_module() -> None:
    def check() -> dict:
        import posix

        originals = _originals()
        unaudited._CLEAR = frozenset()  # nothing prepared: a child started directly (ATTNLAB_FORKSERVER=0)
        unaudited._FOUND.clear()
        _module("attnlab_direct_holder", spawn=posix.forkpty)
        unaudited.disarm(PermissionError)
        return {"left": _holding_any(originals)}

    assert _in_a_fork(check) == {"left": []}


def test_a_module_noted_clear_is_not_read_again() -> None:
    """What makes a child cheap: a module that held none when the fork server looked is left untouched (only the
    kit's own code runs between the fork server's look and the child's replacement)."""

    def check() -> dict:
        import posix

        originals = _originals()
        holder = _module("attnlab_clear_then_bound")
        unaudited.prepare()
        holder.fork = posix.fork  # nothing in the kit does this between prepare() and disarm()
        unaudited.disarm(PermissionError)
        return {"left": _holding_any(originals)}

    assert _in_a_fork(check) == {"left": ["attnlab_clear_then_bound.fork"]}
