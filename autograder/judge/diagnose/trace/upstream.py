"""Upstream first: a lab function of an earlier step that is itself wrong, seen inside a later step's call.

The student's trace records each call the checked function makes into the lab's own functions, with its inputs
and what it returned. The grader asks the trusted side what the reference's function returns for exactly those
inputs (:func:`wrong_callees`); a callee of another module whose answer differs is wrong on its own, whatever the
calling code does. Whether the calling code is right too is then tested the way the issue asks: the student's
function runs again in the sandbox with each wrong callee's call answered by the reference's value for its inputs
(a *stand-in*, :mod:`autograder.sandbox.probes.trace.patching`), and its answer is compared with the reference's.

Only values cross: the stand-ins are the reference's answers for inputs the student's own code chose, sent only
after the check already failed, to a sandbox child used for nothing else (see :mod:`.explain`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.base import tasks
from autograder.judge.diagnose.trace import match
from autograder.judge.diagnose.trace.model import Event, Trace
from autograder.sandbox.protocol import AsTorch

LAB_MODULES = frozenset(tasks.MODULES)
MAX_CALLS = 48  # callee calls asked about in one request
MAX_ROUNDS = 3  # stand-in rounds: a corrected callee may be called with inputs not yet answered


@dataclass(frozen=True)
class Callee:
    """One call of a lab function of another module, and what the reference returns for its inputs."""

    event: Event
    function: str  # "softmax.softmax"
    args: tuple  # its inputs, as the grader sends them (arrays, numbers; tensors as AsTorch)
    kwargs: dict
    reference: Any  # the reference's answer for them
    shape: tuple[int, ...] | None  # the student's answer's shape, when it differs from the reference's
    dtype: str | None  # the student's answer's dtype, when it differs in precision from the reference's

    @property
    def module(self) -> str:
        return self.function.partition(".")[0]

    @property
    def name(self) -> str:
        return self.function.partition(".")[2]

    @property
    def step(self) -> tasks.Step | None:
        return next((s for s in tasks.STEPS if s.module == self.module), None)


def _argument(trace: Trace, tree: Any) -> tuple[bool, Any]:
    """An encoded argument as a value to send (ok False for one that cannot be sent: an object, a callable)."""
    if isinstance(tree, dict) and set(tree) == {"n"}:
        node = trace.nodes[tree["n"]]
        if node.value is None:
            return False, None
        dtype = node.dtype.removeprefix("torch.")
        value = node.value.astype(dtype) if dtype in ("float32", "float64", "float16", "int64", "bool") else node.value
        return True, AsTorch(value) if node.dtype.startswith("torch.") else value
    if isinstance(tree, dict):
        if set(tree) in ({"l"}, {"t"}):
            items = [_argument(trace, v) for v in next(iter(tree.values()))]
            if not all(ok for ok, _ in items):
                return False, None
            values = [v for _, v in items]
            return True, tuple(values) if "t" in tree else values
        if set(tree) == {"d"} and isinstance(tree["d"], dict):
            entries = {k: _argument(trace, v) for k, v in tree["d"].items()}
            if not all(ok for ok, _ in entries.values()):
                return False, None
            return True, {k: v for k, (_, v) in entries.items()}
        if set(tree) == {"f"}:
            return True, float(tree["f"])
        return False, None
    return True, tree


def _returned(trace: Trace, tree: Any) -> Any:
    """A lab call's encoded result as values (node values for nodes)."""
    if isinstance(tree, dict) and set(tree) == {"n"}:
        return trace.nodes[tree["n"]]
    if isinstance(tree, dict) and set(tree) in ({"l"}, {"t"}):
        return [_returned(trace, v) for v in next(iter(tree.values()))]
    return tree


def _differs(student: Any, reference: Any) -> tuple[bool, tuple[int, ...] | None, str | None]:
    """Whether a callee's answer differs from the reference's: ``(differs, student shape, student dtype)``."""
    if isinstance(student, list):
        parts = reference if isinstance(reference, (list, tuple)) else None
        if parts is None or len(parts) != len(student):
            return True, None, None
        for mine, theirs in zip(student, parts):
            found = _differs(mine, theirs)
            if found[0]:
                return found
        return False, None, None
    if hasattr(student, "shape") and hasattr(student, "value"):  # a node
        theirs = np.asarray(reference) if reference is not None else None
        if theirs is None or theirs.dtype.kind not in "biuf":
            return False, None, None
        if tuple(student.shape) != theirs.shape:
            return True, tuple(student.shape), None
        if student.value is not None and not match.close(student.value, theirs):
            return True, None, None
        mine = student.dtype.removeprefix("torch.")
        if theirs.dtype.kind == "f" and mine in ("float32", "float64") and mine != str(theirs.dtype):
            return True, None, mine
        return False, None, None
    return False, None, None


