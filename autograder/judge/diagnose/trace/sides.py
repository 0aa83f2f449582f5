"""The two places a step's diagnoses run code: a sandbox child of their own, and the grader's trusted side.

The student's side is a *companion* of the step's sandbox: the same submission, the same isolation, a child of
its own with its own record of hangs and its own time budget. Tracing, the twin and the stand-in runs all happen
there, never in the child that grades: nothing a diagnosis does (a traced call, a value stood in) can change what a
later check sees, a slow trace never marks a function as hung for the checks, and the step's time budget is the
student's alone. The companion is closed with its step's sandbox (:func:`close`).

The trusted side is the grade's oracle (:mod:`autograder.judge.oracle`), which holds the reference; a grade without a
reference has none, and its diagnoses stop at known mistakes confirmed on the twin.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from autograder.judge.diagnose.trace.explain import Sides
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Hangs, Sandbox

CALL_TIMEOUT_FACTOR = 3.0  # a traced call does more work than the plain one
COMPANION_BUDGET_S = 60.0  # the companion's own wall budget (the diagnoses' budget is smaller, see explain)
_SIDES: weakref.WeakKeyDictionary[Sandbox, Sides] = weakref.WeakKeyDictionary()


class _Student:
    """The companion sandbox as :class:`explain.Side`; started on first use."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.origin = sandbox
        self.companion: Sandbox | None = None

    def _box(self) -> Sandbox:
        if self.companion is None:
            origin = self.origin
            limits = replace(
                origin.limits,
                call_timeout_s=origin.limits.call_timeout_s * CALL_TIMEOUT_FACTOR,
                step_budget_s=COMPANION_BUDGET_S,
            )
            self.companion = Sandbox(
                origin.submission,
                limits,
                Hangs(),
                origin.isolation,
                ignored=origin.ignored,
                torch=origin.torch,
                cpus=origin.cpus,
                label=f"{origin.label}-trace",
            )
        return self.companion

    def probe(self, name: str, module: str | None, *args: Any) -> tuple[bool, Any]:
        outcome = self._box().run_probe(name, module, *args)
        return (True, outcome.value) if isinstance(outcome, outcomes.Returned) else (False, None)

    def call(self, module: str, name: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        outcome = self._box().run_call(module, name, *args, **kwargs)
        return (True, outcome.value) if isinstance(outcome, outcomes.Returned) else (False, None)


class _Trusted:
    """The grade's oracle as :class:`explain.Side` (its probes only: it never runs student code)."""

    def __init__(self, oracle: Any) -> None:
        self.oracle = oracle

    def probe(self, name: str, module: str | None, *args: Any) -> tuple[bool, Any]:
        try:
            return True, self.oracle.probe(name, *args)
        except Exception:  # the trusted side could not compute it: no diagnosis from it
            return False, None

    def call(self, module: str, name: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        return False, None


def of(sandbox: Sandbox, trusted: Callable[[], tuple[Any, Any]] | None) -> Sides:
    """The diagnosis sides of the step graded in ``sandbox`` (made once per sandbox); ``trusted`` gives the oracle
    and the reference of a grade that has one."""
    found = _SIDES.get(sandbox)
    if found is None:
        oracle, reference = trusted() if trusted is not None else (None, None)
        side = _Trusted(oracle) if oracle is not None else None
        found = _SIDES[sandbox] = Sides(_Student(sandbox), side, reference=reference)
    return found


def close(sandbox: Sandbox) -> None:
    """Close the companion of ``sandbox`` (if one was started), then ``sandbox`` itself."""
    found = _SIDES.pop(sandbox, None)
    student = found.student if found is not None else None
    if isinstance(student, _Student) and student.companion is not None:
        student.companion.close()
        student.companion = None
    sandbox.close()
