"""The one template of every message a student reads about a failed check.

A message names the step, the call and its inputs, says what was expected and
what came back, adds the likely mistake when one was recognised, and points
to the handout section. Tests import these constants rather than copying text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from autograder.base import safefs, tasks
from autograder.base.tasks import Step, handout_link
from autograder.handin import intake
from autograder.i18n import N_, Nn_, _, counted, language
from autograder.sandbox import outcome as outcomes

# The English source of each template; ``_()`` looks up the active language's text where it is filled.
FAILURE = N_(
    "{step}: {call}: expected {expected}, got {got}.{diagnosis} See the handout, section '{title}' ({handout})."
)
DIAGNOSIS = N_(" Likely mistake: {text}.")
RELATION = N_(" How it differs: {text}.")  # a relation the grader found between the answer and the expected one
OUTPUT_NOTE = N_(" Your code printed: {output}")
ARRAY = N_("array of shape {shape} {values}")
NOT_IMPLEMENTED = N_("{functions}: not implemented yet — handout section '{title}' ({handout})")
# What a check expected when a value came back in the wrong form, and how that value is named.
A_TUPLE = Nn_("a tuple of {count} ({names})", "a tuple of {count} ({names})")
AN_ARRAY, AN_ARRAY_OF_SHAPE, OF_SHAPE = N_("an array"), N_("an array of shape {shape}"), N_("shape {shape}")
A_NUMBER = N_("a number")
ARRAY_OF_DTYPE = N_("an array of dtype {dtype} and shape {shape}")
AN_OBJECT = N_("an object of type {type}")
A_SEQUENCE = Nn_("a {type} of {count} item", "a {type} of {count} items")
AT_ENTRY = N_("{value} at {where}")  # one entry of an array: "0.25 at [1, 2, 4]"
MAX_VALUE_CHARS = 160
# numpy 2 writes a scalar as np.int64(5) inside a tuple or list; its 1.25 print mode writes 5, as people do.
PLAIN_PRINT = {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}


def failure(
    step: Step, call: str, expected: str, got: str, diagnosis: str | None = None, relation: str | None = None
) -> str:
    """Fill the template; ``diagnosis`` is a mistake's sentence, if one was recognised, and ``relation`` says
    how the answer relates to the expected one (already in the active language), if the grader found out.

    The template, the step's title and the texts of ``call``, ``expected``,
    ``got`` and ``diagnosis`` are each looked up in the active language's
    catalog (a text already translated, or one with values filled in, has no
    entry and stays as it is).
    """
    return _(FAILURE).format(
        step=_(step.title),
        call=_(call),
        expected=_(expected),
        got=_(got),
        diagnosis=(_(RELATION).format(text=relation) if relation else "")
        + (_(DIAGNOSIS).format(text=_(diagnosis)) if diagnosis else ""),
        title=_(step.title),
        handout=handout(step),
    )


def handout(step: Step) -> str:
    """The step's section in the handout of the active language."""
    return handout_link(step, language())


def not_implemented(step: Step, functions: list[str]) -> str:
    """One line for the functions of ``step`` that still raise ``NotImplementedError``."""
    return _(NOT_IMPLEMENTED).format(functions=", ".join(functions), title=_(step.title), handout=handout(step))


