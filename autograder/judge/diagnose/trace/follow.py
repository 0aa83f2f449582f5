"""Where the student's computation parts from the reference's, proved by replaying the reference with that change.

Both traces are of the same call on the same inputs. The reference's values that the student's trace also holds
(:mod:`.match`) are where the two still agree; the earliest reference value, among those the checked output is
computed from, that the student never held is a *departure*. At a departure the student's trace suggests what was
done instead, and each suggestion is an :class:`Edit` of the reference's run:

- the same operation with the student's parameters (``axis``, ``keepdims``, a constant): ``call``;
- the same operation on another of the reference's values (the student's operand): ``call`` too;
- the operation left out, its operand passed on (``missing``): ``skip``;
- the student's own value put in its place (an operation added, another operation, another dtype): ``inject``.

The trusted side replays the reference with each suggestion (:mod:`autograder.judge.oracle`); the one that carries the
agreement furthest is kept, and the search goes on from there until the replay gives the student's numbers. The
edits found are then proved on the twin input (the student traced again there, the reference replayed with the
same edits) and pared down to those the numbers need. Only a proved explanation is ever put into words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from autograder.judge.diagnose import relations
from autograder.judge.diagnose.trace import match, ops
from autograder.judge.diagnose.trace.model import Event, Trace, nodes_in

MAX_ROUNDS = 4  # departures followed in one explanation
MAX_POINTS = 3  # departures tried per round (the earliest first)
MAX_PROPOSALS = 10  # edits tried per departure
MAX_ALIKE = 24  # departures the same edit is tried at, at once
MAX_JOINS = 8  # later values tried where the two computations may join again, when no departure's edit helps
HALF = ("float16", "bfloat16", "half")  # dtype names (a tensor's with "torch." before them) of half precision


class Trusted(Protocol):
    """The reference's side: replays of one target with a plan each (None where a replay failed)."""

    def replays(self, plans: Sequence[dict]) -> list[Trace | None]: ...


@dataclass(frozen=True)
class Edit:
    """One change to the reference's run, and what it stands for in words."""

    kind: str  # "call", "skip" or "inject"
    event: int  # the reference's event it changes
    node: int  # the reference's node it concerns (inject: the value replaced; skip: the operand passed on)
    label: str  # axis, param, constant, operand, missing, extra, op, dtype
    op: str  # the operation named (the reference's; for extra, the student's added one)
    student: int  # the student's node the edit stands for (its line is shown; an injection's value)
    args: list | None = None
    kwargs: dict | None = None
    detail: dict = field(default_factory=dict, compare=False)  # for the words: what each side does

    @property
    def mistake(self) -> str:
        """``trace.<label>.<op>``; a value computed in half precision is the catalogue's ``half_precision``."""
        return relations.HALF_PRECISION if self.label == "dtype" else f"trace.{self.label}.{self.op}"

    def plan_entry(self, student: Trace) -> dict | None:
        """The edit as the replay probe reads it (an injection takes its value from ``student``, same node id)."""
        if self.kind == "call":
            args, kwargs = _valued(self.args, student), _valued(self.kwargs or {}, student)
            if _unvalued(args) or _unvalued(kwargs):
                return None
            return {"kind": "call", "event": self.event, "args": args, "kwargs": kwargs}
        if self.kind == "skip":
            return {"kind": "skip", "event": self.event, "node": self.node}
        value = student.value(self.student)
        return None if value is None else {"kind": "inject", "node": self.node, "value": value}


def _valued(tree: Any, student: Trace) -> Any:
    """An edit's arguments with each student value (``{"sv": [node, like]}``) taken from ``student``'s run."""
    if isinstance(tree, dict):
        if set(tree) == {"sv"}:
            node, like = tree["sv"]
            value = student.value(node)
            return {"v": [value, like]} if value is not None else {"unvalued": 1}
        return {k: _valued(v, student) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_valued(v, student) for v in tree]
    return tree


