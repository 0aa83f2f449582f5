"""What failed, grouped the way a student reads it; every renderer (terminal, HTML, notebook) shows these groups.

Within a step that lost points, the functions still to write become one line:
those whose stub error is still in the step's module (:attr:`StepResult.stubbed`,
read from the text by :mod:`autograder.handin.pristine`: a function no check reaches
while its caller raises first is named too), then any other function whose call
raised ``NotImplementedError`` (read from :attr:`CheckResult.call_failure`,
never from a message). The checks a
grader marked :attr:`CheckResult.not_started` (no report yet, no answer yet)
one line with the grader's words. The other failed checks are grouped by
cause: the same recognised mistake, or the very same message, is one entry
with the number of checks it cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.grading.model import CheckResult, StepResult


@dataclass(frozen=True)
class Failure:
    """One entry of a step's failures: the first check of a group, and how many checks the group holds."""

    check: CheckResult
    count: int  # checks with this cause (1 when it is the only one)
    points: float  # the points they cost together
    checks: tuple[CheckResult, ...] = ()  # every check of the group, the first one first


@dataclass(frozen=True)
class StepFailures:
    """A step's failures: the functions not written yet, then the other failures by cause."""

    result: StepResult
    not_implemented: tuple[str, ...]  # functions still stubbed (file order), then others that raised it (order met)
    failures: tuple[Failure, ...]
    not_started: tuple[str, ...] = ()  # the graders' words for work not there yet, each once
    for_review: tuple[CheckResult, ...] = ()  # checks awaiting a person's review (0 points until confirmed)

    @property
    def empty(self) -> bool:
        return not self.not_implemented and not self.failures and not self.not_started and not self.for_review

    @property
    def to_start(self) -> bool:
        """Whether some of the step is not written yet (functions or other work)."""
        return bool(self.not_implemented or self.not_started)


def is_to_start(check: CheckResult) -> bool:
    """Whether a failed check failed only because the work is not there yet."""
    return bool(check.not_started) or (check.call_failure is not None and check.call_failure.not_implemented)


def _cause(check: CheckResult) -> tuple[str, str]:
    return ("mistake", check.mistake) if check.mistake else ("message", check.message)


def of_step(result: StepResult) -> StepFailures:
    """Group the failed checks of one step."""
    functions: list[str] = list(result.stubbed) if result.failed else []
    waiting: list[str] = []
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for check in result.failed:
        if check.review:
            continue
        failure = check.call_failure
        if failure is not None and failure.not_implemented:
            if failure.function not in functions:
                functions.append(failure.function)
        elif check.not_started:
            if check.not_started not in waiting:
                waiting.append(check.not_started)
        else:
            groups.setdefault(_cause(check), []).append(check)
    # while any of the step's own functions (the contract's, and their methods) is still to write, only those are
    # named: a helper (a private one, a timer, another step's function its checks reach) once they are written
    contract = [name for name in functions if name.partition(".")[0] in result.step.functions]
    entries = tuple(
        Failure(group[0], len(group), sum(c.points for c in group), tuple(group)) for group in groups.values()
    )
    return StepFailures(result, tuple(contract or functions), entries, tuple(waiting), result.for_review)


def of_report(steps: tuple[StepResult, ...]) -> tuple[StepFailures, ...]:
    """The failures of every step that has some, in step order."""
    grouped = (of_step(result) for result in steps)
    return tuple(group for group in grouped if not group.empty)
