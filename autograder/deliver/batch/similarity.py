"""Hand-ins that look copied: timing reports alike up to a common scale, prediction sets alike in unusual entries.

A batch compares every pair of students' hand-ins after grading and gives each
student in a matching group a *review* reason (in their CSV row and in the
class summary), never a changed score: an instructor decides.

- **Timing reports** (:mod:`autograder.deliver.batch.alike_times`): the raw times
  compared by their log-ratios, so a copy multiplied by a factor, rounded or
  reformatted matches its original, and honest measurements on one machine do
  not match each other.
- **Prediction sets** (:mod:`autograder.deliver.batch.alike_answers`): the answers
  compared by value (``2.68`` and ``2.680`` alike), and only unusual shared
  entries count (wrong and not a common, catalogued mistake, or over-precise).

Each hand-in is read here once, as the intake finds it
(:func:`autograder.handin.submission.locate`): its lab folder's
``reports/timing.json`` (or wherever the report sits, or a notebook's
``%%writefile`` cell) and ``predictions.py``, each opened by descriptor without
following a link, size-capped, read as data. A hand-in, or a file of it, that
cannot be read takes no part: :func:`read` never raises, so one student never
stops the pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.base import safefs
from autograder.deliver.batch import alike_answers, alike_times, answers_cache
from autograder.handin import submission
from autograder.judge import predictions

MAX_BYTES = 1 << 20  # a larger file takes no part
PREDICTIONS = "predictions.py"
TIMING_REVIEW = "review: timing report alike to {others}'s (raw times the same up to a common scale: {detail})"
PREDICTIONS_REVIEW = "review: prediction set alike to {others}'s ({detail} unusual entries in common)"


@dataclass(frozen=True)
class HandIn:
    """What the comparison reads of one student's hand-in."""

    student: str
    times: alike_times.Timings = field(default_factory=dict)  # the timing report's raw times
    answers: alike_answers.Answers = ()  # (question id, the literal as written) of each answered entry


@dataclass(frozen=True)
class Flag:
    """A group of students whose hand-ins match; ``kind`` is "timing" or "predictions"."""

    kind: str
    students: tuple[str, ...]
    detail: str  # what they share, in a few words

    def reason(self, student: str) -> str:
        """The review reason of ``student``, naming the others of the group."""
        others = ", ".join(s for s in self.students if s != student)
        template = TIMING_REVIEW if self.kind == "timing" else PREDICTIONS_REVIEW
        return template.format(others=others, detail=self.detail)


def read(student: str, folder: Path, *, search: bool = True) -> HandIn:
    """What the comparison reads of the hand-in in ``folder`` (``search``: its lab folder somewhere below, else
    ``folder`` is the lab folder); an empty :class:`HandIn` for what cannot be read."""
    try:
        located = submission.locate(folder) if search else submission.located_at(folder)
    except Exception:  # never for one hand-in: the others are compared
        return HandIn(student)
    if not located.found or located.root is None:
        return HandIn(student)
    lab = located.relative or ()
    notebook = dict(located.notebook_modules)
    report = located.notebook_report or _text(located.root, located.report or (*lab, *submission.REPORT))
    in_lab = _text(located.root, (*lab, PREDICTIONS)) if located.relative is not None else None
    answers = notebook.get(PREDICTIONS) or in_lab
    return HandIn(student, _timings(report), _answers(answers))


def _text(root: Path, parts: tuple[str, ...]) -> str | None:
    """The UTF-8 text of the regular file ``root/parts`` (no link followed, at most :data:`MAX_BYTES`), or None."""
    try:
        with safefs.opened(safefs.open_root(root)) as top, safefs.opened(safefs.open_below(top, parts[:-1])) as where:
            return safefs.read_file(where, parts[-1], MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError, IndexError):
        return None


def _timings(text: str | None) -> alike_times.Timings:
    if not text or len(text) > MAX_BYTES:
        return {}
    try:
        return alike_times.timings(json.loads(text))
    except (ValueError, RecursionError, MemoryError):
        return {}


def _answers(text: str | None) -> alike_answers.Answers:
    if not text or len(text) > MAX_BYTES:
        return ()
    try:
        return alike_answers.written_answers(text)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        return ()


def _groups(links: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The connected groups of a symmetric ``student -> linked students`` map, each sorted."""
    seen: set[str] = set()
    groups = []
    for student in sorted(links):
        if student in seen:
            continue
        group, todo = set(), [student]
        while todo:  # the students linked to this one, directly or not
            current = todo.pop()
            if current not in group:
                group.add(current)
                todo.extend(links[current] - group)
        seen |= group
        groups.append(tuple(sorted(group)))
    return groups


def _link(links: dict[str, set[str]], a: str, b: str) -> None:
    links.setdefault(a, {a}).add(b)
    links.setdefault(b, {b}).add(a)


def compare(hand_ins: Iterable[HandIn], reference: alike_answers.Reference | None = None) -> tuple[Flag, ...]:
    """The groups of students whose timing reports or prediction sets are alike (see the module's description).

    ``reference``: question id -> ``(Question, the reference's value)``, to tell a wrong answer (without it,
    only over-precise ones count as unusual).
    """
    hand_ins = sorted(hand_ins, key=lambda h: h.student)
    timed = [h for h in hand_ins if h.times]
    answered = [h for h in hand_ins if h.answers]
    timing: dict[str, set[str]] = {}
    sections: dict[str, set[str]] = {}
    for index, a in enumerate(timed):
        for b in timed[index + 1 :]:
            alike = alike_times.alike(a.times, b.times)
            if alike:
                _link(timing, a.student, b.student)
                sections.setdefault(a.student, set()).update(alike)
    flags = [
        Flag("timing", group, ", ".join(sorted(set().union(*(sections.get(s, set()) for s in group)))))
        for group in _groups(timing)
    ]
    answers: dict[str, set[str]] = {}
    shared: dict[str, int] = {}
    for index, a in enumerate(answered):
        for b in answered[index + 1 :]:
            count = alike_answers.shared_unusual(a.answers, b.answers, reference or {})
            if count:
                _link(answers, a.student, b.student)
                shared[a.student] = max(shared.get(a.student, 0), count)
    flags += [Flag("predictions", group, str(max(shared.get(s, 0) for s in group))) for group in _groups(answers)]
    return tuple(flags)


def reasons(flags: Iterable[Flag]) -> dict[str, tuple[str, ...]]:
    """Each flagged student's review reasons."""
    found: dict[str, list[str]] = {}
    for flag in flags:
        for student in flag.students:
            found.setdefault(student, []).append(flag.reason(student))
    return {student: tuple(texts) for student, texts in found.items()}


def reference_answers(reference: Path | None) -> alike_answers.Reference:
    """Question id -> ``(Question, value)`` from the reference folder (the instructor's side), or {} without one;
    computed once per course and kit (:mod:`autograder.deliver.batch.answers_cache`)."""
    if reference is None or not (Path(reference) / PREDICTIONS).is_file():
        return {}
    return answers_cache.answers(Path(reference), lambda: _computed(Path(reference)))


def _computed(reference: Path) -> alike_answers.Reference:
    """The reference's answers, from its modules (torch among them)."""
    from autograder.base import tasks
    from autograder.base.reference import Reference

    ref = Reference(Path(reference), tasks.modules_present(Path(reference)))
    found: dict[str, Any] = {}
    for question in predictions.load():
        try:
            found[question.id] = (question, predictions.compute(question, ref))
        except Exception:  # a partial reference folder: this question's answers count as unusual only when over-precise
            continue
    return found
