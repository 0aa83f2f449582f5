"""What failed, grouped the way a student reads it; every renderer (terminal, HTML, notebook) shows these groups.

Within a step, the checks whose call raised ``NotImplementedError`` become one
line naming the functions still to write (read from
:attr:`CheckResult.call_failure`, never from a message). The other failed
checks are grouped by cause: the same recognised mistake, or the very same
message, is one entry with the number of checks it cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.report.model import CheckResult, StepResult


@dataclass(frozen=True)
class Failure:
    """One entry of a step's failures: the first check of a group, and how many checks the group holds."""

    check: CheckResult
    count: int  # checks with this cause (1 when it is the only one)
    points: float  # the points they cost together


@dataclass(frozen=True)
class StepFailures:
    """A step's failures: the functions not written yet, then the other failures by cause."""

    result: StepResult
    not_implemented: tuple[str, ...]  # functions that raised NotImplementedError, in the order met
    failures: tuple[Failure, ...]

    @property
    def empty(self) -> bool:
        return not self.not_implemented and not self.failures


def _cause(check: CheckResult) -> tuple[str, str]:
    return ("mistake", check.mistake) if check.mistake else ("message", check.message)


def of_step(result: StepResult) -> StepFailures:
    """Group the failed checks of one step."""
    functions: list[str] = []
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for check in result.failed:
        failure = check.call_failure
        if failure is not None and failure.not_implemented:
            if failure.function not in functions:
                functions.append(failure.function)
            continue
        groups.setdefault(_cause(check), []).append(check)
    entries = tuple(Failure(group[0], len(group), sum(c.points for c in group)) for group in groups.values())
    return StepFailures(result, tuple(functions), entries)


def of_report(steps: tuple[StepResult, ...]) -> tuple[StepFailures, ...]:
    """The failures of every step that has some, in step order."""
    grouped = (of_step(result) for result in steps)
    return tuple(group for group in grouped if not group.empty)
