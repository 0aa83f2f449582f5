"""What step 14's checks share: read one prediction from the sandbox, and compare it with a value.

Two checks grade each question of ``data/predictions.toml``. The public one
(``autograder/grading/graders``) compares the prediction with what the question's
``compute`` code gives with the student's *own* modules, run in the sandbox
("predict, then test"), and, wherever a reference is available (every grading
an instructor makes: ``grade`` in the kit, ``grade-batch``, Gradescope, nbgrader),
holds that value of the student's own code to the reference's: both come from
the student's process, so their agreement alone proves nothing. The hidden one
(``hidden/``, the instructor's side) compares the prediction with what the
reference computes. Neither reveals a value before the student has answered:
an entry left at None says "no prediction yet", an answer of the wrong form
says which form is expected.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, NoReturn

from autograder.base import chapter
from autograder.i18n import N_, _
from autograder.judge import predictions
from autograder.judge.checking import Got, Lab
from autograder.judge.oracle import Oracle, OracleFailed
from autograder.judge.predictions import AnswerFormError, Question
from autograder.sandbox.probes import predictions as probe

NO_PREDICTION = N_("no predictions yet (PREDICTIONS in predictions.py)")
SEE_SECTION = N_("{value}, the value the reference computes (section '{title}' shows why)")
OWN_VALUE = N_("{value}, what your own code computes for these inputs ({functions})")
OWN_RAISED = N_("your {functions} to compute it, so your prediction can be tested")
RAISED = N_("{error}: {detail}")
OWN_FORM = N_("your {functions} gives {value}, not {form}")
OWN_CORRECT = N_("a value of your own code ({functions}) that a correct implementation gives too")
OWN_WRONG = N_(
    "{value}, which a correct implementation does not give: your prediction agrees with your own code, but that "
    "code is not right yet (fix the step of {functions} first)"
)
THE_CODE = N_("code")  # the functions a question's code called, when it called none of the student's


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


def entry(question: Question) -> str:
    """How a check names the question's entry, in the active language: ``PREDICTIONS["id"] in predictions.py``."""
    return _("{entry} in predictions.py").format(entry=f'PREDICTIONS["{question.id}"]')


def unanswered(got: Got, question: Question) -> NoReturn:
    """Fail the check of ``question``, whose entry is None (the stub's): not started, the form expected."""
    got.fail(
        _("your prediction ({form})").format(form=_(question.answer)),
        _("None (no prediction yet)"),
        not_started=NO_PREDICTION,
    )


def read_prediction(lab: Lab, question: Question) -> tuple[Got, Any]:
    """``PREDICTIONS[question.id]`` of the submission, normalised to the question's form; the check fails (with
    the form expected, never the value) when there is none or it is not of that form."""
    got = lab.probe("prediction", question.id, text=entry(question))
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
        unanswered(got, question)
    try:
        return got, predictions.normalise(question, answer)
    except AnswerFormError as error:
        got.fail(form, str(error))


@cache
def _catalog() -> str:
    """The chapter's inputs, and the values the questions' code names, as JSON text: sent with each own-code probe
    (the child cannot read the kit's files; the whole catalog is longer than a string the protocol carries)."""
    values = json.loads(resources.files("autograder.data").joinpath(chapter.DATA).read_text(encoding="utf-8"))
    code = "\n".join(question.compute for question in predictions.load())
    named = {key: value for key, value in values.items() if not key.startswith("_") and f'"{key}"' in code}
    return json.dumps({"_inputs": values["_inputs"], **named})


def _functions(used: Any) -> str:
    """The student's functions a question's code called, as a message names them (``attention and causal_mask``)."""
    names = [str(name).rpartition(".")[2][:40] for name in used] if isinstance(used, list) else []
    return _(" and ").join(names[:3]) if names else _(THE_CODE)


def agrees_with_own_code(lab: Lab, question: Question, oracle: Oracle) -> None:
    """The prediction agrees with what the question's code computes with the student's own modules (the public
    check: the student's functions run in the sandbox, only plain data comes back), and, where ``oracle`` holds the
    reference, that value is the reference's: a prediction is only tested by code that computes right."""
    got, answer = read_prediction(lab, question)
    reply = lab.probe("own_value", question.compute, _catalog(), text=got.call).value
    functions = _functions(reply.get("used"))
    if reply.get("status") == "raised":
        got.fail(
            _(OWN_RAISED).format(functions=functions),
            _(RAISED).format(error=str(reply.get("error"))[:60], detail=str(reply.get("detail"))[:200]),
        )
    if reply.get("status") != "ok":
        got.fail(_(OWN_RAISED).format(functions=functions), _why(reply))
    try:
        own = predictions.normalise(question, reply["value"])
    except AnswerFormError as error:
        got.fail(
            _(OWN_RAISED).format(functions=functions),
            _(OWN_FORM).format(functions=functions, value=str(error), form=_(question.answer)),
        )
    if not predictions.agrees(question, answer, own):
        shown = _(OWN_VALUE).format(value=predictions.show(question, own), functions=functions)
        got.fail(shown, predictions.show(question, answer), predictions.diagnose(question, answer))
    if oracle.has_reference and not predictions.agrees(question, own, reference_value(oracle, question)):
        got.fail(
            _(OWN_CORRECT).format(functions=functions),
            _(OWN_WRONG).format(value=predictions.show(question, own), functions=functions),
        )


def reference_value(oracle: Oracle, question: Question) -> Any:
    """What the question's code computes with the reference's modules, on the checks' trusted side
    (:mod:`autograder.judge.oracle`: a child of its own holding the reference, or the grader; never the student's
    child).

    Raises:
        OracleFailed: the reference's modules could not compute it (the grader's error, not the student's).
    """
    reply = oracle.probe("own_value", question.compute, _catalog())
    if reply.get("status") != "ok":
        raise OracleFailed(f"own_value({question.id!r})", reply)
    return predictions.normalise(question, reply["value"])


def agrees_with_reference(lab: Lab, question: Question, oracle: Oracle) -> None:
    """The prediction agrees with what the question's code computes with the reference (the hidden check: the
    reference's value comes from ``oracle``; the reference never ships to students)."""
    got, answer = read_prediction(lab, question)
    expected = reference_value(oracle, question)
    if not predictions.agrees(question, answer, expected):
        shown = _(SEE_SECTION).format(value=predictions.show(question, expected), title=_(question.section_title))
        got.fail(shown, predictions.show(question, answer), predictions.diagnose(question, answer))
