"""What a check of an untouched step reports without running (:mod:`autograder.pristine` says which steps are).

Running it would call a stub that raises ``NotImplementedError`` (or find no timing report, or no prediction):
the check fails, 0 points, as work not started. The result says so in the same typed fields the report groups by
(:mod:`autograder.report.failures`): a ``NotImplementedError`` of one of the step's stubbed functions, or the
grader's not-started words where the step has them (the timing step's checks of the report, every prediction),
so every renderer shows the step as a run of its checks does. Only the check's own message differs: it says
that the check did not run and why, where a run names the call it made (hidden inputs are drawn per student).
"""

from __future__ import annotations

from autograder import messages
from autograder.checks.predictions import NO_PREDICTION
from autograder.i18n import N_, _
from autograder.report.model import CallFailure, CheckResult
from autograder.tasks import Step
from autograder.timing.explain import NO_REPORT_YET

UNTOUCHED = N_(
    "{step}: {check}: not run, {module} is the stub as handed out ({functions}: not implemented yet). "
    "See the handout, section '{title}' ({handout})."
)
# The classes a stub's NotImplementedError belongs to, as a child reports them.
NOT_IMPLEMENTED_MRO = ("NotImplementedError", "RuntimeError", "Exception", "BaseException", "object")
# The steps whose graders say "not started" in their own words: (words, the fixture of the checks that say them;
# None: every check).
NOT_STARTED: dict[str, tuple[str, str | None]] = {
    "predictions": (NO_PREDICTION, None),
    "timing": (NO_REPORT_YET, "found"),  # the checks that read reports/timing.json
}
# Checks whose call reaches a stub of a module their step's module imports first: (step, check) -> that function.
# The grader's measurement of decoding starts in toy_gpt (a stub too, or the timing step would not be untouched).
REACHES = {("timing", "test_grader_decoding"): "new_cache"}


def check_result(
    step: Step, name: str, title: str, points: float, hidden: bool, stubbed: tuple[str, ...], fixtures: list[str]
) -> CheckResult:
    """The result of the check ``name`` (its ``title``, ``points``, whether ``hidden``, the ``fixtures`` it asks
    for) of the untouched ``step``, whose module's stubbed functions are ``stubbed`` (file order)."""
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
    words, fixture = NOT_STARTED.get(step.id, ("", ""))
    if words and (fixture is None or fixture in fixtures):
        return CheckResult(message=message, not_started=_(words), **common)
    function = REACHES.get((step.id, name), names[0])
    failure = CallFailure("raised", function, NOT_IMPLEMENTED_MRO[0], NOT_IMPLEMENTED_MRO)
    return CheckResult(message=message, call_failure=failure, **common)
