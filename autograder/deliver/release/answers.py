"""The predict-first step's expected answers, as a release scan looks for them: numbers in the forms they are written.

An answer is *distinctive* when a text that holds it gives it away: a number
with at least three significant digits (``2.68435456``, ``0.1342``), or an
integer of four digits or more. Short answers (``1.0``, ``[1, 0]``, ``(4, 7, 5)``,
``"swapped"``) are what a reasoned prediction gives and appear all over any
text; no file can be failed for holding them, and none lists them by
question either, since the step has no snapshot and the reference's answer
lines are solution lines the scan already fails on.

A distinctive number is looked for as text (its ``repr``, 3 to 6 significant
digits, fixed and exponent notation, a decimal comma as the Turkish handout
writes it, and times 1e3, 1e6 or 1e9 when that is a whole number of four
digits or more, with or without thousands separators) and as the bytes of a
float64 or float32 (a snapshot's ``.npy`` member, any binary file).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

SIGNIFICANT = 3  # the fewest significant digits of a form that gives an answer away
SCALES = (1e3, 1e6, 1e9)  # an answer in GB is also written in bytes


@dataclass(frozen=True)
class Answer:
    """One distinctive expected answer and the forms a scan looks for."""

    question: str
    value: float
    pattern: re.Pattern[str]
    binary: tuple[bytes, ...]  # float64: looked for in every binary file
    arrays: tuple[bytes, ...]  # float32: only in arrays (.npy), where 4 bytes are not a chance match

    def in_text(self, text: str) -> str | None:
        """The form of this answer found in ``text``, if any."""
        found = self.pattern.search(text)
        return found.group(0) if found else None

    def in_bytes(self, data: bytes, *, array: bool = False) -> bool:
        """Whether the binary ``data`` holds this answer as a float64 (or, in an ``array``, a float32)."""
        return any(packed in data for packed in self.binary + (self.arrays if array else ()))


def _digits(form: str) -> int:
    """The significant digits of a written number (``"2.680"`` has 3, ``"0.0134"`` has 3)."""
    mantissa = re.split(r"[eE]", form)[0]
    digits = re.sub(r"\D", "", mantissa).lstrip("0").rstrip("0") if "." in mantissa else mantissa.lstrip("-0")
    return len(digits)


def forms(value: float) -> set[str]:
    """The written forms of ``value`` that give it away (each with at least :data:`SIGNIFICANT` digits)."""
    if not math.isfinite(value):
        return set()
    written = {repr(value), *(f"{value:.{n}g}" for n in range(SIGNIFICANT, 7))}
    written |= {f"{value:.{n}e}" for n in range(SIGNIFICANT - 1, 6)}
    written = {w for w in written if _digits(w) >= SIGNIFICANT}
    if not written:
        return set()
    written |= {w.replace(".", ",") for w in written if "e" not in w and "." in w}
    for scale in SCALES:
        whole = value * scale
        if abs(whole) >= 1000 and abs(whole - round(whole)) <= 1e-9 * abs(whole):
            number = round(whole)
            written |= {str(number), f"{number:,}", f"{number:_}", f"{number:,}".replace(",", " ")}
    return written


def distinctive(value: float) -> bool:
    """Whether ``value`` is an answer a text can be failed for holding."""
    return bool(forms(value))


def answer(question: str, value: float) -> Answer:
    """The scan's view of the distinctive answer ``value`` of ``question``."""
    alternatives = "|".join(re.escape(form) for form in sorted(forms(value), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\d.,_])(?:{alternatives})(?![\d])")
    return Answer(question, value, pattern, (struct.pack("<d", value),), (struct.pack("<f", value),))


def numbers(value: object) -> list[float]:
    """The numbers inside a normalised answer (a number, or a tuple of them); none for a choice."""
    if isinstance(value, bool) or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (tuple, list)):
        return [n for item in value for n in numbers(item)]
    return []


def expected(solutions: Path) -> tuple[Answer, ...]:
    """The distinctive expected answers of the predict-first questions, computed from the reference in
    ``solutions`` (the instructor's side: the release runs there). A question whose code the reference folder
    cannot run (a module missing, say) has no answer to look for."""
    from autograder.base import tasks
    from autograder.base.reference import Reference
    from autograder.judge import predictions

    if not (Path(solutions) / "predictions.py").is_file():
        return ()
    ref = Reference(Path(solutions), tasks.modules_present(Path(solutions)))
    found = []
    for question in predictions.load():
        try:
            value = predictions.compute(question, ref)
        except Exception:  # (a partial reference folder: nothing of this question to scan for)
            continue
        found.extend(answer(question.id, number) for number in numbers(value) if distinctive(number))
    return tuple(found)
