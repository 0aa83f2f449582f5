"""The one template of every message a student reads about a failed check.

A message names the step, the call and its inputs, says what was expected and
what came back, adds the likely mistake when one was recognised, and points
to the handout section. Tests import these constants rather than copying text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder import tasks
from autograder.sandbox import outcome as outcomes
from autograder.tasks import Step

FAILURE = "{step}: {call}: expected {expected}, got {got}.{diagnosis} See the handout, section '{title}' ({handout})."
DIAGNOSIS = " Likely mistake: {text}."
OUTPUT_NOTE = " Your code printed: {output}"
MAX_VALUE_CHARS = 160


def failure(step: Step, call: str, expected: str, got: str, diagnosis: str | None = None) -> str:
    """Fill the template; ``diagnosis`` is a mistake's sentence, if one was recognised."""
    return FAILURE.format(
        step=step.title,
        call=call,
        expected=expected,
        got=got,
        diagnosis=DIAGNOSIS.format(text=diagnosis) if diagnosis else "",
        title=step.title,
        handout=step.handout,
    )


def short(value: Any) -> str:
    """A one-line, bounded rendering of a value for a message."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return short(value.item())
        body = np.array2string(
            value, precision=4, threshold=12, edgeitems=2, separator=", ", max_line_width=10_000, suppress_small=False
        )
        text = f"array of shape {value.shape} {' '.join(body.split())}"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def worst_entry(got: np.ndarray, expected: np.ndarray) -> str:
    """Where two same-shape arrays differ most, e.g. ' (largest difference 0.27 at [0, 1])'."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(float) - expected.astype(float))
    if diff.size == 0 or diff.ndim == 0:
        return ""
    diff = np.where(np.isnan(diff), np.inf, diff)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    where = ", ".join(str(int(i)) for i in index)
    return f" (largest difference at [{where}]: expected {expected[index]:.6g}, got {got[index]:.6g})"


# -- how a call into student code ended (the only place an outcome becomes words) ------------
RAISED = "raised {error}"
RAISED_AT = "raised {error} ({file}, line {line})"
RAISED_ELSEWHERE = "the error is in {file} (step '{title}'), line {line}: {function} raised {error}"
IMPORT_FAILED = "could not run because importing {module}.py {cause}"
TIMED_OUT = "did not return within {seconds:g} s"
TIMED_OUT_IN = "did not return within {seconds:g} s (it was still running {where})"
HUNG_EARLIER = "did not return within {seconds:g} s earlier in grading, so it was not called again"
HUNG_EARLIER_INSIDE = "stopped at once: it calls {hung}, which did not return within {seconds:g} s earlier in grading"
HUNG_IMPORT_EARLIER = "stopped at once: importing {module}.py did not finish within {seconds:g} s earlier in grading"
BUDGET_SPENT = "was not called: this step's calls already took {seconds:g} s, its time budget"
KILLED_BY_SIGNAL = "ended the grading process with signal {signal} ({meaning})"
EXITED = "ended the grading process with exit code {code} (os._exit or a crash in native code)"
REFUSED = "tried something the grading sandbox does not allow ({reason})"
UNISOLATED = "could not run: the grading sandbox could not isolate it on this machine ({reason})"
TOO_LARGE = "returned more data than the grader accepts ({limit:g} MiB)"
TOO_MUCH_OUTPUT = "printed {count} characters, more than the grader accepts in one call ({limit})"
MALFORMED = "your code returned something the grader cannot read ({detail})"
SIGNAL_MEANINGS = {
    "SIGSEGV": "segmentation fault",
    "SIGXCPU": "CPU time limit exceeded",
    "SIGKILL": "killed, often for using too much memory",
    "SIGABRT": "aborted",
    "SIGBUS": "bus error",
    "SIGFPE": "arithmetic fault",
}


