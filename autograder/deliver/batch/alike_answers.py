"""Prediction sets alike: the ``PREDICTIONS`` of two hand-ins compared by value, not by how they are written.

Every answer is read as a literal with :mod:`ast` (never run) and brought to
one form before comparing: numbers at :data:`SIGNIFICANT` significant digits
(``2.68``, ``2.680`` and ``2.6800001`` are one answer), lists and tuples alike,
strings without case, spacing or a final full stop. Students who answered
correctly all give the same values, and so do students who made the same
common mistake (the question file's catalogued wrong answers), so only
*unusual* entries count: a wrong value that is not a catalogued mistake, or
one written with :data:`DIGITS` significant digits or more (``2.684354``: not a
reasoned prediction's rounding). Two sets are alike when they agree on at least
:data:`NEAR` of the questions both answered and share at least
:data:`MIN_UNUSUAL` unusual entries.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Hashable
from typing import Any

from autograder.judge import predictions

SIGNIFICANT = 4  # numbers are compared at this many significant digits
DIGITS = 4  # a number written with this many significant digits is not a reasoned prediction's rounding
NEAR = 0.8  # the share of the questions both answered on which two alike sets agree
MIN_UNUSUAL = 2  # unusual entries two alike sets must share
MAX_LITERAL = 1000  # characters of one answer read; a longer one is compared as written
NUMBER = re.compile(r"\d[\d_.]*(?:[eE][-+]?\d+)?")

Answers = tuple[tuple[str, str], ...]  # (question id, the literal as written), sorted by id
Reference = dict[str, Any]  # question id -> (Question, the reference's value)


def written_answers(source: str) -> Answers:
    """``(id, literal as written)`` of each entry of a literal ``PREDICTIONS`` dict in ``source`` that is not
    None (no code runs); ``()`` when there is none. ValueError or SyntaxError for text that is not Python."""
    tree = ast.parse(source)
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == "PREDICTIONS" and isinstance(node.value, ast.Dict):
            found = []
            for key, value in zip(node.value.keys, node.value.values):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and not (isinstance(value, ast.Constant) and value.value is None)
                ):
                    literal = " ".join((ast.get_source_segment(source, value) or "").split())
                    found.append((key.value, literal[:MAX_LITERAL]))
            return tuple(sorted(found))
    return ()


def canonical(literal: str) -> Hashable:
    """The answer written ``literal`` in the one form answers are compared in (the text itself when it is not a
    literal)."""
    try:
        return _canonical(ast.literal_eval(literal))
    except (ValueError, TypeError, SyntaxError, OverflowError, MemoryError, RecursionError):
        return " ".join(literal.split())


def _canonical(value: Any) -> Hashable:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        return float(f"{number:.{SIGNIFICANT}g}") if math.isfinite(number) else repr(number)
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(item) for item in value)
    if isinstance(value, str):
        return " ".join(value.casefold().split()).rstrip(".")
    return repr(value)


def unusual(question_id: str, literal: str, reference: Reference) -> bool:
    """Whether an answer written ``literal`` is one honest students would not share: over-precise, or wrong and not
    a catalogued mistake (without the reference, only over-precise answers are unusual)."""
    if any(_digits(number) >= DIGITS for number in NUMBER.findall(literal)):
        return True
    if question_id not in reference:
        return False
    question, expected = reference[question_id]
    try:
        answer = predictions.normalise(question, ast.literal_eval(literal))
    except (ValueError, SyntaxError, TypeError, OverflowError, MemoryError, RecursionError):  # AnswerFormError too
        return True
    return not predictions.agrees(question, answer, expected) and predictions.diagnose(question, answer) is None


def _digits(number: str) -> int:
    """Significant digits of a number as written (``2.6800`` has 3: trailing zeros after the point do not count)."""
    mantissa = re.split(r"[eE]", number.replace("_", ""))[0]
    if "." in mantissa:
        return len(mantissa.replace(".", "").lstrip("0").rstrip("0"))
    return len(mantissa.lstrip("0").rstrip("0") or "0")


def shared_unusual(a: Answers, b: Answers, reference: Reference) -> int:
    """The unusual entries two alike prediction sets share (see the module's description); 0 when they are not
    alike."""
    mine, theirs = dict(a), dict(b)
    both = mine.keys() & theirs.keys()
    same = [q for q in both if canonical(mine[q]) == canonical(theirs[q])]
    if not both or len(same) < NEAR * len(both):
        return 0
    count = sum(unusual(q, mine[q], reference) or unusual(q, theirs[q], reference) for q in same)
    return count if count >= MIN_UNUSUAL else 0