def calls_into_other_modules(trace: Trace, own: str) -> list[tuple[Event, str, tuple, dict]]:
    """The student's calls of module-level lab functions of other modules, with inputs that can be sent.

    The calls the check makes itself (depth 0: the function checked, or those a probe exercises) are never one:
    they are what the step checks, not an earlier step's function used inside it.
    """
    found, seen = [], set()
    for event in trace.events:
        module, _dot, name = event.op.partition(".")
        if not event.lab or module == own or module not in LAB_MODULES or "." in name or name.startswith("_"):
            continue
        if event.depth == 0:
            continue
        args = [_argument(trace, a) for a in event.args]
        kwargs = {k: _argument(trace, v) for k, v in event.kwargs.items()}
        if not all(ok for ok, _ in [*args, *kwargs.values()]):
            continue
        key = (event.op, repr(event.args), repr(event.kwargs))
        if key in seen:
            continue
        seen.add(key)
        found.append((event, event.op, tuple(v for _, v in args), {k: v for k, (_, v) in kwargs.items()}))
    return found[:MAX_CALLS]


Calls = Callable[[Sequence[tuple[str, tuple, dict]]], list]


def wrong_callees(trace: Trace, own: str, ask: Calls, dtypes: bool = False) -> list[Callee]:
    """The calls of other modules' lab functions whose answer differs from the reference's for the same inputs.

    ``ask`` runs the reference's functions on the trusted side (``[(qualified name, args)]`` in, replies out);
    ``dtypes``: also count an answer of another float precision as different (a later operation raised).
    """
    calls = calls_into_other_modules(trace, own)
    if not calls:
        return []
    replies = ask([(function, args, kwargs) for _, function, args, kwargs in calls])
    wrong = []
    for (event, function, args, kwargs), reply in zip(calls, replies):
        if not isinstance(reply, dict) or not reply.get("ok"):
            continue
        differs, shape, dtype = _differs(_returned(trace, event.result), reply.get("value"))
        if differs and (dtype is None or dtypes):
            wrong.append(Callee(event, function, args, kwargs, reply.get("value"), shape, dtype))
    return wrong


def culprits(wrong: list[Callee], trace: Trace) -> list[Callee]:
    """The wrong callees no other wrong callee runs inside (the ones to fix first), in the order they ran."""
    inside = set()
    indices = {c.event.index for c in wrong}
    for callee in wrong:
        parent = callee.event.parent
        while parent >= 0:
            if parent in indices:
                inside.add(parent)
            parent = trace.events[parent].parent
    return [c for c in wrong if c.event.index not in inside]


def stand_ins(wrong: list[Callee]) -> list[dict]:
    """The stand-ins that answer each wrong callee's call with the reference's value."""
    return [
        {"function": c.function, "args": [plain(a) for a in (*c.args, *c.kwargs.values())], "result": c.reference}
        for c in wrong
    ]


def plain(value: Any) -> Any:
    """A value as sent to the student's side: tensors as their arrays (the stand-ins make them tensors again)."""
    if isinstance(value, AsTorch):
        return value.array
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


def answered(trace: Trace, ask: Calls) -> list[dict]:
    """Stand-ins for the calls a stand-in run met and could not answer (their inputs were new), where possible."""
    pending = []
    for entry in trace.unanswered[:MAX_CALLS]:
        if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
            continue
        values = [_argument(trace, a) for a in entry["args"]]
        if all(ok for ok, _ in values):
            pending.append((str(entry.get("function", "")), tuple(v for _, v in values), {}))
    replies = ask(pending) if pending else []
    return [
        {"function": function, "args": [plain(a) for a in args], "result": reply.get("value")}
        for (function, args, _kw), reply in zip(pending, replies)
        if isinstance(reply, dict) and reply.get("ok")
    ]