def _unvalued(tree: Any) -> bool:
    if isinstance(tree, dict):
        return "unvalued" in tree or any(_unvalued(v) for k, v in tree.items() if k != "v")
    if isinstance(tree, list):
        return any(_unvalued(v) for v in tree)
    return False


def is_half(dtype: str) -> bool:
    return dtype.removeprefix("torch.") in HALF


def part_of(value: Any, path: tuple[int, ...]) -> np.ndarray | None:
    """The part ``path`` of a returned value, as a numeric array (None if there is none)."""
    for index in path:
        if not isinstance(value, (tuple, list)) or not 0 <= index < len(value):
            return None
        value = value[index]
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return None
    return array if array.dtype.kind in "biuf" else None


@dataclass(frozen=True)
class Raised:
    """The goal when the student's call raised: the same exception, with the same message (shapes and all)."""

    type: str
    message: str

    @classmethod
    def of(cls, trace: Trace) -> Raised | None:
        error = trace.error or {}
        kind, message = error.get("type"), error.get("message")
        return cls(kind, message) if isinstance(kind, str) and isinstance(message, str) and message else None


Goal = np.ndarray | Raised  # what a replay must give: the student's value at the path, or the student's error


def goal_of(trace: Trace, path: tuple[int, ...]) -> Goal | None:
    """What the student's run gave: its value at ``path``, or the error it raised."""
    return Raised.of(trace) if trace.error is not None else part_of(trace.returned, path)


def reproduces(trace: Trace | None, path: tuple[int, ...], goal: Goal) -> bool:
    """Whether a run gave ``goal`` (the student's value at ``path``, or the student's error)."""
    if trace is None:
        return False
    if isinstance(goal, Raised):
        return goal == Raised.of(trace)
    if trace.error is not None:
        return False
    got = part_of(trace.returned, path)
    return got is not None and match.close(got, goal)


# -- where the traces part -----------------------------------------------------------------------------------------
def departures(
    reference: Trace, student: match.Index, path: tuple[int, ...], whole: Whole = lambda event: False
) -> tuple[list[int], int]:
    """The reference's nodes where the agreement ends (earliest first), and the first unheld one (len(nodes): none).

    A departure is a value the checked output is computed from that the student never held, made by an operation
    whose node operands the student did hold (or, for a lab call, whose inputs the student held).
    """
    wanted, held = _wanted(reference, student, path)
    agreed = {n for n, found in held.items() if found} | {n for n in wanted if reference.nodes[n].kind == "input"}
    missing = sorted(n for n in wanted if n in held and not held[n] and reference.nodes[n].kind == "op")
    points = []
    for node in missing:
        for event in makers(reference, node, whole):
            if all(n in agreed or reference.nodes[n].kind in ("const", "object") for n in event.operands):
                points.append(node)
                break
    return points, missing[0] if missing else len(reference.nodes)


def unheld(reference: Trace, student: match.Index, path: tuple[int, ...]) -> list[int]:
    """Every value the checked output is computed from that the student never held, earliest first."""
    wanted, held = _wanted(reference, student, path)
    return sorted(n for n in wanted if n in held and not held[n] and reference.nodes[n].kind == "op")


def _wanted(reference: Trace, student: match.Index, path: tuple[int, ...]) -> tuple[set[int], dict[int, list[int]]]:
    """The reference's values the checked output is computed from, up to those the student holds (how the student
    got a value it holds, a callee answered for it, does not matter), and which of them the student holds."""
    outputs = reference.output_nodes(path)
    held = match.matched(reference, student, reference.ancestors(outputs))
    wanted = reference.ancestors(outputs, stop={n for n, found in held.items() if found})
    return wanted, {n: found for n, found in held.items() if n in wanted}


Whole = Callable[[Event], bool]  # which events are a checked function's own call (their whole result: never one)


