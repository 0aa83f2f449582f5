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
from typing import Any

import pytest

from autograder import predictions
from autograder.checking import Lab
from autograder.i18n import N_, _
from autograder.predictions import AnswerFormError, Question
from autograder.sandbox.probes import predictions as probe

pytestmark = pytest.mark.step("predictions")
NO_PREDICTION = N_("no predictions yet (PREDICTIONS in predictions.py)")

SEE_SECTION = N_("{value}, the value the reference computes (section '{title}' shows why)")


def _why(reply: dict[str, Any]) -> str:
    """What the probe found instead of an answer, in the active language.

    The reply comes from the sandboxed child: its reason code and fields are
    used only when they fit one of the probe's sentences, else its English words are shown.
    """
    why, fields = reply.get("why"), reply.get("fields")
    if why in probe.WHY and isinstance(fields, dict):
        try:
            return probe.sentence(why, {str(k): str(v)[:80] for k, v in fields.items()})
        except (KeyError, IndexError, ValueError):
            pass
    return str(reply.get("detail"))[:300]


def _keys(reply: dict[str, Any]) -> str:
    """The keys PREDICTIONS has, as the probe listed them, in the active language."""
    keys = reply.get("keys")
    if not isinstance(keys, list) or not all(isinstance(k, list) and len(k) == 2 for k in keys):
        return str(reply.get("detail"))[:300]
    shown = [str(text)[:50] if text else _(probe.KEY_OF_TYPE).format(type=str(kind)[:50]) for text, kind in keys]
    return ", ".join(shown) or _(probe.NO_KEYS)


def check_prediction(lab: Lab, question: Question) -> None:
    """Grade ``PREDICTIONS[question.id]`` of the submission."""
    got = lab.probe(
        "prediction", question.id, text=_("{entry} in predictions.py").format(entry=f'PREDICTIONS["{question.id}"]')
    )
    reply = got.value
    status, answer = reply["status"], reply["value"]
    form = _(question.answer)
    if status == "no_dict":
        got.fail(_("a dict PREDICTIONS with one entry per question"), _why(reply))
    if status == "missing":
        got.fail(
            _('an entry "{id}" in PREDICTIONS (keep every key of the stub)').format(id=question.id),
            _("no such entry (the keys are: {keys})").format(keys=_keys(reply)),
        )
    if status == "not_plain":
        got.fail(_("your prediction as a plain literal ({form})").format(form=form), _why(reply))
    if answer is None:
        got.fail(
            _("your prediction ({form})").format(form=form),
            _("None (no prediction yet)"),
            not_started=NO_PREDICTION,
        )
    try:
        answer = predictions.normalise(question, answer)
    except AnswerFormError as error:
        got.fail(form, str(error))
    expected = predictions.expected(question)
    if not predictions.agrees(question, answer, expected):
        shown = _(SEE_SECTION).format(value=predictions.show(question, expected), title=_(question.section_title))
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
