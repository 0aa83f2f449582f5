"""The predict-first questions: load the data file, compute each answer from the reference, judge a prediction.

The questions live in ``data/predictions.toml`` (the registry's
``tasks.QUESTIONS``; its header documents the fields), one ``[[question]]``
per entry of the student's ``PREDICTIONS`` dict. This module is trusted and
runs in the grading process:

- :func:`load` validates the file; a malformed entry is a :class:`QuestionError`
  that names the file, the question and the field.
- :func:`compute` runs a question's ``compute`` code (instructor-written,
  trusted) against the reference solution: only the hidden check does, on the
  instructor's side. No expected answer is stored anywhere the student kit
  ships (no snapshot); the public check runs the same code against the
  student's own modules, in the sandbox
  (:func:`autograder.sandbox.probes.predictions.own_value`).
- :func:`normalise`, :func:`agrees` and :func:`diagnose` judge a student's
  answer. Answers arrive from the sandbox as plain data (numbers, strings,
  lists) and are compared, never evaluated.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from types import CodeType
from typing import Any

import numpy as np

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from autograder.base import chapter, tasks
from autograder.i18n import N_, _
from autograder.judge import messages
from autograder.judge.diagnose.predictions import MISTAKES

# The forms an answer can take, as the grader describes them when a form is wrong.
KINDS = {
    "shape": "a tuple of ints",
    "indices": "a list of ints",
    "number": "a number",
    "numbers": "a list of numbers",
    "choice": "one of the listed choices (a string)",
}
REQUIRED = ("id", "points", "section", "short", "text", "answer", "kind", "compute")
OPTIONAL = ("tolerance", "choices", "wrong", "chapter")
ID = re.compile(r"^[a-z][a-z0-9_]*$")


class QuestionError(ValueError):
    """A malformed question file; the message names the file, the question and the field."""


class AnswerFormError(ValueError):
    """An answer that is not of its question's form; the message describes what it is instead."""


@dataclass(frozen=True)
class Wrong:
    """A typical wrong prediction and the mistake it reveals."""

    value: Any  # normalised to the question's form
    mistake: str  # an id of autograder.judge.diagnose.predictions.MISTAKES


@dataclass(frozen=True)
class Question:
    """One predict-first question (one entry of ``PREDICTIONS``)."""

    id: str
    points: float
    section: str  # the handout anchor (a step id) of the step the question belongs to
    short: str  # the check's title
    text: str  # the question as the student reads it
    answer: str  # the expected form, in words
    kind: str  # one of KINDS
    compute: str  # trusted code: an expression, or statements that assign ``answer``
    tolerance: float = 0.0  # for "number" and "numbers": largest accepted |answer - value|
    choices: tuple[str, ...] = ()  # for "choice"
    wrong: tuple[Wrong, ...] = ()
    chapter: tuple[str, ...] = ()  # catalog ids the question restates (the kit's tests compare)

    @property
    def section_title(self) -> str:
        return tasks.step(self.section).title


# -- loading -----------------------------------------------------------------


def load(path: Path | None = None) -> tuple[Question, ...]:
    """The questions of ``path`` (default: the registry's ``tasks.QUESTIONS``), validated."""
    path = Path(path or tasks.QUESTIONS)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise QuestionError(f"{path}: not valid TOML: {error}") from None
    return parse(data, str(path))


def parse(data: dict[str, Any], source: str = "<questions>") -> tuple[Question, ...]:
    """The questions of an already parsed question file."""
    extra = sorted(set(data) - {"question"})
    if extra or not isinstance(data.get("question"), list) or not data["question"]:
        raise QuestionError(
            f"{source}: expected one or more [[question]] tables and nothing else"
            + (f", found {extra}" if extra else "")
        )
    questions: list[Question] = []
    for number, entry in enumerate(data["question"], start=1):
        if not isinstance(entry, dict):
            raise QuestionError(f"{source}: question {number}: expected a [[question]] table")
        question = _question(entry, f"{source}: question {number} ({entry.get('id', 'no id')!r})")
        if question.id in {q.id for q in questions}:
            raise QuestionError(f"{source}: question {number}: field 'id': {question.id!r} is used twice")
        questions.append(question)
    return tuple(questions)