def whole_calls(module: str) -> Whole:
    """The calls of ``module``'s functions made by the check itself (the call traced, or a probe's own calls): to
    replace one's whole result would explain everything and say nothing."""
    return lambda event: event.lab and event.depth == 0 and event.module == module


def makers(trace: Trace, node: int, whole: Whole = lambda event: False) -> list[Event]:
    """The events that gave ``node`` out: the shallowest (a lab call that returned it) first, then the innermost,
    never one of the ``whole`` calls."""
    givers = sorted((trace.events[i] for i in trace.givers.get(node, ())), key=lambda e: e.depth)
    found = [e for e in (*givers[:1], *[g for g in givers if not whole(g)][:1], trace.made_by(node)) if e is not None]
    found = [e for e in found if not whole(e)]
    return [e for i, e in enumerate(found) if all(e.index != f.index for f in found[:i])]


def _progress(trace: Trace | None, student: match.Index, path: tuple[int, ...], goal: Goal, whole: Whole) -> float:
    if reproduces(trace, path, goal):
        return float("inf")
    if trace is None or trace.error is not None:
        return -1.0
    return float(departures(trace, student, path, whole)[1])


# -- what the student did instead ----------------------------------------------------------------------------------
def _counterparts(event: Event, reference: Trace, student: Trace) -> list[Event]:
    """The student's events of the same operation whose operands hold the values of ``event``'s, best first."""
    name = ops.canonical_name(event)
    wanted = ops.canonical(event).operands
    scored = []
    for other in student.events:
        if ops.canonical_name(other) != name:
            continue
        theirs = ops.canonical(other).operands
        same = sum(
            1
            for mine, its in zip(wanted, theirs)
            if reference.value(mine) is not None
            and student.value(its) is not None
            and match.close(student.value(its), reference.value(mine))
        )
        if not wanted or same >= max(len(wanted) - 1, 1):
            scored.append((-same, other.index, other))
    return [other for _, _, other in sorted(scored)[:3]]


def _normal(value: Any) -> Any:
    if isinstance(value, dict) and set(value) in ({"l"}, {"t"}):
        return tuple(_normal(v) for v in next(iter(value.values())))
    return value


def _axes(value: Any, ndim: int) -> Any:
    """An axis parameter with negative axes made positive (``-1`` and ``1`` are one axis of a 2-d array)."""
    value = _normal(value)
    if isinstance(value, bool) or ndim <= 0:
        return value
    if isinstance(value, int):
        return value % ndim
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(v % ndim for v in value)
    return value


def _changed_params(mine: ops.Call, theirs: ops.Call, ndim: int) -> dict[str, tuple[Any, Any]]:
    """The parameters (and constants) in which the student's call differs: ``{name: (reference, student)}``."""
    changed = {}
    for key in sorted(set(mine.params) | set(theirs.params)):
        a, b = mine.params.get(key), theirs.params.get(key)
        if nodes_in(a) or nodes_in(b) or key == "dtype":
            continue
        same = _axes(a, ndim) == _axes(b, ndim) if key == "axis" else _normal(a) == _normal(b)
        if not same:
            changed[key] = (a, b)
    if len(mine.constants) == len(theirs.constants):
        for position, (a, b) in enumerate(zip(mine.constants, theirs.constants)):
            if not np.isclose(float(a), float(b), rtol=1e-9, atol=0):
                changed[f"constant{position}"] = (a, b)
    return changed