def call_outcome(outcome: outcomes.Failure, function: str, step: Step | None = None, called: str | None = None) -> str:
    """What happened to the call ``function`` (e.g. ``"softmax"``, or ``"it"`` for a probe), as a clause.

    ``called`` is the function's ``module.name`` (to tell whether a hang was in
    the function itself or in one it calls). When the error was raised in
    another step's module (grading ``mask``, the error comes from
    ``scaling.py``), that module and its step come first.
    """
    if isinstance(outcome, outcomes.Malformed):
        return MALFORMED.format(detail=outcome.detail)
    if isinstance(outcome, outcomes.Raised):
        elsewhere = _other_step(outcome.file, step)
        if elsewhere is not None:
            return RAISED_ELSEWHERE.format(
                file=outcome.file, title=elsewhere.title, line=outcome.line, function=function, error=_error(outcome)
            )
    return f"{function} {_predicate(outcome, called or function)}"


def _predicate(outcome: outcomes.Failure, function: str) -> str:
    """The verb phrase of :func:`call_outcome` (its subject is the function)."""
    if isinstance(outcome, outcomes.Raised):
        if outcome.file and outcome.line:
            return RAISED_AT.format(error=_error(outcome), file=outcome.file, line=outcome.line)
        return RAISED.format(error=_error(outcome))
    if isinstance(outcome, outcomes.ImportFailed):
        return IMPORT_FAILED.format(module=outcome.module, cause=_predicate(outcome.cause, function))
    if isinstance(outcome, outcomes.TimedOut):
        if outcome.function and not _same_function(outcome.function, function):
            where = _place(outcome.function) + (f", line {outcome.line}" if outcome.line else "")
            return TIMED_OUT_IN.format(seconds=outcome.seconds, where=where)
        return TIMED_OUT.format(seconds=outcome.seconds)
    if isinstance(outcome, outcomes.Skipped):
        if outcome.reason == outcomes.BUDGET_SPENT:
            return BUDGET_SPENT.format(seconds=outcome.seconds or 0)
        if outcome.function and outcome.function.endswith(".<module>"):
            return HUNG_IMPORT_EARLIER.format(module=outcome.function.rpartition(".")[0], seconds=outcome.seconds or 0)
        if outcome.function and not _same_function(outcome.function, function):
            return HUNG_EARLIER_INSIDE.format(hung=outcome.function, seconds=outcome.seconds or 0)
        return HUNG_EARLIER.format(seconds=outcome.seconds or 0)
    if isinstance(outcome, outcomes.Crashed):
        return KILLED_BY_SIGNAL.format(
            signal=outcome.signal_name, meaning=SIGNAL_MEANINGS.get(outcome.signal_name, "signal")
        )
    if isinstance(outcome, outcomes.Exited):
        return EXITED.format(code=outcome.code)
    if isinstance(outcome, outcomes.Refused):
        return (UNISOLATED if outcome.isolation else REFUSED).format(reason=outcome.reason)
    if isinstance(outcome, outcomes.TooLarge):
        return TOO_LARGE.format(limit=outcome.limit_bytes / (1 << 20))
    if isinstance(outcome, outcomes.TooMuchOutput):
        return TOO_MUCH_OUTPUT.format(count=outcome.chars, limit=outcome.limit_chars)
    return MALFORMED.format(detail=getattr(outcome, "detail", outcome.kind))


def _place(function: str) -> str:
    """``softmax.softmax`` as it is; a hang at import (``softmax.<module>``) as ``softmax.py (at import)``."""
    module, _, name = function.rpartition(".")
    return f"{module}.py (at import)" if name == "<module>" else function


def _error(raised: outcomes.Raised) -> str:
    return f"{raised.type_name}: {raised.message}" if raised.message else raised.type_name


def _same_function(where: str, function: str) -> bool:
    """Whether ``where`` (``module.name``) is the called ``function`` (``module.name``, or a bare name)."""
    return where == function or ("." not in function and where.rpartition(".")[2] == function)


def _other_step(file: str | None, step: Step | None) -> Step | None:
    """The step whose module is ``file``, when that is not ``step``'s own module."""
    if not file or step is None or not file.endswith(".py"):
        return None
    module = file[: -len(".py")]
    if module == step.module:
        return None
    return next((s for s in tasks.STEPS if s.module == module), None)
