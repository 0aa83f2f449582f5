"""Plausible variants of a reference, composed from small edits, and the one closest to what came back.

A step describes its reference computation as a *model*: a NumPy function whose
keyword-only *knobs* choose how each part is done; every knob's default is the
reference's way (a kit test holds the model at its defaults equal to the
reference). An :class:`Edit` sets one knob to a plausible wrong value and names
the mistake that value is. :func:`generate` runs the model with every set of up
to ``depth`` edits (one per knob) on a check's inputs and keys each answer by
its edits' mistake ids joined with ``&`` (``"missing_scale&softmax_query_axis"``),
so that a failed check recognises a mistake nobody wrote down as such.

Answers that equal the reference, an earlier (simpler) variant or a known
hand-written wrong answer are dropped, so a composition names only what its
answer needs. The search runs where the wrong answers are made: for public
checks when ``attnlab snapshot`` stores them (the public engine ships without
the reference), for hidden checks from the reference on the fresh inputs.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.judge.diagnose import AND, SIGNATURE, Mistake

EVERY_VARIANT: contextvars.ContextVar[bool] = contextvars.ContextVar("every_variant", default=False)
MAX_ENTRIES = 4096  # answers larger than this are not searched: the search is for the small public inputs
DEPTH = 2  # edits composed at most


@dataclass(frozen=True)
class Edit:
    """One small change to a model: knob ``knob`` set to ``value``, which is the mistake ``mistake``.

    ``signature`` tells apart two edits of one mistake (two wrong axes of a softmax are both
    ``softmax_wrong_axis``); it is part of the variant's key and dropped when the mistake is named.
    """

    mistake: Mistake
    knob: str
    value: Any
    signature: str = ""

    @property
    def key(self) -> str:
        return self.mistake.id + (SIGNATURE + self.signature if self.signature else "")


def edit(mistake: Mistake, knob: str, value: Any, signature: str = "") -> Edit:
    return Edit(mistake, knob, value, signature)


def compositions(edits: Sequence[Edit], depth: int = DEPTH) -> Iterator[tuple[Edit, ...]]:
    """Every set of 1 to ``depth`` edits with at most one edit per knob, single edits first."""
    for size in range(1, depth + 1):
        for chosen in itertools.combinations(edits, size):
            if len({e.knob for e in chosen}) == size:
                yield chosen


def _flat(value: Any) -> np.ndarray | None:
    """An answer (an array, a number or a tuple of them) as one flat float array; None if it is not numeric."""
    if isinstance(value, (tuple, list)):
        parts = [_flat(v) for v in value]
        return None if any(p is None for p in parts) else np.concatenate([p for p in parts if p is not None])
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        return None
    return array.astype(float).ravel()


def _shape(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return tuple(_shape(v) for v in value)
    return np.shape(value)


def _fingerprint(value: Any) -> tuple | None:
    """A key equal for answers that agree to 1e-9 (relative): the same shapes and the same rounded entries."""
    flat = _flat(value)
    if flat is None:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.maximum(np.abs(flat), 1.0)
        rounded = np.where(np.isfinite(flat), np.round(flat / scale, 9) * scale, flat)
    return (_shape(value), np.round(rounded, 9).tobytes())


def generate(
    model: Callable[..., Any],
    edits: Sequence[Edit],
    args: tuple,
    kwargs: Mapping[str, Any] | None = None,
    *,
    known: Mapping[str, Any] | None = None,
    depth: int = DEPTH,
) -> dict[str, Any]:
    """What every composition of ``edits`` makes of ``model(*args, **kwargs)``, by composed key.

    ``known`` holds answers already named (the hand-written wrong answers and the
    right one): a variant equal to one of them is left out, as is one equal to a
    simpler variant, one that raises, and one larger than :data:`MAX_ENTRIES`.
    """
    kwargs = dict(kwargs or {})
    seen: set[tuple] = set()
    with np.errstate(all="ignore"):
        reference = model(*args, **kwargs)
        for value in (reference, *(known or {}).values()):
            fingerprint = _fingerprint(value)
            if fingerprint is not None:
                seen.add(fingerprint)
        found: dict[str, Any] = {}
        for chosen in compositions(edits, depth):
            key = AND.join(e.key for e in chosen)
            if key in (known or {}):
                continue  # a hand-written answer of that name is kept
            try:
                value = model(*args, **kwargs, **{e.knob: e.value for e in chosen})
            except (ValueError, IndexError, TypeError, ZeroDivisionError, FloatingPointError, RuntimeError):
                continue  # this combination cannot run on these inputs (shapes that do not broadcast)
            flat = _flat(value)
            if flat is None or flat.size > MAX_ENTRIES:
                continue
            fingerprint = _fingerprint(value)
            if fingerprint in seen and not EVERY_VARIANT.get():
                continue
            seen.add(fingerprint)
            found[key] = value
    return found


@contextlib.contextmanager
def every_variant() -> Iterator[None]:
    """Within the block, :func:`generate` keeps the variants equal to another answer too: on a twin input, where a
    name found on the check's input is confirmed, each name must have its own answer (even if it is the right one)."""
    token = EVERY_VARIANT.set(True)
    try:
        yield
    finally:
        EVERY_VARIANT.reset(token)


def distinct(right: Any, wrong: dict[str, Any]) -> dict[str, Any]:
    """The wrong answers that differ from the right one and from every earlier wrong one (the first of equals is
    kept)."""
    if EVERY_VARIANT.get():  # on a twin every name keeps its answer (see every_variant)
        return dict(wrong)
    kept: dict = {}
    for mistake, value in wrong.items():
        if all(
            np.shape(value) != np.shape(other) or not np.allclose(value, other, rtol=1e-9, atol=1e-12)
            for other in (right, *kept.values())
        ):
            kept[mistake] = value
    return kept


def mistakes(edits: Sequence[Edit]) -> dict[str, Mistake]:
    """The mistakes of ``edits`` by id (one per id)."""
    return {e.mistake.id: e.mistake for e in edits}