def _with_params(event: Event, changed: dict[str, tuple[Any, Any]]) -> tuple[list, dict] | None:
    """The reference event's arguments with the student's parameter values in their places."""
    args, kwargs = [*event.args], dict(event.kwargs)
    axis_word = "dim" if event.lib == "torch" else "axis"
    for key, (_mine, theirs) in changed.items():
        if key.startswith("constant"):
            position = int(key.removeprefix("constant"))
            numbers = [i for i, a in enumerate(args) if i and isinstance(a, (int, float)) and not isinstance(a, bool)]
            if position >= len(numbers):
                return None
            args[numbers[position]] = theirs
            continue
        names = ops.AXIS_NAMES if key == "axis" else ops.KEEP_NAMES if key == "keepdims" else (key,)
        present = [name for name in names if name in kwargs]
        if present:
            if theirs is None and key != "axis":
                kwargs.pop(present[0])
            else:
                kwargs[present[0]] = theirs
        elif key == "axis" and ops.canonical_name(event) in ops.AXIS_FIRST and len(args) >= 2:
            args[1] = theirs
        elif theirs is not None:
            kwargs[axis_word if key == "axis" else ("keepdim" if axis_word == "dim" else key)] = theirs
    return args, kwargs


def _mapped(tree: Any, mapping: dict[int, int]) -> Any:
    if isinstance(tree, dict):
        if set(tree) == {"n"}:
            return {"n": mapping[tree["n"]]}
        return {k: _mapped(v, mapping) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_mapped(v, mapping) for v in tree]
    return tree


def _replaced(tree: Any, old: int, new: int | dict) -> Any:
    if isinstance(tree, dict):
        if set(tree) == {"n"}:
            return (new if isinstance(new, dict) else {"n": new}) if tree["n"] == old else tree
        return {k: _replaced(v, old, new) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_replaced(v, old, new) for v in tree]
    return tree


def _same_value(reference: Trace, a: int, student: Trace, b: int) -> bool:
    mine, theirs = reference.value(a), student.value(b)
    return mine is not None and theirs is not None and match.close(theirs, mine)


