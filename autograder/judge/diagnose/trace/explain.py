"""The diagnosis of one failed check: a known mistake confirmed on the twin, an upstream culprit, or a departure.

In order, each only after the check has failed (an honest submission never pays for any of it):

1. The known wrong answers that match the student's value are tried on the twin (:mod:`autograder.judge.diagnose.twin`):
   the student's code runs on it in the sandbox, and a mistake is named only if its answer there is the student's.
2. With the grader's trusted side (a grade with the reference): the student's call is traced in a sandbox child of
   its own (never the grading child: no state of a diagnosis reaches a check) and the reference's on the trusted
   side. A lab function of another step that answers wrongly inside the call is named first (upstream first), and
   the call runs again with correct answers stood in; if it then agrees with the reference, that is all it says.
3. Otherwise the departure search (:mod:`.follow`) looks for the change of the reference that gives the student's
   numbers on both inputs. A known mistake confirmed in step 1 keeps its catalogue sentence; a departure found only
   here is named by what it is (``trace.<kind>.<op>``).

What cannot be proved is not named; :func:`explain` then returns at most a note saying why. Every call here runs
within a budget (:class:`Budget`): a diagnosis that runs out says nothing rather than slowing the grade down.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from autograder.judge import diagnose
from autograder.judge.diagnose import answers, catalog, twin
from autograder.judge.diagnose.trace import follow, match, upstream, words
from autograder.judge.diagnose.trace.model import Trace, TraceError, parse

STEP_BUDGET_S = 25.0  # the most a step's diagnoses may take together (sandbox and trusted side)


@dataclass(frozen=True)
class Source:
    """How a checked value was made: the call (``kind`` "call") or probe, its inputs, and which part of its result.

    ``base``: for a value the check derived from the result (a row, a loss), the result's part itself.
    """

    kind: str
    module: str
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    path: tuple[int, ...] = ()
    base: Any = None

    def at(self, index: int) -> Source:
        return Source(self.kind, self.module, self.name, self.args, self.kwargs, (*self.path, index), self.base)

    def deriving(self, base: Any) -> Source:
        return Source(self.kind, self.module, self.name, self.args, self.kwargs, self.path, base)

    @property
    def derived(self) -> bool:
        return self.base is not None

    def key(self) -> tuple:
        return (self.kind, self.module, self.name, twin.seed_of(self.args, self.kwargs))


class Side(Protocol):
    """One side's sandbox: runs a probe (or a call), ``(True, value)`` when it returned, ``(False, None)`` else."""

    def probe(self, name: str, module: str | None, *args: Any) -> tuple[bool, Any]: ...

    def call(self, module: str, name: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]: ...


REPLAYS_PER_REQUEST = 16
REPLY_ARRAYS = 6000  # arrays in one reply of replays (the protocol takes 10 000)
REPLY_BYTES = 32 << 20  # bytes of values in one reply of replays (a reply may have 64 MiB)


@dataclass
class Budget:
    """Seconds a step's diagnoses may still spend."""

    seconds: float = STEP_BUDGET_S

    def spend(self, started: float) -> None:
        self.seconds -= time.monotonic() - started

    @property
    def spent(self) -> bool:
        return self.seconds <= 0


@dataclass(frozen=True)
class Diagnosis:
    """What a failed check says about its cause: a named mistake and its sentence, or only a note."""

    mistake: str | None = None
    text: str | None = None  # the sentence after "Likely mistake:", in the active language
    note: str | None = None  # said instead when nothing can be named (why not)