def _question(entry: dict[str, Any], where: str) -> Question:
    """One validated question; ``where`` starts every error message."""
    missing = [f for f in REQUIRED if f not in entry]
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    if missing:
        raise QuestionError(f"{where}: field {missing[0]!r} is missing")
    if unknown:
        raise QuestionError(
            f"{where}: field {unknown[0]!r} is unknown (the fields are: {', '.join(REQUIRED + OPTIONAL)})"
        )

    def bad(field: str, problem: str) -> QuestionError:
        return QuestionError(f"{where}: field {field!r}: {problem}")

    for field in ("id", "section", "short", "text", "answer", "kind", "compute"):
        if not isinstance(entry[field], str) or not entry[field].strip():
            raise bad(field, "must be a non-empty string")
    if not ID.match(entry["id"]):
        raise bad("id", f"{entry['id']!r} must be lower case letters, digits and _ (it is a key of PREDICTIONS)")
    if not _is_real(entry["points"]) or entry["points"] <= 0:
        raise bad("points", f"must be a positive number, not {entry['points']!r}")
    if entry["section"] not in tasks.BY_ID:
        raise bad("section", f"{entry['section']!r} is not a step of the handout (known: {', '.join(tasks.BY_ID)})")
    if entry["kind"] not in KINDS:
        raise bad("kind", f"{entry['kind']!r} is not one of {', '.join(KINDS)}")
    numeric = entry["kind"] in ("number", "numbers")
    if numeric != ("tolerance" in entry):
        raise bad(
            "tolerance",
            "is required for kinds number and numbers" if numeric else f"means nothing for kind {entry['kind']!r}",
        )
    if numeric and (not _is_real(entry["tolerance"]) or entry["tolerance"] < 0):
        raise bad("tolerance", f"must be a number >= 0, not {entry['tolerance']!r}")
    is_choice = entry["kind"] == "choice"
    if is_choice != ("choices" in entry):
        raise bad(
            "choices", "is required for kind choice" if is_choice else f"means nothing for kind {entry['kind']!r}"
        )
    choices = entry.get("choices", [])
    if is_choice and not (
        isinstance(choices, list)
        and choices
        and all(isinstance(c, str) and c.strip() for c in choices)
        and len({_fold(c) for c in choices}) == len(choices)
    ):
        raise bad("choices", "must be a list of distinct non-empty strings")
    ids = entry.get("chapter", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) and i in chapter.ids() for i in ids):
        raise bad("chapter", f"must be a list of catalog ids of data/chapter_values.json, not {ids!r}")
    question = Question(
        id=entry["id"],
        points=float(entry["points"]),
        section=entry["section"],
        short=entry["short"].strip(),
        text=" ".join(entry["text"].split()),
        answer=entry["answer"].strip(),
        kind=entry["kind"],
        compute=textwrap.dedent(entry["compute"]).strip(),
        tolerance=float(entry.get("tolerance", 0.0)),
        choices=tuple(choices),
        chapter=tuple(ids),
    )
    _compiled(question, where)
    return _with_wrong(question, entry.get("wrong", []), where)


def _with_wrong(question: Question, entries: Any, where: str) -> Question:
    """``question`` with its validated ``[[question.wrong]]`` entries."""
    if not isinstance(entries, list):
        raise QuestionError(f"{where}: field 'wrong': must be a list of [[question.wrong]] tables")
    wrong = []
    for number, item in enumerate(entries, start=1):
        at = f"{where}: field 'wrong' (entry {number})"
        if not isinstance(item, dict) or set(item) != {"value", "mistake"}:
            raise QuestionError(f"{at}: needs exactly 'value' and 'mistake'")
        if not isinstance(item["mistake"], str) or item["mistake"] not in MISTAKES:
            raise QuestionError(
                f"{at}: mistake {item['mistake']!r} is not in autograder/judge/diagnose/predictions.py (add its "
                "sentence there)"
            )
        try:
            wrong.append(Wrong(normalise(question, item["value"]), item["mistake"]))
        except AnswerFormError as error:
            raise QuestionError(f"{at}: value is {error}, not {question.answer}") from None
    return replace(question, wrong=tuple(wrong))