class Views:
    """The two traces at one round of the search, and the indexes of their values."""

    def __init__(
        self,
        reference: Trace,
        student: Trace,
        student_index: match.Index,
        whole: Whole = lambda event: False,
        path: tuple[int, ...] = (),
    ) -> None:
        self.reference, self.student, self.whole, self.path = reference, student, whole, path
        self.student_index, self.reference_index = student_index, match.Index(reference)

    def injection_label(self, counterpart: Event, node: int) -> tuple[str, str]:
        """How the student's value (made by ``counterpart``) differs from the reference's ``node``: computed in half
        precision; an operation added after the reference's value (an operand holds it) or on one of the operands of
        the same operation; or computed otherwise (``op``)."""
        reference, student = self.reference, self.student
        out = counterpart.out[0] if counterpart.out else -1
        if out >= 0 and is_half(student.nodes[out].dtype) and not is_half(reference.nodes[node].dtype):
            return "dtype", ops.canonical_name(counterpart)
        theirs = [o for o in ops.canonical(counterpart).operands if student.value(o) is not None]
        if reference.value(node) is not None and any(
            match.close(student.value(o), reference.value(node)) for o in theirs
        ):
            return "extra", ops.canonical_name(counterpart)
        maker = next(iter(makers(reference, node, self.whole)), None)
        if maker is not None and ops.canonical_name(maker) == ops.canonical_name(counterpart):
            for operand in theirs:
                made = student.made_by(operand)
                if made is None or not made.operands or self.reference_index.holding(student.value(operand)):
                    continue
                if any(
                    self.reference_index.holding(student.value(o))
                    for o in made.operands
                    if student.value(o) is not None
                ):
                    return "extra", ops.canonical_name(made)
        return "op", ops.canonical_name(maker) if maker is not None else ops.canonical_name(counterpart)

    def proposals(self, node: int) -> list[Edit]:
        """The edits the student's trace suggests at the departure ``node`` of the reference's run."""
        reference, student = self.reference, self.student
        found: list[Edit] = []
        target = reference.value(node)
        for event in makers(reference, node, self.whole):
            name, mine = ops.canonical_name(event), ops.canonical(event)
            first = reference.nodes[mine.operands[0]] if mine.operands else None
            ndim = len(first.shape) if first is not None else 0
            for other in _counterparts(event, reference, student):
                found += self._from_counterpart(event, name, mine, other, node, target, ndim)
            for operand in mine.operands:
                value = reference.value(operand)
                if value is not None and target is not None and value.size == target.size:
                    holders = self.student_index.holding(value)
                    used = [(h, at) for h in holders if (at := self._used_instead(node, h)) is not None]
                    holder, at = used[0] if used else (holders[0] if holders else -1, None)
                    found.append(Edit("skip", event.index, operand, "missing", name, holder,
                                      detail={"at": at} if at is not None else {}))  # fmt: skip
        found += self.positional(node)
        seen, kept = set(), []
        for edit in found:
            key = (edit.kind, edit.event, edit.node, repr(edit.args), repr(edit.kwargs), edit.student)
            if key not in seen:
                seen.add(key)
                kept.append(edit)
        return kept[:MAX_PROPOSALS]

    def _from_counterpart(
        self, event: Event, name: str, mine: ops.Call, other: Event, node: int, target: Any, ndim: int
    ) -> list[Edit]:
        reference, student = self.reference, self.student
        theirs = ops.canonical(other)
        out = other.out[0] if other.out else -1
        found = []
        changed = _changed_params(mine, theirs, ndim)
        if changed:
            edited = _with_params(event, changed)
            if edited is not None:
                constants = all(k.startswith("constant") for k in changed)
                label = "axis" if "axis" in changed else "constant" if constants else "param"
                found.append(Edit("call", event.index, node, label, name, out, edited[0], edited[1], changed))
        for position, (a, b) in enumerate(zip(mine.operands, theirs.operands)):
            if reference.value(a) is None or student.value(b) is None:
                continue
            if match.close(student.value(b), reference.value(a)):
                continue
            holders = [h for h in self.reference_index.holding(student.value(b), before=node) if h != a]
            for holder in holders[:2]:
                args, kwargs = _replaced(event.args, a, holder), _replaced(event.kwargs, a, holder)
                detail = {"operand": (a, holder), "position": position, "student_operand": b}
                found.append(Edit("call", event.index, node, "operand", name, out, args, kwargs, detail))
            made = student.made_by(b)
            if not holders and made is not None and self._made_from(made, reference.value(a)):
                # an operation the reference does not apply to this operand: the student's value put in its place
                given = {"sv": [b, {"n": a}]}
                args, kwargs = _replaced(event.args, a, given), _replaced(event.kwargs, a, given)
                found.append(Edit("call", event.index, node, "extra", ops.canonical_name(made), b, args, kwargs))
        transplanted = self._transplanted(event, other, node)
        if transplanted is not None and not changed:
            args, kwargs = transplanted
            found.append(Edit("call", event.index, node, "param", name, out, args, kwargs, {"call": other.index}))
        if out >= 0 and target is not None and student.value(out) is not None:
            if student.value(out).size == target.size:
                label, op = self.injection_label(other, node)
                found.append(Edit("inject", event.index, node, label, op if label == "extra" else name, out))
        return found

    def _used_instead(self, node: int, holder: int) -> int | None:
        """The student's event that takes ``holder`` where the reference's same operation takes ``node`` (the line
        where the student goes on without the operation left out)."""
        if holder < 0:
            return None
        reference, student = self.reference, self.student
        for consumer in (reference.events[i] for i in reference.consumers.get(node, ())):
            mine = ops.canonical(consumer).operands
            if node not in mine:
                continue
            position = mine.index(node)
            for index in student.consumers.get(holder, ()):
                other = student.events[index]
                theirs = ops.canonical(other).operands
                if ops.canonical_name(other) != ops.canonical_name(consumer) or len(theirs) != len(mine):
                    continue
                if theirs[position] == holder and all(
                    i == position or _same_value(reference, a, student, b) for i, (a, b) in enumerate(zip(mine, theirs))
                ):
                    return index
        return None

    def _made_from(self, made: Event, value: np.ndarray) -> bool:
        """Whether the student's event ``made`` took the reference's ``value`` as one of its operands."""
        return any(
            self.student.value(o) is not None and match.close(self.student.value(o), value)
            for o in ops.canonical(made).operands
        )

    def _transplanted(self, event: Event, other: Event, node: int) -> tuple[list, dict] | None:
        """The student's own call of the same operation (same library), its nodes read as the reference's that hold
        the same values: the reference's run calls it just as the student did (a slice's bound, a flag)."""
        if other.lib != event.lib or other.op != event.op or (other.args, other.kwargs) == (event.args, event.kwargs):
            return None
        mapping: dict[int, int] = {}
        for theirs in nodes_in(other.args) + nodes_in(other.kwargs):
            holders = self.reference_index.holding(self.student.value(theirs), before=node)
            if not holders:
                return None
            mine = [h for h in holders if h in ops.canonical(event).operands]
            mapping[theirs] = (mine or holders)[-1]
        return _mapped(other.args, mapping), _mapped(other.kwargs, mapping)

    def positional(self, node: int) -> list[Edit]:
        """The student's value that stands where the reference's ``node`` stands: the checked output itself, or the
        operand a later operation of both takes in its place (where the two computations join again)."""
        reference, student = self.reference, self.student
        makers_of = makers(reference, node, self.whole)
        if not makers_of or reference.value(node) is None:
            return []
        maker, size, found = makers_of[0], reference.value(node).size, []
        candidates = student.output_nodes(self.path) if node in reference.output_nodes(self.path) else []
        used_at: dict[int, int] = {}  # a candidate -> the student's event that took it in the node's place
        for consumer in (reference.events[i] for i in reference.consumers.get(node, ())):
            mine = ops.canonical(consumer).operands
            if node not in mine:
                continue
            position = mine.index(node)
            for other in student.events:
                theirs = ops.canonical(other).operands
                if ops.canonical_name(other) != ops.canonical_name(consumer) or len(theirs) != len(mine):
                    continue
                agree = all(
                    i == position or (reference.value(a) is not None and student.value(b) is not None
                                      and match.close(student.value(b), reference.value(a)))
                    for i, (a, b) in enumerate(zip(mine, theirs))
                )  # fmt: skip
                if agree:
                    candidates.append(theirs[position])
                    used_at.setdefault(theirs[position], other.index)
        for candidate in dict.fromkeys(candidates):
            value = student.value(candidate)
            if value is None or match.close(value, reference.value(node)):
                continue
            passed = [
                (event, o)
                for event in makers_of
                if len(event.out) == 1
                for o in ops.canonical(event).operands
                if reference.value(o) is not None and match.close(value, reference.value(o))
            ]
            if passed:  # the operation left out, its operand used in its place (whatever its shape)
                event, operand = passed[-1]
                at = {"at": used_at[candidate]} if candidate in used_at else {}
                found.append(Edit("skip", event.index, operand, "missing", ops.canonical_name(event), candidate,
                                  detail=at))  # fmt: skip
                continue
            if value.size != size:
                continue
            made = student.made_by(candidate)
            label, op = self.injection_label(made, node) if made is not None else ("op", "")
            found.append(Edit("inject", maker.index, node, label, op if label == "extra" else ops.canonical_name(maker),
                              candidate))  # fmt: skip
        return found[:3]