@dataclass
class Sides:
    """Where a step's diagnoses run: the student's diagnosis child, the trusted side (None: no reference)."""

    student: Side
    trusted: Side | None
    budget: Budget = field(default_factory=Budget)
    memo: dict = field(default_factory=dict)  # traces and diagnoses already made, by call
    reference: Any = None  # the reference's modules (``ref.scaling``), for an earlier step's known wrong answers

    def _timed(self, side: Side, method: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        if self.budget.spent:
            return False, None
        started = time.monotonic()
        try:
            return getattr(side, method)(*args, **kwargs)
        finally:
            self.budget.spend(started)

    def plain(self, source: Source, args: tuple, kwargs: dict) -> tuple[bool, Any]:
        """The student's value on other inputs (untraced)."""
        if source.kind == "call":
            return self._timed(self.student, "call", source.module, source.name, *args, **kwargs)
        return self._timed(self.student, "probe", source.name, source.module, *args)

    def trace(self, side: Side, source: Source, args: tuple, kwargs: dict, plan: dict) -> Trace | None:
        if source.kind == "call":
            request = (source.module, source.name, list(args), dict(kwargs), plan)
            ok, reply = self._timed(side, "probe", "trace_call", None, *request)
        else:
            ok, reply = self._timed(side, "probe", "trace_probe", None, source.name, list(args), plan)
        return _parsed(reply) if ok else None

    def replays(self, source: Source, args: tuple, kwargs: dict, plans: Sequence[dict]) -> list[Trace | None]:
        if self.trusted is None:
            return [None] * len(plans)
        target = {"call": [source.module, source.name]} if source.kind == "call" else {"probe": source.name}
        replies: list = []
        per_request = self._per_request(source)
        for start in range(0, len(plans), per_request):
            chunk = list(plans[start : start + per_request])
            request = (target, list(args), dict(kwargs), chunk)
            ok, reply = self._timed(self.trusted, "probe", "trace_replays", None, *request)
            replies.extend(reply if ok and isinstance(reply, list) else [None] * len(chunk))
        return [_parsed(r) for r in replies]

    def _per_request(self, source: Source) -> int:
        """How many replays one request may ask for: their values must fit one reply (the protocol's bounds on
        arrays and bytes), judged by the size of the reference's own trace of the call."""
        call = self.memo.get(source.key())
        reference = call.reference if call is not None else None
        if reference is None:
            return 1
        arrays = sum(1 for n in reference.nodes if n.value is not None) + 1
        size = sum(n.value.nbytes for n in reference.nodes if n.value is not None) + 1
        return max(1, min(REPLAYS_PER_REQUEST, REPLY_ARRAYS // arrays, REPLY_BYTES // size))

    def calls(self, calls: Sequence[tuple[str, tuple, dict]]) -> list:
        if self.trusted is None or not calls:
            return []
        ok, reply = self._timed(self.trusted, "probe", "lab_calls", None, [list(c) for c in calls])
        return reply if ok and isinstance(reply, list) else []


def _parsed(reply: Any) -> Trace | None:
    try:
        return parse(reply)
    except (TraceError, TypeError, ValueError, KeyError, IndexError):
        return None


class _Replays:
    """The trusted side's replays of one call on one input (:class:`follow.Trusted`)."""

    def __init__(self, sides: Sides, source: Source, args: tuple, kwargs: dict) -> None:
        self.sides, self.source, self.args, self.kwargs = sides, source, args, kwargs

    def replays(self, plans: Sequence[dict]) -> list[Trace | None]:
        return self.sides.replays(self.source, self.args, self.kwargs, plans)


# -- 1. known mistakes, confirmed on the twin ----------------------------------------------------------------------
def ranked(value: Any, wrong: Mapping[str, Any] | None) -> list[str]:
    """The keys of ``wrong`` whose answer matches ``value``: fewest composed edits first, then closest."""
    if not wrong:
        return []
    found = []
    for order, (key, answer) in enumerate(wrong.items()):
        gap = diagnose.distance(value, answer)
        if gap <= 1.0:
            found.append((key.count(diagnose.AND), gap, order, key))
    return [key for *_rank, key in sorted(found)]


def confirmed(source: Source, value: Any, wrong: Mapping[str, Any] | None, sides: Sides) -> str | None:
    """The best matching known mistake that matches the student's answer on the twin too, as a mistake id.

    The student runs on the twin of the checked call's own inputs; the wrong answers' twin was drawn from theirs,
    and both must have drawn the same numbers (they do when the answers were made for these inputs).
    """
    candidates = ranked(value, wrong)
    drawn = answers.twin_of(wrong) if candidates else None
    mine = twin.inputs(source.args, source.kwargs) if drawn is not None else None
    if drawn is None or mine is None:
        return None
    args, kwargs, on_twin = drawn
    if not twin.same_draw(mine, (args, kwargs)):
        return None
    if not twin.floats(mine) and repr(mine) != repr((tuple(args), dict(kwargs))):
        return None  # integer twins: the same only if the arguments are the same
    ok, theirs = sides.plain(source, *mine)
    part = follow.part_of(wrong.measure(_part(theirs, source.path)), ()) if ok else None
    if part is None:
        return None
    for key in candidates:
        if key in on_twin and diagnose.distance(part, on_twin[key]) <= 1.0:
            return diagnose.AND.join(diagnose.parts(key))
    return None


# -- 2. and 3. the traced diagnosis --------------------------------------------------------------------------------
@dataclass
class _Call:
    """The traces of one call (and of its twin), shared by the checks of its parts."""

    student: Trace | None = None
    reference: Trace | None = None
    twin_args: tuple[tuple, dict] | None = None
    twin_student: Trace | None = None
    culprits: list = field(default_factory=list)
    corrected: Trace | None = None  # the student's run with correct callees stood in (None: no culprit)
    corrected_twin: Trace | None = None
    results: dict = field(default_factory=dict)  # path -> Diagnosis


STUDENT_PLAN = {"values": True, "sources": True}
REFERENCE_PLAN = {"values": True}


def _traces(source: Source, sides: Sides) -> _Call:
    key = source.key()
    if key in sides.memo:
        return sides.memo[key]
    call = _Call()
    sides.memo[key] = call
    call.student = sides.trace(sides.student, source, source.args, source.kwargs, STUDENT_PLAN)
    if sides.trusted is not None and call.student is not None:
        call.reference = sides.trace(sides.trusted, source, source.args, source.kwargs, REFERENCE_PLAN)
    call.twin_args = twin.inputs(source.args, source.kwargs)
    return call


def _with_stand_ins(source: Source, sides: Sides, args: tuple, kwargs: dict, student: Trace) -> Trace | None:
    """The student's run again, every wrong callee's call answered with the reference's value (a few rounds)."""
    own = source.module
    wrong = upstream.wrong_callees(student, own, sides.calls)
    if not wrong:
        return None
    answers_so_far = upstream.stand_ins(wrong)
    run = None
    for _ in range(upstream.MAX_ROUNDS):
        plan = {**STUDENT_PLAN, "stand_ins": answers_so_far}
        run = sides.trace(sides.student, source, args, kwargs, plan)
        if run is None or not run.unanswered:
            return run
        more = upstream.answered(run, sides.calls)
        if not more:
            return run
        answers_so_far = answers_so_far + more
    return run


def _upstream(source: Source, sides: Sides, call: _Call) -> None:
    """Find the wrong callees of the call, and the run with them corrected (on both inputs)."""
    own = source.module
    wrong = upstream.wrong_callees(call.student, own, sides.calls)
    call.culprits = upstream.culprits(wrong, call.student)
    if not call.culprits:
        return
    call.corrected = _with_stand_ins(source, sides, source.args, source.kwargs, call.student)


def _own(source: Source, sides: Sides, call: _Call, student: Trace, corrected: bool) -> str | None:
    """The proved departure of the student's own code (from ``student``, the plain or the corrected run)."""
    reference = call.reference
    goal = follow.goal_of(student, source.path)
    if reference is None or goal is None or call.twin_args is None or sides.budget.spent:
        return None
    first = _Replays(sides, source, source.args, source.kwargs)
    whole = follow.whole_calls(source.module)
    edits = follow.search(reference, student, source.path, goal, first, lambda: sides.budget.spent, whole)
    if not edits:
        return None
    args, kwargs = call.twin_args
    if corrected:
        if call.corrected_twin is None:
            plain_twin = sides.trace(sides.student, source, args, kwargs, STUDENT_PLAN)
            call.corrected_twin = plain_twin and _with_stand_ins(source, sides, args, kwargs, plain_twin)
        twin_student = call.corrected_twin
    else:
        if call.twin_student is None:
            call.twin_student = sides.trace(sides.student, source, args, kwargs, STUDENT_PLAN)
        twin_student = call.twin_student
    twin_goal = follow.goal_of(twin_student, source.path) if twin_student is not None else None
    if twin_student is None or twin_goal is None:
        return None
    second = _Replays(sides, source, args, kwargs)
    kept = follow.proved(edits, source.path, (student, goal, first), (twin_student, twin_goal, second))
    if not kept:
        return None
    return "|".join(["&".join(dict.fromkeys(e.mistake for e in kept)), words.finding(kept, student, reference)])


def _agrees(run: Trace | None, reference: Trace | None, path: tuple[int, ...]) -> bool:
    if run is None or reference is None or run.error is not None:
        return False
    mine, theirs = follow.part_of(run.returned, path), follow.part_of(reference.returned, path)
    return mine is not None and theirs is not None and match.close(mine, theirs)


def explain(
    source: Source, value: Any, wrong: Mapping[str, Any] | None, sides: Sides, student_part: Any = None
) -> Diagnosis | None:
    """The diagnosis of a failed check of ``value`` (the student's, as checked) made by ``source``.

    ``student_part`` is the student's value at ``source.path`` when the check derived ``value`` from it.
    """

    # A known mistake of this function is looked for only where it can be the answer: a culprit upstream comes
    # first, and a call already diagnosed keeps its diagnosis (a wrong attention fails a dozen checks downstream,
    # each of whose known mistakes would otherwise be computed, and confirmed on the twin, for nothing).
    def known() -> Diagnosis | None:
        mistake = confirmed(source, value, wrong, sides)
        return Diagnosis(mistake, None) if mistake else None

    if sides.trusted is None:
        return known()
    call = _traces(source, sides)
    if call.student is None or call.reference is None:
        return known()
    part = np.asarray(student_part if student_part is not None else value)
    graded = follow.part_of(call.student.returned, source.path)
    if graded is None or not match.close(graded, part):
        return known()  # the traced run did not give the graded value
    if source.path in call.results:
        return call.results[source.path]
    if not call.culprits and call.corrected is None and "upstream_done" not in call.results:
        call.results["upstream_done"] = True
        _upstream(source, sides, call)
    result = _diagnosis(source, sides, call, known)
    call.results[source.path] = result
    return result


def _close_tree(got: Any, wrong: Any) -> bool:
    if isinstance(got, (tuple, list)) or isinstance(wrong, (tuple, list)):
        if not isinstance(got, (tuple, list)) or not isinstance(wrong, (tuple, list)) or len(got) != len(wrong):
            return False
        return all(_close_tree(g, w) for g, w in zip(got, wrong))
    try:
        return diagnose.distance(np.asarray(got), np.asarray(wrong)) <= 1.0
    except (TypeError, ValueError):
        return False


def _part(value: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        if not isinstance(value, (tuple, list)) or not 0 <= index < len(value):
            return None
        value = value[index]
    return value


def culprit_mistake(callee: upstream.Callee, sides: Sides) -> str | None:
    """The known mistake of an earlier step's function that answered wrongly, confirmed on its call's twin.

    Its step's variants (``attention_variants`` for ``scaling.attention``) are run with the reference on the inputs
    the call passed and on their twin; the student's function runs on the twin in the diagnosis child.
    """
    ref = sides.reference
    try:
        module = importlib.import_module(f"{diagnose.__name__}.{callee.module}")
    except ImportError:
        return None
    variants = getattr(module, f"{callee.name}_variants", None)
    if ref is None or variants is None:
        return None
    with_ref = next(iter(inspect.signature(variants).parameters), "") == "ref"

    def answers(args: tuple, kwargs: dict) -> Mapping[str, Any]:
        plain_args, plain_kwargs = upstream.plain(args), {k: upstream.plain(v) for k, v in kwargs.items()}
        with np.errstate(all="ignore"):
            return variants(ref, *plain_args, **plain_kwargs) if with_ref else variants(*plain_args, **plain_kwargs)

    source = Source("call", callee.module, callee.name, callee.args, callee.kwargs)
    drawn = twin.inputs(callee.args, callee.kwargs)
    try:
        ok, mine = sides.plain(source, callee.args, callee.kwargs)
        candidates = [k for k, v in answers(callee.args, callee.kwargs).items() if ok and _close_tree(mine, v)]
        if not candidates or drawn is None:
            return None
        ok, theirs = sides.plain(source, *drawn)
        on_twin = answers(*drawn) if ok else {}
    except Exception:  # a variant that cannot run on these inputs: no name from it
        return None
    for key in sorted(candidates, key=lambda k: k.count(diagnose.AND)):
        if key in on_twin and _close_tree(theirs, on_twin[key]):
            return diagnose.AND.join(diagnose.parts(key))
    return None


def _diagnosis(source: Source, sides: Sides, call: _Call, known: Callable[[], Diagnosis | None]) -> Diagnosis | None:
    """A culprit upstream first, then a known mistake of this function (``known()``, computed only here), then a
    mistake found in the student's own trace."""
    if call.culprits:
        there = culprit_mistake(call.culprits[0], sides)
        sentence = words.upstream(call.culprits, catalog.describe(there) if there else None)
        mistake = "upstream." + call.culprits[0].function + (diagnose.AND + there if there else "")
        if call.corrected is None or _agrees(call.corrected, call.reference, source.path):
            return Diagnosis(mistake, sentence)
        own = _own(source, sides, call, call.corrected, corrected=True)
        if own is None:
            return Diagnosis(mistake, sentence)
        own_mistake, own_text = own.split("|", 1)
        return Diagnosis(f"{mistake}&{own_mistake}", words.upstream_and_own(sentence, call.culprits, own_text))
    found = known()
    if found is not None:
        return found
    own = _own(source, sides, call, call.student, corrected=False)
    if own is not None:
        own_mistake, own_text = own.split("|", 1)
        return Diagnosis(own_mistake, own_text)
    if call.student.truncated or _untraced(call.student, source.path):
        return Diagnosis(note=words.unfollowed(call.student.truncated))
    return None


def _untraced(student: Trace, path: tuple[int, ...]) -> bool:
    """Whether the checked value was made where no traced operation produced it (a loop over plain numbers)."""
    nodes = student.output_nodes(path)
    return not nodes or all(student.made_by(n) is None and student.nodes[n].kind != "input" for n in nodes)


def cause_of_error(source: Source, sides: Sides, raised_in: str | None) -> Diagnosis | None:
    """When a call raised: a lab function of another module that returned a wrong value, shape or dtype before;
    else the student's own departure that makes the reference raise the same error (on both inputs)."""
    if sides.trusted is None:
        return None
    call = _traces(source, sides)
    if call.student is None or call.student.error is None:
        return None
    own = source.module
    wrong = upstream.wrong_callees(call.student, own, sides.calls, dtypes=True)
    if wrong:
        culprit = upstream.culprits(wrong, call.student)[0]
        return Diagnosis("upstream." + culprit.function, words.cause_of_error(culprit, raised_in))
    # a function of the same file that returned another shape or precision than the reference's before the error
    formed = [c for c in upstream.wrong_callees(call.student, "", sides.calls, dtypes=True) if c.shape or c.dtype]
    if formed:
        culprit = upstream.culprits(formed, call.student)[0]
        mistake = "trace.dtype." if culprit.dtype else "trace.shape."
        return Diagnosis(mistake + culprit.name, words.cause_of_error(culprit, raised_in))
    if call.reference is None or call.reference.error is not None:
        return None
    found = _own(source, sides, call, call.student, corrected=False)
    if found is None:
        return None
    mistake, text = found.split("|", 1)
    return Diagnosis(mistake, text)
