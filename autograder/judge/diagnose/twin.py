"""A call's *twin*: the same call on fresh numbers, the second input a named mistake must reproduce.

A mistake is named only when it reproduces the student's numbers on the check's own input and on its twin
(:mod:`autograder.judge.diagnose.answers`, :mod:`autograder.judge.diagnose.trace`): one input can agree with a wrong
answer by coincidence (a symmetric score matrix makes the softmax over the wrong axis the transpose of the right
one), two unrelated ones hardly do. The twin keeps what the call is (shapes, dtypes, integer arrays such as
positions or indices, boolean masks, where the infinities are, each float array's typical size and offset) and draws
every float array again, from a seed that depends on the float arrays alone: a probe on ``(Q, K, V)`` and the case
it is checked against, ``(Q, K, V, mask)``, get the same twin. A call without floats (a count of parameters) doubles
its integer arguments instead, and one with only flags (``gpt2_small_params(exact)``) flips them; a call with none
of these has no twin.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from autograder.sandbox.protocol import AsTorch

MAX_DEPTH = 6


def floats(value: Any, depth: int = 0) -> list[np.ndarray]:
    """The float arrays of a call's arguments, in order (a dict's by key): what its twin draws again."""
    if isinstance(value, AsTorch):
        value = value.array
    if isinstance(value, np.ndarray):
        return [value] if value.dtype.kind == "f" and value.size else []
    if depth < MAX_DEPTH and isinstance(value, dict):
        return [a for key in sorted(value, key=str) for a in floats(value[key], depth + 1)]
    if depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        return [a for item in value for a in floats(item, depth + 1)]
    return []


def seed_of(args: tuple, kwargs: dict) -> int:
    """A seed that depends on the call's float arrays only (the same failure gets the same twin)."""
    digest = hashlib.sha256()
    for array in floats((args, kwargs)):
        digest.update(str((array.shape, array.dtype.str)).encode())
        digest.update(np.ascontiguousarray(array).tobytes()[:65536])
    return int.from_bytes(digest.digest()[:8], "big")


def same_draw(first: Any, second: Any) -> bool:
    """Whether two twins drew the same float arrays (the answers of one are then the answers of the other)."""
    a, b = floats(first), floats(second)
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def _holds(value: Any, kind: Any, depth: int = 0) -> bool:
    """Whether ``kind(item)`` holds for an item of a call's arguments (nested dicts, lists and tuples)."""
    if kind(value):
        return True
    if depth < MAX_DEPTH and isinstance(value, dict):
        return any(_holds(v, kind, depth + 1) for v in value.values())
    if depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        return any(_holds(v, kind, depth + 1) for v in value)
    return False


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def redrawn(array: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``array`` (floats) drawn again: the same shape and dtype, its typical offset and spread, its infinities kept."""
    finite = np.isfinite(array)
    values = array[finite].astype(float)
    centre = float(np.median(values)) if values.size else 0.0
    spread = float(np.std(values)) if values.size > 1 else 0.0
    spread = spread if spread > 1e-12 else max(abs(centre), 1.0) * 0.5
    fresh = rng.normal(centre, spread, size=array.shape)
    return np.where(finite, fresh, array).astype(array.dtype)


def _twin(value: Any, rng: np.random.Generator, redraw: str, depth: int) -> Any:
    """``value`` with its floats drawn again (``redraw`` "floats"), its integers doubled ("ints"), or its flags
    flipped ("flags")."""
    if isinstance(value, AsTorch):
        return AsTorch(_twin(value.array, rng, redraw, depth))
    if isinstance(value, np.ndarray):
        return redrawn(value, rng) if redraw == "floats" and value.dtype.kind == "f" and value.size else value
    if redraw == "flags" and isinstance(value, bool):
        return not value
    if redraw == "ints" and isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return type(value)(2 * int(value))
    if depth < MAX_DEPTH and isinstance(value, dict):
        drawn = {key: _twin(value[key], rng, redraw, depth + 1) for key in sorted(value, key=str)}
        return {key: drawn[key] for key in value}
    if depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        return type(value)(_twin(v, rng, redraw, depth + 1) for v in value)
    return value


def inputs(args: tuple, kwargs: dict | None = None) -> tuple[tuple, dict] | None:
    """The twin of the call ``f(*args, **kwargs)``, or None when nothing in it can be drawn again."""
    kwargs = dict(kwargs or {})
    call = (args, kwargs)
    has_ints, has_flags = _holds(call, _is_int), _holds(call, lambda v: isinstance(v, bool))
    redraw = "floats" if floats(call) else "ints" if has_ints else "flags" if has_flags else ""
    if not redraw:
        return None
    rng = np.random.default_rng(seed_of(args, kwargs))
    drawn = _twin((tuple(args), kwargs), rng, redraw, 0)
    return tuple(drawn[0]), dict(drawn[1])
