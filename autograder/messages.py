"""The one template of every message a student reads about a failed check.

A message names the step, the call and its inputs, says what was expected and
what came back, adds the likely mistake when one was recognised, and points
to the handout section. Tests import these constants rather than copying text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.tasks import Step

FAILURE = "{step}: {call}: expected {expected}, got {got}.{diagnosis} See the handout, section '{title}' ({handout})."
DIAGNOSIS = " Likely mistake: {text}."
OUTPUT_NOTE = " Your code printed: {output}"
MAX_VALUE_CHARS = 160


def failure(step: Step, call: str, expected: str, got: str, diagnosis: str | None = None) -> str:
    """Fill the template; ``diagnosis`` is a mistake's sentence, if one was recognised."""
    return FAILURE.format(
        step=step.title,
        call=call,
        expected=expected,
        got=got,
        diagnosis=DIAGNOSIS.format(text=diagnosis) if diagnosis else "",
        title=step.title,
        handout=step.handout,
    )


def short(value: Any) -> str:
    """A one-line, bounded rendering of a value for a message."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return short(value.item())
        body = np.array2string(
            value, precision=4, threshold=12, edgeitems=2, separator=", ", max_line_width=10_000, suppress_small=False
        )
        text = f"array of shape {value.shape} {' '.join(body.split())}"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def worst_entry(got: np.ndarray, expected: np.ndarray) -> str:
    """Where two same-shape arrays differ most, e.g. ' (largest difference 0.27 at [0, 1])'."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(float) - expected.astype(float))
    if diff.size == 0 or diff.ndim == 0:
        return ""
    diff = np.where(np.isnan(diff), np.inf, diff)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    where = ", ".join(str(int(i)) for i in index)
    return f" (largest difference at [{where}]: expected {expected[index]:.6g}, got {got[index]:.6g})"