def plain(value: Any) -> Any:
    """``value`` with every numpy scalar made a Python number, inside tuples, lists and dicts too."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def shape(value: Any) -> str:
    """A shape as people write it: ``(1, 5)``, never ``(np.int64(1), np.int64(5))``."""
    dims = tuple(int(d) for d in (value.shape if hasattr(value, "shape") else value))
    return str(dims)


@contextmanager
def plain_numbers() -> Iterator[None]:
    """Within the block, numpy scalars print as plain numbers everywhere (``f"{shape}"`` included)."""
    with np.printoptions(**PLAIN_PRINT):
        yield


def entry(value: float) -> str:
    """One array entry as the chapter writes it: four decimals (0.0759), or powers of ten when far from 1."""
    if not np.isfinite(value):
        return "nan" if np.isnan(value) else "inf" if value > 0 else "-inf"
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value + 0.0:.4f}"
    return f"{value:.3e}"


def entries(array: Any) -> str:
    """An array's entries on one line, as the chapter prints them: ``[[0.6961, 0.1791], ...]``, ``[nan, 0.0000]``."""
    with plain_numbers():
        body = np.array2string(
            np.asarray(array),
            precision=4,
            threshold=12,
            edgeitems=2,
            separator=", ",
            max_line_width=10_000,
            formatter={"float_kind": entry},  # 0.1750, as the chapter prints it; not numpy's padded "0.175 "
        )
    text = " ".join(body.split())
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def short(value: Any) -> str:
    """A one-line, bounded rendering of a value for a message."""
    value = plain(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return short(value.item())
        text = _(ARRAY).format(shape=shape(value), values=entries(value))
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


WORST = N_(" (largest difference at [{where}]: expected {expected}, got {got})")
PRECISION_NOTE = N_(
    " (largest difference {size} at [{where}], below the printed digits: {expected} either way; "
    "this check is about precision and allows a difference of {allowed})"
)


def worst_entry(got: np.ndarray, expected: np.ndarray, *, rtol: float = 0.0, atol: float = 0.0) -> str:
    """Where two same-shape arrays differ most, e.g. ' (largest difference at [0, 1]: expected 0.27, got 0.31)'.

    When the two entries print the same at six digits the message would show no
    difference at all, so it gives the size of the difference instead and says
    that the check is about precision, with what it allows (``atol + rtol * |expected|``).
    """
    got, expected = got.astype(float), expected.astype(float)
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - expected)
    if diff.size == 0 or diff.ndim == 0:
        return ""
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))  # -inf where -inf is expected is no difference
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    if not np.any(diff):
        return ""
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    where = ", ".join(str(int(i)) for i in index)
    wanted, value = float(expected[index]), float(got[index])
    if np.isfinite(diff[index]) and f"{wanted:.6g}" == f"{value:.6g}":
        allowed = f"{atol:g} + {rtol:g} x |expected|" if rtol else f"{atol:g}"
        return _(PRECISION_NOTE).format(
            size=f"{float(diff[index]):.2g}", where=where, expected=f"{wanted:.6g}", allowed=allowed
        )
    return _(WORST).format(where=where, expected=f"{wanted:.6g}", got=f"{value:.6g}")


# -- diagnoses that follow the student's computation (autograder.judge.diagnose.trace) ------------------------------
# Where the two computations part, and how (the reference, changed in just that way, gives the student's numbers
# on the check's input and on its twin). {where} is a place in the student's file, {how} one of the TRACE_* below.
TRACE_AT = N_("your computation parts from the reference's at {where}: {how}")
TRACE_PLACE = N_("line {line} of {file}")
TRACE_AXIS = N_("{op} runs over axis {student} where the reference takes axis {reference}")
TRACE_PARAM = N_("{op} is called with {name} = {student} where the reference uses {name} = {reference}")
TRACE_CONSTANT = N_("{op} uses the number {student} where the reference uses {reference}")
TRACE_ARGUMENTS = N_("{op} is called with other arguments than the reference's")
TRACE_OPERAND = N_("{op} takes {student} where the reference takes {reference}")
TRACE_MISSING = N_("the reference applies {op} to {operand} here, and your code goes on with {operand} as it is")
TRACE_MISSING_WITH = N_(
    "the reference applies {op} with {other} to {operand} here, and your code goes on with {operand} as it is"
)
TRACE_EXTRA = N_("your code applies {op} here, which the reference does not")
TRACE_RETURNS = N_("your code returns {reference}, a value the reference computes on the way but does not return")
TRACE_OTHER = N_(
    "this value is computed otherwise than by the reference's {op}; every value before it agrees with the "
    "reference's, and from it on your code does what the reference does"
)
TRACE_DTYPE = N_("this value is computed in {dtype}, which rounds it; the reference keeps float32 or float64")
TRACE_MORE = Nn_("; and {count} more difference after it", "; and {count} more differences after it")
TRACE_AGAIN = Nn_("; and the same in {count} more place", "; and the same in {count} more places")
TRACE_INPUT = N_("the input {name}")
TRACE_VALUE_AT = N_("the value of line {line}")
TRACE_RESULT_OF = N_("what {function} returned on line {line}")
TRACE_VALUE = N_("another value")
# A lab function of another step is wrong inside this call (upstream first).
UPSTREAM = N_(
    "your {function} ({file}, step {number}: '{title}') gives other values than the reference for the inputs "
    "this call passes it; fix step {number} first"
)
UPSTREAM_THERE = N_("{upstream} (the likely mistake there: {mistake})")
UPSTREAM_AND_OWN = N_("{upstream}. Even with a correct {function}: {own}")
UPSTREAM_SHAPE = N_("{function} ({file}) returned an array of shape {got} where the reference returns {expected}")
UPSTREAM_DTYPE = N_("{function} ({file}) returned {got} where the reference returns {expected} for the same inputs")
RAISED_LATER = N_("{cause}; the error was raised later, in {raised}")
# When the grader cannot follow the computation, it says so rather than guess.
UNFOLLOWED = N_("the grader could not follow your computation step by step ({why}), so it names no cause")
WHY_TRUNCATED = N_("it is too long to follow")
WHY_UNTRACED = N_("part of it is a Python loop over single numbers or another library's code")


