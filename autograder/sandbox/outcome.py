"""How one call into student code ended: a typed outcome, never a sentence.

The sandbox returns exactly one of these for every call, import and probe;
graders decide on the type (and on ``Raised.mro``), and only
:func:`autograder.judge.messages.call_outcome` turns an outcome into words. Every text
field that came from the child (messages, names, printed output) is
control-character escaped when the outcome is built, so no renderer ever
receives a raw escape sequence.

Standard library only (a leaf): the report model, the messages and the graders
import it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from autograder.base.text import escape_controls

HUNG_EARLIER = "hung_earlier"  # Skipped: the call reaches a function that did not return earlier in grading
BUDGET_SPENT = "budget_spent"  # Skipped: the step's calls have used up its time budget
FAILED_COSTLY = "failed_costly"  # Skipped: the call reaches a function whose failed calls took as long as a hang


class _Escaped:
    """Escapes every ``str`` field (and every ``str`` in a tuple field) when the outcome is built."""

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, str):
                object.__setattr__(self, item.name, escape_controls(value))
            elif isinstance(value, tuple) and all(isinstance(v, str) for v in value):
                object.__setattr__(self, item.name, tuple(escape_controls(v) for v in value))

    @property
    def kind(self) -> str:
        """The outcome's kind as a stable identifier, e.g. ``"timed_out"`` (for reports and renderers)."""
        return KINDS[type(self)]


@dataclass(frozen=True, eq=False)
class Returned(_Escaped):
    """The call returned ``value`` (already decoded: arrays, numbers, strings, tuples, lists, dicts)."""

    value: Any
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Raised(_Escaped):
    """The call raised an exception.

    ``mro`` holds the names of the exception's class hierarchy (``("ShapeError",
    "ValueError", "Exception", "BaseException", "object")``); ``file`` and ``line``
    are the deepest frame of the traceback in the student's files (``function`` its
    function), and ``student_files`` every student file of the traceback, outermost first.
    """

    type_name: str
    mro: tuple[str, ...] = field()  # field(): a bare default would be found as type.mro
    message: str
    file: str | None = None
    line: int | None = None
    student_files: tuple[str, ...] = ()
    output: str = field(default="", repr=False)
    function: str | None = None  # the qualified name of the deepest student function, e.g. "KVCache.append"

    def raised_as(self, name: str) -> bool:
        """Whether the exception is a ``name`` (its class or a subclass of it)."""
        return name in self.mro


@dataclass(frozen=True)
class TimedOut(_Escaped):
    """The call did not return within ``seconds``; ``function`` is where it was running then, when known."""

    seconds: float
    function: str | None = None  # "module.qualified_name", e.g. "softmax.softmax"
    line: int | None = None
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Crashed(_Escaped):
    """The child process was ended by a signal (``"SIGSEGV"``, ``"SIGKILL"``, ...)."""

    signal_name: str
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Exited(_Escaped):
    """The child process exited with ``code`` during the call (``os._exit``, a crash in native code)."""

    code: int
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Refused(_Escaped):
    """The sandbox refused what the code tried (its policy), or (``isolation``) could not isolate the child at all:
    then no student code ran, and the failure is the grading machine's, not the student's."""

    reason: str
    output: str = field(default="", repr=False)
    isolation: bool = False


@dataclass(frozen=True)
class TooLarge(_Escaped):
    """The returned value is larger than the grader accepts."""

    limit_bytes: int
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class TooMuchOutput(_Escaped):
    """The call printed ``chars`` characters, more than ``limit_chars`` in one call."""

    chars: int
    limit_chars: int = 0
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Malformed(_Escaped):
    """The reply cannot be read (not a well-formed message, wrong types, too deep, a dtype no check accepts)."""

    detail: str
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class Skipped(_Escaped):
    """The call was not made: ``reason`` is :data:`HUNG_EARLIER` (``function`` hung, ``seconds``),
    :data:`FAILED_COSTLY` (``function``'s failed calls took ``seconds`` in all, as long as a hang) or
    :data:`BUDGET_SPENT` (the step's calls took ``seconds``)."""

    reason: str
    function: str | None = None
    seconds: float | None = None
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class NotTakenIn(_Escaped):
    """The file the call needs (``file``, e.g. ``softmax.py``) was left out of the hand-in by the intake: it is a
    ``what`` (``"link"``, ``"fifo"``, ``"device"``, ``"socket"``, ``"other"``), and no link is ever followed."""

    file: str
    what: str
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class WroteTooMuch(_Escaped):
    """The child wrote more than ``limit_bytes`` into its working copy (and the shared temporary folders) and was
    stopped: a working copy is bounded so that no student spends another's disk."""

    limit_bytes: int
    output: str = field(default="", repr=False)


@dataclass(frozen=True)
class ImportFailed(_Escaped):
    """Importing ``module`` (the student's ``module.py``) failed with ``cause``, so nothing in it could run."""

    module: str
    cause: Failure
    output: str = field(default="", repr=False)


Failure = (
    Raised
    | TimedOut
    | Crashed
    | Exited
    | Refused
    | TooLarge
    | TooMuchOutput
    | Malformed
    | Skipped
    | NotTakenIn
    | WroteTooMuch
    | ImportFailed
)
Outcome = Returned | Failure
KINDS: dict[type, str] = {
    Returned: "returned",
    Raised: "raised",
    TimedOut: "timed_out",
    Crashed: "crashed",
    Exited: "exited",
    Refused: "refused",
    TooLarge: "too_large",
    TooMuchOutput: "too_much_output",
    Malformed: "malformed",
    Skipped: "skipped",
    NotTakenIn: "not_taken_in",
    WroteTooMuch: "wrote_too_much",
    ImportFailed: "import_failed",
}


def root_cause(outcome: Outcome) -> Outcome:
    """The outcome behind an :class:`ImportFailed` (the import's own failure); others are their own cause."""
    while isinstance(outcome, ImportFailed):
        outcome = outcome.cause
    return outcome


class StudentCallError(Exception):
    """A call into student code that produced no value; ``outcome`` says how it ended."""

    def __init__(self, outcome: Failure) -> None:
        super().__init__(outcome.kind)
        self.outcome = outcome

    @property
    def output(self) -> str:
        """What the code printed during the call (escaped, capped)."""
        return self.outcome.output
