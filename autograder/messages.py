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


PRECISION_NOTE = (
    " (largest difference {size:.2g} at [{where}], below the printed digits: {expected:.6g} either way; "
    "this check is about precision and allows a difference of {allowed})"
)


def worst_entry(got: np.ndarray, expected: np.ndarray, *, rtol: float = 0.0, atol: float = 0.0) -> str:
    """Where two same-shape arrays differ most, e.g. ' (largest difference at [0, 1]: expected 0.27, got 0.31)'.

    When the two entries print the same at six digits the message would show no
    difference at all, so it gives the size of the difference instead and says
    that the check is about precision, with what it allows (``atol + rtol * |expected|``).
    """
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(float) - expected.astype(float))
    if diff.size == 0 or diff.ndim == 0:
        return ""
    diff = np.where(np.isnan(diff), np.inf, diff)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    where = ", ".join(str(int(i)) for i in index)
    wanted, value = float(expected[index]), float(got[index])
    if np.isfinite(diff[index]) and f"{wanted:.6g}" == f"{value:.6g}":
        allowed = f"{atol:g} + {rtol:g} x |expected|" if rtol else f"{atol:g}"
        return PRECISION_NOTE.format(size=float(diff[index]), where=where, expected=wanted, allowed=allowed)
    return f" (largest difference at [{where}]: expected {wanted:.6g}, got {value:.6g})"