# -- how a call into student code ended (the only place an outcome becomes words) ------------
NO_RESULT = N_("no result: {what}")
A_RESULT = N_("a result")
RAISED = N_("raised {error}")
RAISED_AT = N_("raised {error} ({file}, line {line})")
RAISED_ELSEWHERE = N_("the error is in {file} (step '{title}'), line {line}: {function} raised {error}")
IMPORT_FAILED = N_("could not run because importing {module}.py {cause}")
TIMED_OUT = N_("did not return within {seconds} s")
TIMED_OUT_IN = N_("did not return within {seconds} s (it was still running {where})")
HUNG_EARLIER = N_("did not return within {seconds} s earlier in grading, so it was not called again")
HUNG_EARLIER_INSIDE = N_("stopped at once: it calls {hung}, which did not return within {seconds} s earlier in grading")
HUNG_IMPORT_EARLIER = N_("stopped at once: importing {module}.py did not finish within {seconds} s earlier in grading")
AT_IMPORT = N_("{module}.py (at import)")
BUDGET_SPENT = N_("was not called: this step's calls already took {seconds} s, its time budget")
FAILED_COSTLY = N_(
    "was not called again: its failed calls earlier in grading took {seconds} s in all, as long as a call that "
    "does not return"
)
FAILED_COSTLY_INSIDE = N_(
    "stopped at once: it calls {function}, whose failed calls earlier in grading took {seconds} s in all, as long "
    "as a call that does not return"
)
FAILED_COSTLY_IMPORT = N_(
    "stopped at once: importing {module}.py failed earlier in grading, and those imports took {seconds} s in all, "
    "as long as a call that does not return"
)
KILLED_BY_SIGNAL = N_("ended the grading process with signal {signal} ({meaning})")
EXITED = N_("ended the grading process with exit code {code} (os._exit or a crash in native code)")
REFUSED = N_("tried something the grading sandbox does not allow ({reason})")
UNISOLATED = N_("could not run: the grading sandbox could not isolate it on this machine ({reason})")
TOO_LARGE = N_("returned more data than the grader accepts ({limit} MiB)")
TOO_MUCH_OUTPUT = Nn_(
    "printed {count} character, more than the grader accepts in one call ({limit})",
    "printed {count} characters, more than the grader accepts in one call ({limit})",
)
MALFORMED = N_("your code returned something the grader cannot read ({detail})")
NOT_TAKEN_IN = N_(
    "could not run: {file} in your hand-in is {what}, and the grader takes in only regular files and folders "
    "(links are not followed); hand in the file itself"
)
NOT_TAKEN_IN_UNREADABLE = N_(
    "could not run: the grader may not read {file} in your hand-in (its permissions deny reading it); hand it in "
    "again readable"
)
WROTE_TOO_MUCH = N_("wrote more than {limit} MiB into its working folder and temporary folders, and was stopped")
SIGNAL_MEANINGS = {
    "SIGSEGV": N_("segmentation fault"),
    "SIGXCPU": N_("CPU time limit exceeded"),
    "SIGKILL": N_("killed, often for using too much memory"),
    "SIGABRT": N_("aborted"),
    "SIGBUS": N_("bus error"),
    "SIGFPE": N_("arithmetic fault"),
}
A_SIGNAL = N_("signal")


