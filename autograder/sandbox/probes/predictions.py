"""Probe of the predict-first step: read one answer from the student's ``PREDICTIONS`` dict.

Only plain data comes back: None, bools, ints, floats, short strings, and
lists of those (tuples and small numeric numpy arrays become lists). Anything
else (an object, a callable, a subclass of a number with its own ``__eq__``)
is refused with its type name, so nothing the student defines can take part
in the comparison. The dict is read with ``dict``'s own methods, so a
subclass that overrides ``__getitem__`` or ``get`` is not asked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe

MAX_ITEMS = 64  # numbers and strings in one answer, all levels together
MAX_DEPTH = 3  # nested lists
MAX_CHARS = 200  # one string answer
MAX_KEYS = 20  # keys listed when an entry is missing
NAME = "PREDICTIONS"


class NotPlain(Exception):
    """An answer that is not plain data; the message says what it is."""


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """``value`` as plain data, counting items against ``budget``; :class:`NotPlain` otherwise."""
    budget[0] -= 1
    if budget[0] < 0:
        raise NotPlain(f"an answer with more than {MAX_ITEMS} items")
    kind = type(value)
    if value is None or kind in (bool, int, float):
        return value
    if kind is str:
        if len(value) > MAX_CHARS:
            raise NotPlain(f"a string of {len(value)} characters (at most {MAX_CHARS})")
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)  # a plain ndarray even for a subclass, so its own tolist is not asked
        if array.dtype.kind not in "biuf" or array.ndim > MAX_DEPTH or array.size > MAX_ITEMS:
            raise NotPlain(f"an array of dtype {array.dtype} and shape {array.shape} (write a plain literal)")
        return array.tolist()
    if kind in (list, tuple):
        if depth >= MAX_DEPTH:
            raise NotPlain(f"lists nested more than {MAX_DEPTH} deep")
        return [_plain(item, depth + 1, budget) for item in value]
    raise NotPlain(f"an object of type {kind.__name__} (write a plain literal: a number, a string, a list or a tuple)")


@probe
def prediction(load: Load, question_id: str) -> dict:
    """The student's answer to ``question_id``: ``{"status": ..., "value": ..., "detail": ...}``.

    ``status`` is ``"ok"`` (``value`` holds the plain answer, possibly None),
    ``"missing"`` (no such key; ``detail`` lists the keys there are),
    ``"not_plain"`` (``detail`` says what the answer is) or ``"no_dict"``
    (``detail`` says what ``PREDICTIONS`` is instead).
    """
    module = load("predictions")
    marker = object()
    table = getattr(module, NAME, marker)
    if table is marker:
        return {"status": "no_dict", "value": None, "detail": f"predictions.py defines no {NAME}"}
    if not issubclass(type(table), dict):  # not isinstance: a __class__ property cannot pass
        return {
            "status": "no_dict",
            "value": None,
            "detail": f"{NAME} is an object of type {type(table).__name__}, not a dict",
        }
    answer = dict.get(table, question_id, marker)
    if answer is marker:
        keys = [
            repr(key[:40]) if type(key) is str else f"a key of type {type(key).__name__}"
            for key in list(dict.keys(table))[:MAX_KEYS]
        ]
        return {"status": "missing", "value": None, "detail": ", ".join(keys) or "none"}
    try:
        return {"status": "ok", "value": _plain(answer, 0, [MAX_ITEMS]), "detail": ""}
    except NotPlain as error:
        return {"status": "not_plain", "value": None, "detail": str(error)}
