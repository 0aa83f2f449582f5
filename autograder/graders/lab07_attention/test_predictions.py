"""Public checks of the predict-first step: each answer in PREDICTIONS against the value the reference computes.

One check per question of ``data/predictions.toml`` (the registry's
``tasks.QUESTIONS``), titled with the question's short form and worth its
points. The answer comes from the sandbox as plain data; the computed value
comes from the snapshot (students grade without the reference). A message
shows the computed value only for an answer that was graded: an entry left at
None says "no prediction yet", an answer of the wrong form says which form is
expected, and neither reveals the value.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from autograder import predictions
from autograder.checking import Lab
from autograder.i18n import N_
from autograder.predictions import AnswerFormError, Question

pytestmark = pytest.mark.step("predictions")
NO_PREDICTION = N_("no predictions yet (PREDICTIONS in predictions.py)")

SEE_SECTION = "the value the reference computes (section '{title}' shows why)"


def check_prediction(lab: Lab, question: Question) -> None:
    """Grade ``PREDICTIONS[question.id]`` of the submission."""
    got = lab.probe("prediction", question.id, text=f'PREDICTIONS["{question.id}"] in predictions.py')
    reply = got.value
    status, answer, detail = reply["status"], reply["value"], reply["detail"]
    if status == "no_dict":
        got.fail("a dict PREDICTIONS with one entry per question", detail)
    if status == "missing":
        got.fail(
            f'an entry "{question.id}" in PREDICTIONS (keep every key of the stub)',
            f"no such entry (the keys are: {detail})",
        )
    if status == "not_plain":
        got.fail(f"your prediction as a plain literal ({question.answer})", detail)
    if answer is None:
        got.fail(f"your prediction ({question.answer})", "None (no prediction yet)", not_started=NO_PREDICTION)
    try:
        answer = predictions.normalise(question, answer)
    except AnswerFormError as error:
        got.fail(question.answer, str(error))
    expected = predictions.expected(question)
    if not predictions.agrees(question, answer, expected):
        shown = f"{predictions.show(question, expected)}, {SEE_SECTION.format(title=question.section_title)}"
        got.fail(shown, predictions.show(question, answer), predictions.diagnose(question, answer))


def _check(question: Question) -> Callable[[Lab], None]:
    """The check of one question, titled with its short form."""

    def check(lab: Lab) -> None:
        check_prediction(lab, question)

    check.__name__ = check.__qualname__ = f"test_{question.id}"
    check.__doc__ = question.short
    return pytest.mark.points(question.points)(check)


# One function per question (not parametrize): the report titles a check with its function's docstring.
for _question in predictions.load():
    globals()[f"test_{_question.id}"] = _check(_question)
del _question
