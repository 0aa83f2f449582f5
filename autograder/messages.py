"""The one template of every message a student reads about a failed check.

A message names the step, the call and its inputs, says what was expected and
what came back, adds the likely mistake when one was recognised, and points
to the handout section. Tests import these constants rather than copying text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from autograder.i18n import N_, _, language
from autograder.tasks import Step, handout_link

# The English source of each template; ``_()`` looks up the active language's text where it is filled.
FAILURE = N_(
    "{step}: {call}: expected {expected}, got {got}.{diagnosis} See the handout, section '{title}' ({handout})."
)
DIAGNOSIS = N_(" Likely mistake: {text}.")
OUTPUT_NOTE = N_(" Your code printed: {output}")
ARRAY = N_("array of shape {shape} {values}")
NOT_IMPLEMENTED = N_("{functions}: not implemented yet — handout section '{title}' ({handout})")
# What a check expected when a value came back in the wrong form, and how that value is named.
A_TUPLE = N_("a tuple of {count} ({names})")
AN_ARRAY, AN_ARRAY_OF_SHAPE, OF_SHAPE = N_("an array"), N_("an array of shape {shape}"), N_("shape {shape}")
A_NUMBER = N_("a number")
ARRAY_OF_DTYPE = N_("an array of dtype {dtype} and shape {shape}")
AN_OBJECT = N_("an object of type {type}")
A_SEQUENCE = N_("a {type} of {count} items")
MAX_VALUE_CHARS = 160
# numpy 2 writes a scalar as np.int64(5) inside a tuple or list; its 1.25 print mode writes 5, as people do.
PLAIN_PRINT = {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}


def failure(step: Step, call: str, expected: str, got: str, diagnosis: str | None = None) -> str:
    """Fill the template; ``diagnosis`` is a mistake's sentence, if one was recognised.

    The template, the step's title and the texts of ``call``, ``expected``,
    ``got`` and ``diagnosis`` are each looked up in the active language's
    catalog (a text already translated, or one with values filled in, has no
    entry and stays as it is).
    """
    return _(FAILURE).format(
        step=_(step.title),
        call=_(call),
        expected=_(expected),
        got=_(got),
        diagnosis=_(DIAGNOSIS).format(text=_(diagnosis)) if diagnosis else "",
        title=_(step.title),
        handout=handout(step),
    )


def handout(step: Step) -> str:
    """The step's section in the handout of the active language."""
    return handout_link(step, language())


def not_implemented(step: Step, functions: list[str]) -> str:
    """One line for the functions of ``step`` that still raise ``NotImplementedError``."""
    return _(NOT_IMPLEMENTED).format(functions=", ".join(functions), title=_(step.title), handout=handout(step))


def plain(value: Any) -> Any:
    """``value`` with every numpy scalar made a Python number, inside tuples, lists and dicts too."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def shape(value: Any) -> str:
    """A shape as people write it: ``(1, 5)``, never ``(np.int64(1), np.int64(5))``."""
    dims = tuple(int(d) for d in (value.shape if hasattr(value, "shape") else value))
    return str(dims)


@contextmanager
def plain_numbers() -> Iterator[None]:
    """Within the block, numpy scalars print as plain numbers everywhere (``f"{shape}"`` included)."""
    with np.printoptions(**PLAIN_PRINT):
        yield


def entry(value: float) -> str:
    """One array entry as the chapter writes it: four decimals (0.0759), or powers of ten when far from 1."""
    if not np.isfinite(value):
        return "nan" if np.isnan(value) else "inf" if value > 0 else "-inf"
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value + 0.0:.4f}"
    return f"{value:.3e}"


def short(value: Any) -> str:
    """A one-line, bounded rendering of a value for a message."""
    value = plain(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return short(value.item())
        with plain_numbers():
            body = np.array2string(
                value,
                precision=4,
                threshold=12,
                edgeitems=2,
                separator=", ",
                max_line_width=10_000,
                formatter={"float_kind": entry},  # 0.1750, as the chapter prints it; not numpy's padded "0.175 "
            )
        text = _(ARRAY).format(shape=shape(value), values=" ".join(body.split()))
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


WORST = N_(" (largest difference at [{where}]: expected {expected}, got {got})")
PRECISION_NOTE = N_(
    " (largest difference {size} at [{where}], below the printed digits: {expected} either way; "
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
        return _(PRECISION_NOTE).format(
            size=f"{float(diff[index]):.2g}", where=where, expected=f"{wanted:.6g}", allowed=allowed
        )
    return _(WORST).format(where=where, expected=f"{wanted:.6g}", got=f"{value:.6g}")