def _compiled(question: Question, where: str = "") -> tuple[CodeType, bool]:
    """The compute code and whether it is one expression; :class:`QuestionError` on a syntax error."""
    name = f"<question {question.id}: compute>"
    try:
        return compile(question.compute, name, "eval"), True
    except SyntaxError:
        pass
    try:
        code = compile(question.compute, name, "exec")
    except SyntaxError as error:
        raise QuestionError(f"{where or question.id}: field 'compute': {error.msg} (line {error.lineno})") from None
    if "answer" not in code.co_names:
        raise QuestionError(f"{where or question.id}: field 'compute': statements must assign 'answer'")
    return code, False


# -- the correct value -------------------------------------------------------


def compute(question: Question, ref: Any) -> Any:
    """The question's value, computed by its ``compute`` code from the reference ``ref``.

    The code sees ``ref`` (the reference modules: ``ref.scaling.attention``),
    ``np`` and ``chapter`` (the chapter's values and inputs).
    """
    code, expression = _compiled(question)
    scope: dict[str, Any] = {"ref": ref, "np": np, "chapter": chapter}
    with np.errstate(all="ignore"):  # trusted code from the kit's own data file; student answers never get here
        if expression:
            value = eval(code, scope)
        else:
            exec(code, scope)
            value = scope.get("answer")
    try:
        return normalise(question, _plain(value))
    except AnswerFormError as error:
        raise QuestionError(f"question {question.id!r}: field 'compute' gives {error}, not {question.answer}") from None


def _plain(value: Any) -> Any:
    """numpy arrays and scalars as Python lists and numbers; tuples as lists."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# -- judging an answer -------------------------------------------------------


def _is_real(value: Any) -> bool:
    return type(value) in (int, float)


def _is_int(value: Any) -> bool:
    return type(value) is int or (type(value) is float and value.is_integer())


def _fold(text: str) -> str:
    """A choice as compared: case, spacing and a final full stop do not count."""
    return " ".join(text.casefold().split()).rstrip(".")


A_CONTAINER = N_("a {type} {value}")  # an answer of the wrong form: "a list [1, 2]"


def describe(value: Any) -> str:
    """A value of the wrong form, as a message names it (in the active language)."""
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        return _(A_CONTAINER).format(type=type(value).__name__, value=messages.short(value))
    return f"{type(value).__name__} {messages.short(value)}"


def normalise(question: Question, value: Any) -> Any:
    """``value`` in the question's form (tuple of ints, float, tuple of floats, a choice); :class:`AnswerFormError`
    if it is not."""
    kind = question.kind
    if kind in ("shape", "indices") and isinstance(value, (list, tuple)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    if kind == "number" and _is_real(value):
        return float(value)
    if kind == "numbers" and isinstance(value, (list, tuple)) and all(_is_real(v) for v in value):
        return tuple(float(v) for v in value)
    if kind == "choice" and isinstance(value, str):
        for choice in question.choices:
            if _fold(choice) == _fold(value):
                return choice
    raise AnswerFormError(describe(value))


def _close(a: float, b: float, tolerance: float) -> bool:
    return a == b or (math.isfinite(a - b) and abs(a - b) <= tolerance)


def agrees(question: Question, answer: Any, value: Any) -> bool:
    """Whether two normalised values agree (numbers within the question's tolerance)."""
    if question.kind == "number":
        return _close(answer, value, question.tolerance)
    if question.kind == "numbers":
        return len(answer) == len(value) and all(_close(a, v, question.tolerance) for a, v in zip(answer, value))
    return answer == value


def diagnose(question: Question, answer: Any) -> str | None:
    """The mistake of the first listed wrong prediction that ``answer`` agrees with, if any."""
    return next((w.mistake for w in question.wrong if agrees(question, answer, w.value)), None)


def show(question: Question, value: Any) -> str:
    """A normalised value as a message shows it: (4, 7, 5), [1, 0], 10.7374, [0.5, 0.5], 'swapped'."""
    if question.kind == "shape":
        return repr(tuple(value))
    if question.kind == "indices":
        return repr(list(value))
    if question.kind == "number":
        return f"{value:.6g}"
    if question.kind == "numbers":
        return "[" + ", ".join(f"{v:.6g}" for v in value) + "]"
    return repr(value)