def tail(reference: Trace, student: Trace, path: tuple[int, ...], index: match.Index) -> Edit | None:
    """When every value the reference's output is made from agrees and the output still differs: what the student did
    after the last agreeing value (an operation added), or which of the reference's values it returns instead."""
    outputs, theirs = reference.output_nodes(path), student.output_nodes(path)
    if len(outputs) != 1 or len(theirs) != 1:
        return None
    output, returned = outputs[0], theirs[0]
    made = reference.made_by(output)
    if made is None or student.value(returned) is None or reference.value(output) is None:
        return None
    if student.value(returned).size != reference.value(output).size:
        return None
    holders = [h for h in match.Index(reference).holding(student.value(returned)) if h != output]
    if holders:
        detail = {"returned": (output, holders[-1])}
        return Edit("inject", made.index, output, "returns", ops.canonical_name(made), returned, detail=detail)
    node, seen = returned, set()
    while node not in seen:
        seen.add(node)
        event = student.made_by(node)
        if event is None:
            return None
        operands = ops.canonical(event).operands
        if any(
            match.close(student.value(o), reference.value(output)) for o in operands if student.value(o) is not None
        ):
            return Edit("inject", made.index, output, "extra", ops.canonical_name(event), returned)
        unheld = [o for o in operands if student.nodes[o].kind != "input"]
        if not unheld:
            return None
        node = unheld[0]
    return None