def call_outcome(outcome: outcomes.Failure, function: str, step: Step | None = None, called: str | None = None) -> str:
    """What happened to the call ``function`` (e.g. ``"softmax"``, or ``"it"`` for a probe), as a clause.

    ``called`` is the function's ``module.name`` (to tell whether a hang was in
    the function itself or in one it calls). When the error was raised in
    another step's module (grading ``mask``, the error comes from
    ``scaling.py``), that module and its step come first.
    """
    if isinstance(outcome, outcomes.Malformed):
        return _(MALFORMED).format(detail=outcome.detail)
    cause = outcomes.root_cause(outcome)
    if isinstance(cause, outcomes.NotTakenIn):  # the file was never there to import: say so first
        return f"{function} {_predicate(cause, called or function)}"
    if isinstance(outcome, outcomes.Raised):
        elsewhere = _other_step(outcome.file, step)
        if elsewhere is not None:
            return _(RAISED_ELSEWHERE).format(
                file=outcome.file, title=_(elsewhere.title), line=outcome.line, function=function, error=_error(outcome)
            )
    return f"{function} {_predicate(outcome, called or function)}"


def no_result(outcome: outcomes.Failure, function: str, step: Step | None = None, called: str | None = None) -> str:
    """The ``got`` part of a failed check whose call produced no value."""
    return _(NO_RESULT).format(what=call_outcome(outcome, function, step, called))


def _predicate(outcome: outcomes.Failure, function: str) -> str:
    """The verb phrase of :func:`call_outcome` (its subject is the function)."""
    if isinstance(outcome, outcomes.Raised):
        if outcome.file and outcome.line:
            return _(RAISED_AT).format(error=_error(outcome), file=outcome.file, line=outcome.line)
        return _(RAISED).format(error=_error(outcome))
    if isinstance(outcome, outcomes.ImportFailed):
        return _(IMPORT_FAILED).format(module=outcome.module, cause=_predicate(outcome.cause, function))
    if isinstance(outcome, outcomes.TimedOut):
        seconds = f"{outcome.seconds:g}"
        if outcome.function and not _same_function(outcome.function, function):
            where = _place(outcome.function) + (f", line {outcome.line}" if outcome.line else "")
            return _(TIMED_OUT_IN).format(seconds=seconds, where=where)
        return _(TIMED_OUT).format(seconds=seconds)
    if isinstance(outcome, outcomes.Skipped):
        seconds = f"{outcome.seconds or 0:g}"
        if outcome.reason == outcomes.BUDGET_SPENT:
            return _(BUDGET_SPENT).format(seconds=seconds)
        if outcome.reason == outcomes.FAILED_COSTLY:
            return _costly(outcome.function or function, function, seconds)
        if outcome.function and outcome.function.endswith(".<module>"):
            return _(HUNG_IMPORT_EARLIER).format(module=outcome.function.rpartition(".")[0], seconds=seconds)
        if outcome.function and not _same_function(outcome.function, function):
            return _(HUNG_EARLIER_INSIDE).format(hung=outcome.function, seconds=seconds)
        return _(HUNG_EARLIER).format(seconds=seconds)
    if isinstance(outcome, outcomes.Crashed):
        meaning = _(SIGNAL_MEANINGS.get(outcome.signal_name, A_SIGNAL))
        return _(KILLED_BY_SIGNAL).format(signal=outcome.signal_name, meaning=meaning)
    if isinstance(outcome, outcomes.Exited):
        return _(EXITED).format(code=outcome.code)
    if isinstance(outcome, outcomes.Refused):
        return _(UNISOLATED if outcome.isolation else REFUSED).format(reason=outcome.reason)
    if isinstance(outcome, outcomes.TooLarge):
        return _(TOO_LARGE).format(limit=f"{outcome.limit_bytes / (1 << 20):g}")
    if isinstance(outcome, outcomes.TooMuchOutput):
        return counted(TOO_MUCH_OUTPUT, outcome.chars).format(count=outcome.chars, limit=outcome.limit_chars)
    if isinstance(outcome, outcomes.NotTakenIn) and outcome.what == safefs.UNREADABLE:
        return _(NOT_TAKEN_IN_UNREADABLE).format(file=outcome.file)
    if isinstance(outcome, outcomes.NotTakenIn):
        return _(NOT_TAKEN_IN).format(file=outcome.file, what=_(LEFT_OUT_KINDS.get(outcome.what, LEFT_OUT_OTHER)))
    if isinstance(outcome, outcomes.WroteTooMuch):
        return _(WROTE_TOO_MUCH).format(limit=f"{outcome.limit_bytes / (1 << 20):.0f}")
    return _(MALFORMED).format(detail=getattr(outcome, "detail", outcome.kind))


