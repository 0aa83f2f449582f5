"""Hand-ins that look copied: identical or near-identical timing reports, identical unusual prediction sets.

A batch compares every pair of students' hand-ins after grading and gives each
student in a matching group a *review* reason (in their CSV row and in the
class summary), never a changed score: an instructor decides.

- **Timing reports** (``reports/timing.json``): the raw times are the report's
  non-integer numbers, at 6 significant digits. Two honest measurements of the
  same code share none of them; a copied report shares all. Students whose
  reports share at least :data:`NEAR` of the larger set of times (and at least
  :data:`MIN_TIMES` of them) are flagged.
- **Prediction sets** (``PREDICTIONS`` in ``predictions.py``, read as literals
  with :mod:`ast`, never run): students who answered correctly all write the same
  values, so only an identical set that is *unusual* is flagged: at least
  :data:`MIN_UNUSUAL` of its entries written the same way are either wrong (they
  disagree with the reference) or written with more digits than a reasoned
  prediction needs (:data:`DIGITS` significant digits or more, e.g. ``2.684354``).

Both files are read as data, size-capped, without following links; a file that
is missing, too large or not of the expected form takes no part.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder import predictions

MAX_BYTES = 1 << 20  # a larger file takes no part
NEAR = 0.8  # shared fraction of raw times that makes two timing reports near-identical
MIN_TIMES = 5  # fewer raw times than this compare nothing
MIN_UNUSUAL = 2  # unusual entries an identical prediction set must share to be flagged
DIGITS = 4  # a number written with this many significant digits is not a reasoned prediction's rounding
MAX_DEPTH = 4  # folders searched below a hand-in for its reports/ and predictions.py
TIMING = ("reports", "timing.json")
PREDICTIONS = "predictions.py"
TIMING_REVIEW = "review: timing report identical or near-identical to {others}'s (raw times)"
PREDICTIONS_REVIEW = "review: prediction set identical to {others}'s ({count} unusual entries in common)"


@dataclass(frozen=True)
class HandIn:
    """What the comparison reads of one student's hand-in."""

    student: str
    times: frozenset[str]  # the timing report's raw times, each at 6 significant digits
    answers: tuple[tuple[str, str], ...]  # (question id, the literal as written) of each answered entry


@dataclass(frozen=True)
class Flag:
    """A group of students whose hand-ins match; ``kind`` is "timing" or "predictions"."""

    kind: str
    students: tuple[str, ...]
    detail: str  # what they share, in a few words

    def reason(self, student: str) -> str:
        """The review reason of ``student``, naming the others of the group."""
        others = ", ".join(s for s in self.students if s != student)
        if self.kind == "timing":
            return TIMING_REVIEW.format(others=others)
        return PREDICTIONS_REVIEW.format(others=others, count=self.detail)


def _find(folder: Path, *parts: str) -> Path | None:
    """The first regular file ``folder/**/parts`` at most :data:`MAX_DEPTH` folders down, never through a link."""
    level = [Path(folder)]
    for _depth in range(MAX_DEPTH + 1):
        for base in level:
            path = base.joinpath(*parts)
            through = [path, *(base.joinpath(*parts[:n]) for n in range(1, len(parts)))]
            if not any(p.is_symlink() for p in through) and path.is_file() and path.stat().st_size <= MAX_BYTES:
                return path
        level = [c for base in level for c in sorted(base.iterdir()) if c.is_dir() and not c.is_symlink()][:200]
    return None


def _numbers(value: Any, into: set[str]) -> None:
    """The non-integer numbers of a JSON document, each at 6 significant digits."""
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        into.add(f"{value:.6g}")
    elif isinstance(value, dict):
        for item in value.values():
            _numbers(item, into)
    elif isinstance(value, list):
        for item in value:
            _numbers(item, into)


def raw_times(path: Path | None) -> frozenset[str]:
    if path is None:
        return frozenset()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    found: set[str] = set()
    _numbers(document, found)
    return frozenset(found)