# -- the search, its proof, and its pruning ------------------------------------------------------------------------
def plan(edits: Sequence[Edit], student: Trace) -> dict | None:
    """A replay's plan for ``edits`` (injections valued from ``student``); None if one has no value there."""
    entries = [e.plan_entry(student) for e in edits]
    return None if any(entry is None for entry in entries) else {"values": True, "edits": entries}


def search(
    reference: Trace,
    student: Trace,
    path: tuple[int, ...],
    goal: Goal,
    trusted: Trusted,
    spent: Callable[[], bool] = lambda: False,
    whole: Whole = lambda event: False,
) -> tuple[Edit, ...] | None:
    """The edits, earliest first, that make the reference's run give ``goal`` at ``path`` on the check's input.

    ``whole``: the checked function's own calls (see :func:`whole_calls`).
    """
    index = match.Index(student)
    edits: list[Edit] = []
    current = reference
    for _ in range(MAX_ROUNDS + 1):
        if reproduces(current, path, goal):
            return tuple(edits)
        if len(edits) == MAX_ROUNDS or spent():
            return None
        points, first = departures(current, index, path, whole)
        if not points:
            last = tail(current, student, path, index)
            entries = plan([*edits, last], student) if last is not None else None
            if entries is None:
                return None
            (replay,) = trusted.replays([entries])
            return (*edits, last) if reproduces(replay, path, goal) else None
        views = Views(current, student, index, whole, path)
        chosen: tuple[float, Edit, Trace] | None = None
        later = [n for n in unheld(current, index, path) if n not in points][:MAX_JOINS]
        tries = [views.proposals(p) for p in points[:MAX_POINTS]] + [views.positional(n) for n in later]
        alike = _alike(views, points, tries[0]) if points else []
        # the same mistake everywhere it is made at once (a loop's every pass); an error comes only then, other
        # goals take it only when it gives the student's numbers
        for batch, partial in ((alike, isinstance(goal, Raised)), *((t, True) for t in tries)):
            usable = [(c, p) for c in batch if (p := plan([*edits, *_edits(c)], student)) is not None]
            replays = trusted.replays([p for _, p in usable]) if usable else []
            for (candidate, _used), replay in zip(usable, replays):
                score = _progress(replay, index, path, goal, whole)
                if (score == float("inf") or partial) and score > first and _better(score, candidate, chosen):
                    chosen = (score, candidate, replay)
            if chosen is not None or spent():
                break
        if chosen is None:
            return None
        edits.extend(_edits(chosen[1]))
        current = chosen[2]
    return None


def _better(score: float, candidate: Edit | tuple[Edit, ...], chosen: tuple | None) -> bool:
    """Whether a candidate beats the one chosen so far: it carries the agreement further, or as far and says more
    (an edit that only puts the student's value in place, ``op``, says least)."""
    if chosen is None or score > chosen[0]:
        return True
    vague = [e.label == "op" for e in _edits(candidate)], [e.label == "op" for e in _edits(chosen[1])]
    return score == chosen[0] and sum(vague[0]) < sum(vague[1])


