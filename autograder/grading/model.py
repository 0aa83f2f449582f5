"""The grading result as plain dataclasses; scores are computed, never stored twice."""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.base.tasks import Step
from autograder.handin.intake import Ignored
from autograder.judge.evidence import Evidence


@dataclass(frozen=True)
class CallFailure:
    """Why a check's call into student code produced no value, in plain fields for renderers.

    ``kind`` names the outcome (``"raised"``, ``"timed_out"``, ...), ``function``
    the function called; for a raised exception, its type and its classes' names
    (``exception_mro``), so renderers can tell a ``NotImplementedError`` apart
    without reading a message.
    """

    kind: str
    function: str
    exception_type: str | None = None
    exception_mro: tuple[str, ...] = ()

    def raised_as(self, name: str) -> bool:
        return self.kind == "raised" and name in (self.exception_type, *self.exception_mro)

    @property
    def not_implemented(self) -> bool:
        """The function is still a stub: it raised ``NotImplementedError``."""
        return self.raised_as("NotImplementedError")


@dataclass(frozen=True)
class CheckResult:
    """One check of one step."""

    step: str
    name: str  # the check's test name, e.g. test_worked_example
    title: str  # the first line of its docstring
    points: float
    passed: bool
    hidden: bool
    message: str = ""  # empty when passed
    mistake: str | None = None  # recognised mistake id
    internal_error: bool = False  # the grader itself broke (never the student's fault)
    call_failure: CallFailure | None = None  # the call produced no value: how it ended
    not_started: str = ""  # the grader's few words when the work is not there yet (no report, no answer)
    evidence: Evidence | None = None  # the arrays of a failed array check (or a passed check's exhibit)
    review: bool = False  # for review: 0 points until a person (or a grader with the device) confirms it

    @property
    def status(self) -> str:
        """``"passed"``, ``"failed"`` or ``"review"`` (not failed: awaiting confirmation, 0 points until then)."""
        return "passed" if self.passed else "review" if self.review else "failed"

    @property
    def id(self) -> str:
        """The check's stable id, the same in every language: ``step/test_name[param]``."""
        return f"{self.step}/{self.name}"

    @property
    def earned(self) -> float:
        return self.points if self.passed else 0.0


@dataclass(frozen=True)
class StepResult:
    step: Step
    checks: tuple[CheckResult, ...]
    stubbed: tuple[str, ...] = ()  # functions of the step's module that still raise the stub's error (file order)

    @property
    def earned(self) -> float:
        return sum(c.earned for c in self.checks)

    @property
    def possible(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def for_review(self) -> tuple[CheckResult, ...]:
        """The checks awaiting a person's review (0 points until confirmed)."""
        return tuple(c for c in self.checks if c.review)


@dataclass(frozen=True)
class GradeReport:
    submission: str
    steps: tuple[StepResult, ...]
    public_only: bool
    seed: int | None  # the seed of the hidden inputs; None when no hidden checks ran
    notes: tuple[str, ...] = ()
    seconds: float = field(default=0.0, compare=False)  # the only timing field
    isolation: str = "unknown"  # the sandbox layer student code ran in: "namespaces", "user" or "hook"
    ignored: tuple[Ignored, ...] = ()  # names of the hand-in the intake left out (links, FIFOs, ...), and what each is

    @property
    def earned(self) -> float:
        return sum(s.earned for s in self.steps)

    @property
    def possible(self) -> float:
        return sum(s.possible for s in self.steps)

    @property
    def internal_errors(self) -> int:
        return sum(c.internal_error for s in self.steps for c in s.checks)

    def step(self, step_id: str) -> StepResult:
        return next(s for s in self.steps if s.step.id == step_id)
