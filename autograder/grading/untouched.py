"""What a check of an untouched step reports without running (:mod:`autograder.handin.pristine` says which steps are).

Running it would call a stub that raises ``NotImplementedError`` (or find no timing report, or no prediction):
the check fails, 0 points, as work not started. The result says so in the same typed fields the report groups by
(:mod:`autograder.report.failures`): a ``NotImplementedError`` of one of the step's stubbed functions, or the
grader's not-started words where the step has them (the timing step's checks of the report, every prediction),
so every renderer shows the step as a run of its checks does. A check that fails before any call (no prediction
in the stub's PREDICTIONS, no timing report) gets the very message a run gives; one that would call a stub says
that it did not run and why, where a run names the call it made (hidden inputs are drawn per student).
"""

from __future__ import annotations

from collections.abc import Callable

from autograder.base.tasks import Step
from autograder.grading.model import CallFailure, CheckResult
from autograder.handin import pristine
from autograder.i18n import N_, _
from autograder.judge import messages, predictions
from autograder.judge.checking import CheckFailed, Got
from autograder.judge.checks import predictions as prediction_checks
from autograder.judge.timing import explain

UNTOUCHED = N_(
    "{step}: {check}: not run, {module} is the stub as handed out (NotImplementedError: {functions} not "
    "implemented yet). See the handout, section '{title}' ({handout})."
)
# The classes a stub's NotImplementedError belongs to, as a child reports them.
NOT_IMPLEMENTED_MRO = ("NotImplementedError", "RuntimeError", "Exception", "BaseException", "object")
# Checks whose call reaches a stub of a module their step's module imports first: (step, check) -> that function.
# The grader's measurement of decoding starts in toy_gpt (a stub too, or the timing step would not be untouched).
REACHES = {("timing", "test_grader_decoding"): "new_cache"}


def _no_report(step: Step, name: str, fixtures: list[str], parametrized: bool) -> None:
    """The timing checks that read the report before any call (those asking for it, but not ``loglog_slope``'s
    cases, which call the student's function first): as ``test_timing._report`` fails them without one."""
    if "found" in fixtures and not parametrized:
        Got(step, pristine.REPORT, None).fail(
            _(explain.RUN_COMMAND), _(explain.NO_REPORT), not_started=explain.NO_REPORT_YET
        )


def _no_prediction(step: Step, name: str, fixtures: list[str], parametrized: bool) -> None:
    """Every predictions check reads its entry first: None in the stub (``test_<id>``, ``test_<id>_against_...``)."""
    questions = [q for q in predictions.load() if name == f"test_{q.id}" or name.startswith(f"test_{q.id}_")]
    question = max(questions, key=lambda q: len(q.id), default=None)
    if question is not None:
        prediction_checks.unanswered(Got(step, prediction_checks.entry(question), None), question)


# The steps whose checks fail before any call on the stubs: each raises that check's CheckFailed, or returns.
BEFORE_ANY_CALL: dict[str, Callable[[Step, str, list[str], bool], None]] = {
    "timing": _no_report,
    "predictions": _no_prediction,
}


def check_result(
    step: Step,
    name: str,
    title: str,
    points: float,
    hidden: bool,
    stubbed: tuple[str, ...],
    fixtures: list[str],
    parametrized: bool = False,
) -> CheckResult:
    """The result of the check ``name`` (its ``title``, ``points``, whether ``hidden``, the ``fixtures`` it asks
    for, whether ``parametrized``) of the untouched ``step``, whose module's stubbed functions are ``stubbed``
    (file order)."""
    names = list(stubbed) or list(step.functions)
    common = dict(step=step.id, name=name, title=title, points=points, hidden=hidden, passed=False)
    message = _(UNTOUCHED).format(
        step=_(step.title),
        check=title,
        module=f"{step.module}.py",
        functions=", ".join(names),
        title=_(step.title),
        handout=messages.handout(step),
    )
    before = BEFORE_ANY_CALL.get(step.id)
    try:
        if before is not None:
            before(step, name, fixtures, parametrized)
    except CheckFailed as failed:
        return CheckResult(message=failed.message, not_started=failed.not_started, **common)
    function = REACHES.get((step.id, name), names[0])
    failure = CallFailure("raised", function, NOT_IMPLEMENTED_MRO[0], NOT_IMPLEMENTED_MRO)
    return CheckResult(message=message, call_failure=failure, **common)