def _edits(candidate: Edit | tuple[Edit, ...]) -> tuple[Edit, ...]:
    return candidate if isinstance(candidate, tuple) else (candidate,)


def _alike(views: Views, points: list[int], first: list[Edit]) -> list[tuple[Edit, ...]]:
    """The first departure's edits made at every departure of the same operation at once (a mistake repeated in a
    loop: every head's value left unprojected, every step's position taken as 0)."""
    reference = views.reference
    name = {p: [ops.canonical_name(e) for e in makers(reference, p, views.whole)] for p in points[1:]}
    combined = []
    for edit in first[:MAX_PROPOSALS]:
        same: list[Edit] = []
        for point in [p for p in points[1:] if edit.op in name[p]][:MAX_ALIKE]:
            match_ = next((e for e in views.proposals(point) if _same_edit(e, edit)), None)
            if match_ is not None:
                same.append(match_)
        if same:
            combined.append((edit, *same))
    return combined[:MAX_PROPOSALS]


def _same_edit(a: Edit, b: Edit) -> bool:
    """Whether two edits at two departures are the same change (same kind, words and student's constants)."""
    if (a.kind, a.label, a.op) != (b.kind, b.label, b.op):
        return False
    if a.label in ("axis", "param", "constant"):
        return _theirs(a) == _theirs(b)
    return True


def _theirs(edit: Edit) -> str:
    """What the student does in an edit, without the nodes it is done to: its parameters or its arguments."""
    changed = [repr(v[1]) for v in edit.detail.values() if isinstance(v, tuple) and len(v) == 2]
    return repr(changed) if changed else repr(_without_nodes(edit.args)) + repr(_without_nodes(edit.kwargs))


def _without_nodes(tree: Any) -> Any:
    if isinstance(tree, dict):
        return "n" if set(tree) == {"n"} else {k: _without_nodes(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_without_nodes(v) for v in tree]
    return tree


def proved(
    edits: tuple[Edit, ...],
    path: tuple[int, ...],
    first: tuple[Trace, Goal, Trusted],
    second: tuple[Trace, Goal, Trusted],
) -> tuple[Edit, ...] | None:
    """``edits`` pared down to those the numbers need, if they give the student's numbers on both inputs (where the
    student's numbers differ from the reference's on both); else None.

    ``first`` and ``second`` are, for the check's input and its twin: the student's trace, the student's value at
    ``path``, and the reference's side for that input.
    """
    if any(e.kind == "inject" or "sv" in repr(e.args) for e in edits) and not same_structure(first[0], second[0]):
        return None

    def holds(kept: Sequence[Edit]) -> bool:
        for student, goal, trusted in (first, second):
            entries = plan(kept, student)
            if entries is None:
                return False
            (replay,) = trusted.replays([entries])
            if not reproduces(replay, path, goal):
                return False
        return True

    for _student, goal, trusted in (first, second):
        (plain,) = trusted.replays([{"values": True, "edits": []}])
        if plain is None or reproduces(plain, path, goal):
            return None  # the student's run agrees with the reference's there: that input proves nothing
    if not holds(edits):
        return None
    kept = list(edits)
    groups: dict[tuple, list[Edit]] = {}  # the same change made in several places is kept or dropped as one
    for edit in edits:
        groups.setdefault((edit.kind, edit.label, edit.op, _theirs(edit)), []).append(edit)
    for group in groups.values():
        fewer = [e for e in kept if all(e is not g for g in group)]
        if fewer and holds(fewer):
            kept = fewer
    return tuple(kept)


def same_structure(a: Trace, b: Trace) -> bool:
    """Whether two traces of one call ran the same operations in the same order (so their node ids correspond)."""
    if len(a.events) != len(b.events) or len(a.nodes) != len(b.nodes):
        return False
    return all(x.op == y.op and x.out == y.out for x, y in zip(a.events, b.events))