def written_answers(path: Path | None) -> tuple[tuple[str, str], ...]:
    """``(id, literal as written)`` of each entry of a literal ``PREDICTIONS`` dict that is not None (no code runs)."""
    if path is None:
        return ()
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, ValueError, SyntaxError, RecursionError):
        return ()
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
                    found.append((key.value, " ".join((ast.get_source_segment(source, value) or "").split())[:200]))
            return tuple(sorted(found))
    return ()


def read(student: str, folder: Path) -> HandIn:
    """What the comparison reads of the hand-in in ``folder`` (its lab folder somewhere below)."""
    return HandIn(student, raw_times(_find(folder, *TIMING)), written_answers(_find(folder, PREDICTIONS)))


def _unusual(question_id: str, literal: str, reference: dict[str, Any]) -> bool:
    """Whether an answer written ``literal`` is one honest students would not all write: wrong, or over-precise."""
    if any(_digits(number) >= DIGITS for number in re.findall(r"\d[\d.]*(?:[eE][-+]?\d+)?", literal)):
        return True
    question = reference.get(question_id)
    if question is None:
        return False
    question, expected = question
    try:
        return not predictions.agrees(question, predictions.normalise(question, ast.literal_eval(literal)), expected)
    except (ValueError, SyntaxError, TypeError, predictions.AnswerFormError, RecursionError):
        return True


def _digits(number: str) -> int:
    mantissa = re.split(r"[eE]", number)[0]
    return len(mantissa.replace(".", "").lstrip("0").rstrip("0") if "." in mantissa else mantissa.lstrip("0"))


def _groups(keys: dict[str, Any]) -> list[tuple[str, ...]]:
    by_key: dict[Any, list[str]] = {}
    for student, key in keys.items():
        by_key.setdefault(key, []).append(student)
    return [tuple(sorted(group)) for group in by_key.values() if len(group) > 1]


def compare(hand_ins: Iterable[HandIn], reference: dict[str, Any] | None = None) -> tuple[Flag, ...]:
    """The groups of students whose timing reports or prediction sets match (see the module's description).

    ``reference``: question id -> ``(Question, the reference's value)``, to tell a wrong answer (without it,
    only over-precise ones count as unusual).
    """
    hand_ins = sorted(hand_ins, key=lambda h: h.student)
    flags: list[Flag] = []
    timed = [h for h in hand_ins if len(h.times) >= MIN_TIMES]
    linked: dict[str, set[str]] = {}
    for index, a in enumerate(timed):
        for b in timed[index + 1 :]:
            if len(a.times & b.times) >= NEAR * max(len(a.times), len(b.times)):
                linked.setdefault(a.student, {a.student}).add(b.student)
                linked.setdefault(b.student, {b.student}).add(a.student)
    seen: set[str] = set()
    for student in sorted(linked):
        if student in seen:
            continue
        group, todo = set(), [student]
        while todo:  # the students linked to this one, directly or not
            current = todo.pop()
            if current not in group:
                group.add(current)
                todo.extend(linked[current] - group)
        seen |= group
        flags.append(Flag("timing", tuple(sorted(group)), "raw times"))
    answered = {h.student: h.answers for h in hand_ins if h.answers}
    for group in _groups(answered):
        unusual = sum(_unusual(q, literal, reference or {}) for q, literal in answered[group[0]])
        if unusual >= MIN_UNUSUAL:
            flags.append(Flag("predictions", group, str(unusual)))
    return tuple(flags)


def reasons(flags: Iterable[Flag]) -> dict[str, tuple[str, ...]]:
    """Each flagged student's review reasons."""
    found: dict[str, list[str]] = {}
    for flag in flags:
        for student in flag.students:
            found.setdefault(student, []).append(flag.reason(student))
    return {student: tuple(texts) for student, texts in found.items()}


def reference_answers(reference: Path | None) -> dict[str, Any]:
    """Question id -> ``(Question, value)`` from the reference folder (the instructor's side), or {} without one."""
    if reference is None or not (Path(reference) / "predictions.py").is_file():
        return {}
    from autograder import tasks
    from autograder.reference import Reference

    ref = Reference(Path(reference), tasks.modules_present(Path(reference)))
    found = {}
    for question in predictions.load():
        try:
            found[question.id] = (question, predictions.compute(question, ref))
        except Exception:  # a partial reference folder: this question's answers count as unusual only when over-precise
            continue
    return found
