"""What graders write checks with: calls into the sandbox and expectations.

A grader calls student code through :class:`Lab` and gets a :class:`Got`: the
value plus the words that describe the call, and how it was made (its
:class:`~autograder.judge.diagnose.trace.explain.Source`). Every expectation that
does not hold raises :class:`CheckFailed` with a message from the one template
in :mod:`autograder.judge.messages`, with how the value relates to the expected one
and, when the grader can prove it, the likely mistake
(:mod:`autograder.judge.diagnose.trace.explain`: a known wrong answer confirmed on the
call's twin, a wrong function of an earlier step, or where the student's
computation parts from the reference's). Only a check that failed is diagnosed.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from autograder.base.tasks import Step
from autograder.handin import pristine
from autograder.i18n import N_, _, counted
from autograder.judge import cases, messages
from autograder.judge.diagnose import catalog, relations
from autograder.judge.diagnose import context as call_context
from autograder.judge.diagnose.trace import explain
from autograder.judge.diagnose.trace import sides as diagnosis_sides
from autograder.judge.evidence import RECORDER, Evidence, keepable
from autograder.sandbox import outcome as outcomes
from autograder.sandbox import replies
from autograder.sandbox.client import Sandbox
from autograder.sandbox.probes import REPLIES
from autograder.sandbox.protocol import Unsupported

# A correct float32 implementation lands well inside these; every known mistake far outside.
RTOL, ATOL = 1e-4, 1e-6
# Rounding noise of float32 arithmetic on values of size 1 (64 ulps: a few dozen operations deep).
FLOAT32_NOISE = 64 * float(np.finfo(np.float32).eps)
IT = N_("it")  # the subject of a probe's outcome ("it did not return within 10 s")
FORGED = N_("a reply of another shape than the probe {name} gives")  # what a forged probe reply is
NAMING_THE_PROBLEM = N_("{error} naming the problem ({problem})")
NO_ERROR = N_("no error (it returned {value})")
UNNAMED_PROBLEM = N_("{error}, a message that does not name the problem")
WITH_INPUTS = N_("{call} with {inputs}")
WITH_RANDOM = N_("{call} with random {inputs}")
ROUNDING_ONLY = N_("{what} of rounding noise only (at most {limit}, what float32 arithmetic leaves{exact})")


BROKEN_LOG = "ATTNLAB_DIAGNOSIS_LOG"  # a file the benchmarks set: each diagnosis that broke appends its traceback


def _broken() -> None:
    """Note a diagnosis that broke where a benchmark asked for it (the check keeps its message either way)."""
    path = os.environ.get(BROKEN_LOG)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(traceback.format_exc() + "\n")


class CheckFailed(AssertionError):
    """A check that did not hold; ``mistake`` is the recognised mistake's id, if any.

    When the check failed because a call produced no value, ``outcome`` says how
    the call ended and ``function`` names it (``module.name``).
    """

    def __init__(
        self,
        message: str,
        mistake: str | None = None,
        evidence: Evidence | None = None,
        not_started: str = "",
        outcome: outcomes.Failure | None = None,
        function: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.mistake, self.evidence, self.not_started = message, mistake, evidence, not_started
        self.outcome, self.function = outcome, function


class NeedsReview(CheckFailed):
    """The check's evidence cannot be verified here (a report from a device this grader lacks): 0 points, shown
    as *for review* until a person or a grader with that device confirms it."""


@dataclass
class Got:
    """A value that came back from student code, the call that produced it, and how to diagnose it."""

    step: Step
    call: str
    value: Any
    output: str = field(default="", repr=False)
    context: dict[str, float] = field(default_factory=dict, repr=False)  # the call's named sizes (d_k, n, ...)
    source: explain.Source | None = field(default=None, repr=False)  # how the value was made (None: not by a call)
    sides: explain.Sides | None = field(default=None, repr=False)  # where its diagnosis runs

    def fail(
        self,
        expected: str,
        got: str,
        mistake_id: str | None = None,
        evidence: Evidence | None = None,
        not_started: str = "",
        relation: relations.Relation | None = None,
        diagnosis: explain.Diagnosis | None = None,
    ) -> NoReturn:
        """Fail the check; ``not_started`` says in a few words that the work is not there yet (no report, no answer).

        ``mistake_id`` names a mistake the check itself established (an input changed by the call, a
        misconception a prediction states); ``diagnosis`` is what :meth:`explain` proved or noted; ``relation``
        says how the value relates to the expected one, when the grader found out.
        """
        text = catalog.describe(mistake_id) if mistake_id and catalog.known(mistake_id) else None
        how = relation.sentence() if relation is not None else None
        if diagnosis is not None:
            mistake_id = diagnosis.mistake
            known = mistake_id is not None and catalog.known(mistake_id)
            text = diagnosis.text or (catalog.describe(mistake_id) if known else None)
            if diagnosis.note:
                how = f"{how}; {diagnosis.note}" if how else diagnosis.note
        message = messages.failure(self.step, self.call, expected, got, text, how)
        raise CheckFailed(message, mistake_id, evidence, _(not_started) if not_started else "")

    def explain(self, value: Any, wrong: Mapping[str, Any] | None) -> explain.Diagnosis | None:
        """What the grader can prove about why ``value`` (this call's, as checked) is wrong: see
        :func:`autograder.judge.diagnose.trace.explain.explain`. Nothing without the call that made it."""
        if self.source is None or self.sides is None:
            return None
        try:
            return explain.explain(self.source, value, wrong, self.sides, self.source.base)
        except Exception:  # a diagnosis that breaks must never cost the check its message
            _broken()
            return None

    def derive(self, call: str, value: Any, *, derived: bool = False) -> Got:
        """This call's value (``derived``: a quantity computed from it) under another description."""
        source = self.source
        if source is not None and derived and not source.derived:
            source = source.deriving(self.value)
        return Got(self.step, call, value, self.output, self.context, source, self.sides)

    def review(self, expected: str, got: str) -> NoReturn:
        """Mark the check *for review* (:class:`NeedsReview`): ``got`` says why it cannot be verified here."""
        raise NeedsReview(messages.failure(self.step, self.call, expected, got))

    def no_result(
        self, outcome: outcomes.Failure, function: str, called: str, expected: str = messages.A_RESULT
    ) -> NoReturn:
        """Fail because the call ``called`` (``module.name``, shown as ``function``) ended in ``outcome``.

        An error raised in one lab file whose cause is another lab function's wrong answer says so. A stub's own
        ``NotImplementedError`` (:meth:`_LazySides.at_stub`) has no other cause: none is looked for.
        """
        got = messages.no_result(outcome, function, self.step, called)
        cause = None
        if (
            isinstance(outcome, outcomes.Raised)
            and self.source is not None
            and self.sides is not None
            and not (isinstance(self.sides, _LazySides) and self.sides.at_stub(outcome))
        ):
            try:
                cause = explain.cause_of_error(self.source, self.sides, outcome.file)
            except Exception:  # a diagnosis that breaks must never cost the check its message
                _broken()
                cause = None
        text, mistake = (cause.text, cause.mistake) if cause is not None else (None, None)
        message = messages.failure(self.step, self.call, expected, got, text)
        raise CheckFailed(message, mistake, outcome=outcome, function=called)

    def with_value(self, value: Any, *, derived: bool = True) -> Got:
        """The same call with a value derived from it (e.g. the unmasked entries); ``derived=False``: the same
        value in another form (a number as a 0-d array)."""
        source = self.source
        if source is not None and derived and not source.derived:
            source = source.deriving(self.value)
        return Got(self.step, self.call, value, self.output, self.context, source, self.sides)

    def entry(self, index: int) -> Got:
        """Entry ``index`` of a returned tuple under the same description (a probe's result beside what it
        recorded), still the call's own value for its diagnosis."""
        value = self.value[index]
        source = self.source.at(index) if self.source is not None and not self.source.derived else None
        return Got(self.step, self.call, value, self.output, self.context, source, self.sides)

    def parts(self, *names: str) -> list[Got]:
        """The entries of a returned tuple, e.g. ``output, weights = got.parts("output", "weights")``.

        A name is code (``output``) or words marked with ``N_`` (``len(cache) afterwards``),
        shown in the active language.
        """
        value = self.value
        shown = [_(name) for name in names]
        if not isinstance(value, (tuple, list)) or len(value) != len(names):
            self.fail(
                counted(messages.A_TUPLE, len(names)).format(count=len(names), names=", ".join(shown)), describe(value)
            )
        return [
            Got(
                self.step,
                f"{self.call} -> {name}",
                v,
                self.output,
                self.context,
                self.source.at(index) if self.source is not None and not self.source.derived else None,
                self.sides,
            )
            for index, (name, v) in enumerate(zip(shown, value))
        ]

    def array(self, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """The value as a numeric array (numpy or torch), of ``shape`` if given."""
        value = self.value
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
            wanted = (
                _(messages.AN_ARRAY_OF_SHAPE).format(shape=messages.shape(shape)) if shape else _(messages.AN_ARRAY)
            )
            self.fail(wanted, describe(value))
        if shape is not None and value.shape != tuple(shape):
            self.fail(
                _(messages.AN_ARRAY_OF_SHAPE).format(shape=messages.shape(shape)),
                _(messages.OF_SHAPE).format(shape=messages.shape(value)),
            )
        return value

    def number(self) -> float:
        """The value as a real number (Python or numpy scalar, or a 0-d array)."""
        value = self.value
        if isinstance(value, np.generic):
            value = np.asarray(value)
        if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
            return float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e308:
            return float(value)
        self.fail(_(messages.A_NUMBER), describe(value))


def with_inputs(call: str, inputs: str, *, random: bool = False) -> str:
    """How a call whose inputs are written as code is described, in the active language.

    ``with_inputs("attention(Q, K, V)", "Q (2, 4), K (5, 4)")`` is ``attention(Q, K, V) with Q (2, 4), K (5, 4)``;
    ``random`` says the inputs are drawn at random (hidden checks).
    """
    return _(WITH_RANDOM if random else WITH_INPUTS).format(call=call, inputs=inputs)


def as_number(got: Got) -> Got:
    """The value as a 0-d float array, for ``expect_close``; numpy scalars count as numbers."""
    value = np.asarray(got.value) if isinstance(got.value, np.generic) else got.value
    return got.with_value(np.asarray(got.with_value(value, derived=False).number()), derived=False)


# Counts (parameters, bytes, FLOPs) are integers: exact to the unit.
COUNT = dict(rtol=0.0, atol=0.5)


def describe(value: Any) -> str:
    """How a returned value is named in a message when its kind is wrong."""
    if isinstance(value, np.ndarray):
        return _(messages.ARRAY_OF_DTYPE).format(dtype=value.dtype, shape=messages.shape(value))
    if isinstance(value, Unsupported):
        return _(messages.AN_OBJECT).format(type=value.type_name)
    if isinstance(value, (tuple, list)):
        return counted(messages.A_SEQUENCE, len(value)).format(type=type(value).__name__, count=len(value))
    if value is None:
        return "None"
    return f"{type(value).__name__} {messages.short(value)}"


class _LazySides:
    """The step's diagnosis sides, made only when a check fails (an honest submission never starts them)."""

    def __init__(self, lab: Lab) -> None:
        self._lab = lab

    def at_stub(self, raised: outcomes.Raised) -> bool:
        """Whether ``raised`` is a ``NotImplementedError`` from a stub's own raise, as the grader reads the line the
        child named in its copy of the hand-in (:func:`autograder.handin.pristine.raised_at_stub`). Only which
        words a failed check carries depends on it (the call failed either way), never a point."""
        return raised.raised_as("NotImplementedError") and pristine.raised_at_stub(
            self._lab.sandbox.submission, raised.file, raised.line
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lab.sides, name)


def close(sandbox: Sandbox) -> None:
    """Close a step's sandbox and the diagnosis child it may have (the engine, when the step is done)."""
    diagnosis_sides.close(sandbox)


class Lab:
    """The submission's modules for one step, reached through a sandbox.

    ``trusted`` gives the grade's trusted side (:mod:`autograder.judge.oracle`) when the grade has the reference; a
    failed check's diagnosis then also traces and replays (:mod:`autograder.judge.diagnose.trace`).
    """

    def __init__(self, sandbox: Sandbox, step: Step, trusted: Callable[[], Any] | None = None) -> None:
        self.sandbox, self.step, self.trusted = sandbox, step, trusted

    @property
    def sides(self) -> explain.Sides:
        """Where this step's diagnoses run (made on the first failed check)."""
        return diagnosis_sides.of(self.sandbox, self.trusted)

    def _got(self, text: str, outcome: outcomes.Returned, source: explain.Source, context: dict) -> Got:
        return Got(self.step, text, outcome.value, outcome.output, context, source, _LazySides(self))

    def _split(self, function: str) -> tuple[str, str]:
        module, _dot, name = function.rpartition(".")
        return module or self.step.module, name

    def call(self, function: str, *args: Any, text: str, **kwargs: Any) -> Got:
        """Call ``function`` (``"name"`` in this step's module, or ``"module.name"``).

        ``text`` describes the call and its inputs for messages, e.g.
        ``"softmax(x) with the worked example's scaled scores"``.
        """
        module, name = self._split(function)
        source = explain.Source("call", module, name, args, kwargs)
        outcome = self.sandbox.run_call(module, name, *args, **kwargs)
        if not isinstance(outcome, outcomes.Returned):
            failed = Got(self.step, text, None, source=source, sides=_LazySides(self))
            failed.no_result(outcome, name, f"{module}.{name}")
        return self._got(text, outcome, source, call_context.of(f"{module}.{name}", args, kwargs))

    def probe(self, name: str, *args: Any, text: str, module: str | None = None) -> Got:
        """Run the child-side probe ``name`` (see :mod:`autograder.sandbox.probes`); a reply of another shape than
        the probe declares (:data:`~autograder.sandbox.probes.REPLIES`) costs the check as one the grader cannot
        read."""
        source = explain.Source("probe", module or self.step.module, name, args)
        outcome = self.sandbox.run_probe(name, module or self.step.module, *args)
        if isinstance(outcome, outcomes.Returned) and not REPLIES.get(name, replies.anything)(outcome.value):
            outcome = outcomes.Malformed(_(FORGED).format(name=name), outcome.output)
        if not isinstance(outcome, outcomes.Returned):
            failed = Got(self.step, text, None, source=source, sides=_LazySides(self))
            failed.no_result(outcome, _(IT), f"probe.{name}")
        return self._got(text, outcome, source, {})

    def raises(
        self,
        function: str,
        *args: Any,
        text: str,
        error: str = "ValueError",
        keywords: Iterable[str],
        problem: str,
        **kwargs: Any,
    ) -> None:
        """Expect ``function(*args)`` to raise ``error`` (or a subclass of it) with a message naming ``problem``.

        The message must contain one of ``keywords`` (case-insensitive).
        """
        module, name = self._split(function)
        expected = _(NAMING_THE_PROBLEM).format(error=error, problem=_(problem))
        got = Got(self.step, text, None)  # no diagnosis: the call is expected to raise
        outcome = self.sandbox.run_call(module, name, *args, **kwargs)
        if isinstance(outcome, outcomes.Returned):
            got.fail(expected, _(NO_ERROR).format(value=describe(outcome.value)))
        if not isinstance(outcome, outcomes.Raised) or not outcome.raised_as(error):
            got.no_result(outcome, name, f"{module}.{name}", expected)
        if not any(k.lower() in outcome.message.lower() for k in keywords):
            got.fail(expected, _(UNNAMED_PROBLEM).format(error=f"{outcome.type_name}: {outcome.message}"))


def expect_close(
    got: Got,
    expected: Any,
    *,
    wrong: Mapping[str, Any] | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
    axes: tuple[str, ...] = (),
    ticks: tuple[tuple[str, ...], ...] = (),
    exhibit: str = "",
) -> np.ndarray:
    """Expect an array equal to ``expected`` within tolerance; diagnose against ``wrong``.

    ``axes`` name the array's axes and ``ticks`` label their entries for the
    report's heatmaps (English; translated here); ``exhibit`` names a value the
    report shows even when the check passes (see :mod:`autograder.judge.evidence`).
    A value of another shape is diagnosed too: some mistakes change the shape
    (a square mask where the queries are fewer than the keys).
    """
    expected = np.asarray(expected, dtype=float)
    value = got.value
    if isinstance(value, np.ndarray) and value.shape != expected.shape:
        found = got.explain(value, wrong)
        got.fail(
            _(messages.AN_ARRAY_OF_SHAPE).format(shape=messages.shape(expected)),
            _(messages.OF_SHAPE).format(shape=messages.shape(value)),
            relation=relations.shape_relation(value.shape, expected.shape),
            diagnosis=found,
        )
    array = got.array(expected.shape).astype(float)
    same_inf = np.array_equal(np.isinf(array), np.isinf(expected)) and np.array_equal(
        np.sign(array[np.isinf(array)]), np.sign(expected[np.isinf(expected)])
    )
    finite = np.isfinite(expected)
    close = same_inf and np.allclose(array[finite], expected[finite], rtol=rtol, atol=atol)
    passed = bool(close and not np.isnan(array).any())
    evidence = comparison(got, expected, array, axes, ticks, exhibit, passed)
    if passed:
        if exhibit and evidence is not None:
            RECORDER.record(evidence)
        return array
    found, relation = diagnosis(got, array, expected, wrong)
    got.fail(
        messages.short(expected),
        messages.short(array) + messages.worst_entry(array, expected, rtol=rtol, atol=atol),
        evidence=evidence,
        relation=relation,
        diagnosis=found,
    )


def diagnosis(
    got: Got, array: np.ndarray, expected: np.ndarray, wrong: Mapping[str, Any] | None
) -> tuple[explain.Diagnosis | None, relations.Relation | None]:
    """What a failed array check says about its cause: how the array relates to the expected one (always, when a
    relation holds), and the mistake the grader proved (see :meth:`Got.explain`), if any.

    A relation never names a mistake by itself: half-precision-sized errors are named only when the student's own
    computation is seen to run in half precision.
    """
    return got.explain(array, wrong), relations.relate(array, expected, got.context)


def expect_case(got: Got, case: str, part: int | None = None, **options: Any) -> np.ndarray:
    """Expect the reference's answer to the public case ``case`` (``part`` of a returned tuple), naming its mistakes."""
    return expect_close(got, cases.expected(case, part), wrong=cases.wrong(case, part), **options)


def comparison(
    got: Got,
    expected: np.ndarray,
    array: np.ndarray,
    axes: tuple[str, ...],
    ticks: tuple[tuple[str, ...], ...],
    exhibit: str,
    passed: bool,
) -> Evidence | None:
    """The arrays of one comparison for the report's pictures, when they are small enough to draw."""
    if not keepable(expected, array):
        return None
    return Evidence(
        call=_(got.call),
        expected=expected.copy(),
        got=array.copy(),
        axes=tuple(_(a) for a in axes),
        ticks=ticks,
        exhibit=exhibit,
        passed=passed,
    )


def expect_that(
    got: Got,
    holds: bool,
    expected: str,
    got_text: str,
    *,
    value: Any = None,
    wrong: Mapping[str, Any] | None = None,
    mistake: str | None = None,
) -> None:
    """Expect a property; when it fails, diagnose ``value`` against ``wrong``.

    ``mistake`` names the mistake the property's failure is by itself (x changed by a function that must
    leave it alone); a matching wrong answer names a more precise one first.
    """
    if holds:
        return
    found = got.explain(np.asarray(value), wrong) if value is not None else got.explain(got.value, None)
    if found is not None and found.mistake is not None:
        got.fail(expected, got_text, diagnosis=found)
    got.fail(expected, got_text, mistake or _flagged(value, wrong))


def _flagged(value: Any, wrong: Mapping[str, Any] | None) -> str | None:
    """The mistake a failed property is by itself when its wrong answer is a flag the check established (``True``:
    the cache was not used), not a number that could agree by chance."""
    flag = np.asarray(value) if value is not None else None
    if flag is None or flag.dtype != bool or flag.shape != () or not wrong or len(wrong) != 1:
        return None
    ((key, answer),) = wrong.items()
    answer = np.asarray(answer)
    return key if answer.dtype == bool and answer.shape == () and bool(answer) == bool(flag) else None


def rounding_limit(scale: float = 1.0) -> float:
    """The most rounding noise a correct result may carry, for values of size ``scale``.

    Public code often computes in float32 whatever dtype it returns (GPU habits,
    cached float32 tables), so a quantity that is 0 in exact arithmetic is
    judged by what float32 achieves, never by the dtype that came back.
    """
    return FLOAT32_NOISE * max(float(scale), 1.0)


def expect_rounding(
    got: Got,
    size: float,
    what: str,
    *,
    scale: float = 1.0,
    exact: str = "",
    value: Any = None,
    wrong: Mapping[str, Any] | None = None,
) -> None:
    """Expect ``size`` (a quantity that is 0 in exact arithmetic, e.g. a gap) to be rounding noise.

    ``what`` names the quantity (English marked with ``N_``, or already
    translated); ``scale`` is the size of the values it was computed from (see
    :func:`rounding_limit`); ``exact`` may cite what float64 gives (the
    chapter's figure), for the message, in the active language.
    """
    limit = rounding_limit(scale)
    expect_that(
        got,
        bool(np.isfinite(size) and abs(size) <= limit),
        _(ROUNDING_ONLY).format(what=_(what), limit=f"{limit:.2g}", exact=exact),
        f"{size:.6g}",
        value=np.asarray(size) if value is None else value,
        wrong=wrong,
    )