def _costly(where: str, function: str, seconds: str) -> str:
    """Why a call was not made: ``where`` (the called ``function`` itself, one it calls, or an import) failed
    earlier in grading, and those failed calls took ``seconds`` in all."""
    if where.endswith(".<module>"):
        return _(FAILED_COSTLY_IMPORT).format(module=where.rpartition(".")[0], seconds=seconds)
    if not _same_function(where, function):
        return _(FAILED_COSTLY_INSIDE).format(function=where, seconds=seconds)
    return _(FAILED_COSTLY).format(seconds=seconds)


def _place(function: str) -> str:
    """``softmax.softmax`` as it is; a hang at import (``softmax.<module>``) as ``softmax.py (at import)``."""
    module, _dot, name = function.rpartition(".")
    return _(AT_IMPORT).format(module=module) if name == "<module>" else function


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


# -- what the intake left out of a hand-in, or why it took none of it (autograder.handin.intake) ----------------------
LEFT_OUT_KINDS = {
    safefs.LINK: N_("a symbolic link"),
    safefs.FIFO: N_("a named pipe (FIFO)"),
    safefs.DEVICE: N_("a device file"),
    safefs.SOCKET: N_("a socket"),
}
LEFT_OUT_OTHER = N_("neither a regular file nor a folder")
LEFT_OUT_NOTE = N_(
    "{file} was left out of your hand-in: it is {what}, and the grader takes in only regular files and folders "
    "(links are not followed)"
)
LEFT_OUT_UNREADABLE = N_(
    "{file} was left out of your hand-in: the grader may not read it (its permissions deny reading, as a zip can "
    "store them); hand it in again readable"
)
HAND_IN_TOO_DEEP = Nn_(
    "Your hand-in was not graded: its folders are nested more than {limit} level deep ({path}). Hand in the lab "
    "folder itself.",
    "Your hand-in was not graded: its folders are nested more than {limit} deep ({path}). Hand in the lab folder "
    "itself.",
)
HAND_IN_TOO_MANY = Nn_(
    "Your hand-in was not graded: it holds more than {limit} file or folder (at {path}). Hand in the lab folder "
    "without data sets or installed packages.",
    "Your hand-in was not graded: it holds more than {limit} files and folders (at {path}). Hand in the lab folder "
    "without data sets or installed packages.",
)
HAND_IN_TOO_LARGE = N_(
    "Your hand-in was not graded: it holds more than {limit} MiB (at {path}). Hand in the lab folder without data "
    "sets or installed packages."
)
HAND_IN_UNREADABLE = N_("Your hand-in could not be read ({detail}).")


def left_out(path: str, kind: str) -> str:
    """The note of a name the intake left out (``kind``: ``"link"``, ``"fifo"``, ..., ``"unreadable"``)."""
    if kind == safefs.UNREADABLE:
        return _(LEFT_OUT_UNREADABLE).format(file=path)
    return _(LEFT_OUT_NOTE).format(file=path, what=_(LEFT_OUT_KINDS.get(kind, LEFT_OUT_OTHER)))


def hand_in_refused(refused: intake.HandInRefused) -> str:
    """Why a hand-in was not taken in at all, as one sentence (the finder's own sentence when it found no lab
    files)."""
    if refused.kind == intake.TOO_DEEP:
        return counted(HAND_IN_TOO_DEEP, refused.limit).format(limit=refused.limit, path=refused.path)
    if refused.kind == intake.TOO_MANY:
        return counted(HAND_IN_TOO_MANY, refused.limit).format(limit=refused.limit, path=refused.path)
    if refused.kind == intake.TOO_LARGE:
        return _(HAND_IN_TOO_LARGE).format(limit=f"{refused.limit / (1 << 20):g}", path=refused.path)
    if refused.kind == intake.UNREADABLE:
        return _(HAND_IN_UNREADABLE).format(detail=refused.detail)
    return refused.detail
