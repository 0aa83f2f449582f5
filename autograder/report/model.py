"""The grading result as plain dataclasses; scores are computed, never stored twice."""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder.tasks import Step


@dataclass(frozen=True)
class CallFailure:
    """Why a check got no value from student code, in plain fields for renderers (e.g. grouping by function).

    ``kind`` is the outcome's kind (``"raised"``, ``"timed_out"``, ``"crashed"``, ``"skipped"``, ...; see
    :data:`autograder.sandbox.outcome.KINDS`); for an exception (also one raised while importing) its type
    and class hierarchy by name.
    """

    kind: str
    function: str  # "module.name" of the call, or "probe.name"
    exception_type: str | None = None
    exception_mro: tuple[str, ...] = ()


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
    call_failure: CallFailure | None = None  # the check failed because a call into student code gave no value

    @property
    def earned(self) -> float:
        return self.points if self.passed else 0.0


@dataclass(frozen=True)
class StepResult:
    step: Step
    checks: tuple[CheckResult, ...]

    @property
    def earned(self) -> float:
        return sum(c.earned for c in self.checks)

    @property
    def possible(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if not c.passed)


@dataclass(frozen=True)
class GradeReport:
    submission: str
    steps: tuple[StepResult, ...]
    public_only: bool
    seed: int | None  # the seed of the hidden inputs; None when no hidden checks ran
    notes: tuple[str, ...] = ()
    seconds: float = field(default=0.0, compare=False)  # the only timing field
    isolation: str = "unknown"  # the sandbox layer student code ran in: "namespaces", "user" or "hook"

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
