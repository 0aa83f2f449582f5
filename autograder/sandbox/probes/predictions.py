"""Probe of the predict-first step: read one answer from the student's ``PREDICTIONS`` dict.

Only plain data comes back: None, bools, ints, floats, short strings, and
lists of those (tuples and small numeric numpy arrays become lists). Anything
else (an object, a callable, a subclass of a number with its own ``__eq__``)
is refused with its type name, so nothing the student defines can take part
in the comparison. The dict is read with ``dict``'s own methods, so a
subclass that overrides ``__getitem__`` or ``get`` is not asked.

A reply that is not an answer says why twice: ``detail`` in English words,
and ``why`` (a key of :data:`WHY`) with the ``fields`` its sentence needs, so
the grader writes that sentence in the student's language (the sandboxed
child knows none).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from autograder.i18n import N_, Nn_, _, counted
from autograder.sandbox import replies
from autograder.sandbox.probes import Load, probe

MAX_ITEMS = 64  # numbers and strings in one answer, all levels together
MAX_DEPTH = 3  # nested lists
MAX_CHARS = 200  # one string answer
MAX_KEYS = 20  # keys listed when an entry is missing
NAME = "PREDICTIONS"
# Why a reply holds no answer, as the sentences the grader shows (filled with the reply's ``fields``).
WHY: dict[str, str | tuple[str, str]] = {
    "too_many": Nn_("an answer with more than {limit} item", "an answer with more than {limit} items"),
    "long_string": Nn_(
        "a string of {length} character (at most {limit})", "a string of {length} characters (at most {limit})"
    ),
    "array": N_("an array of dtype {dtype} and shape {shape} (write a plain literal)"),
    "nested": Nn_("lists nested more than {limit} level deep", "lists nested more than {limit} deep"),
    "object": N_("an object of type {type} (write a plain literal: a number, a string, a list or a tuple)"),
    "undefined": N_("predictions.py defines no {name}"),
    "not_a_dict": N_("{name} is an object of type {type}, not a dict"),
}
COUNT_FIELD = {"too_many": "limit", "long_string": "length", "nested": "limit"}  # the number that picks the form
KEY_OF_TYPE = N_("a key of type {type}")  # a key of PREDICTIONS that is not a string, when an entry is missing
NO_KEYS = N_("none")


def sentence(why: str, fields: dict[str, Any]) -> str:
    """The sentence of ``why`` (a key of :data:`WHY`) in the active language, filled with ``fields``.

    Raises ValueError or KeyError when ``fields`` lack what the sentence needs.
    """
    text = WHY[why]
    chosen = counted(text, float(fields[COUNT_FIELD[why]])) if isinstance(text, tuple) else _(text)
    return chosen.format(**fields)


class NotPlain(Exception):
    """An answer that is not plain data; ``why`` (a key of :data:`WHY`) and ``fields`` say what it is."""

    def __init__(self, why: str, **fields: Any) -> None:
        super().__init__(sentence(why, fields))
        self.why, self.fields = why, fields


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """``value`` as plain data, counting items against ``budget``; :class:`NotPlain` otherwise."""
    budget[0] -= 1
    if budget[0] < 0:
        raise NotPlain("too_many", limit=MAX_ITEMS)
    kind = type(value)
    if value is None or kind in (bool, int, float):
        return value
    if kind is str:
        if len(value) > MAX_CHARS:
            raise NotPlain("long_string", length=len(value), limit=MAX_CHARS)
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)  # a plain ndarray even for a subclass, so its own tolist is not asked
        if array.dtype.kind not in "biuf" or array.ndim > MAX_DEPTH or array.size > MAX_ITEMS:
            raise NotPlain("array", dtype=str(array.dtype), shape=str(tuple(int(d) for d in array.shape)))
        return array.tolist()
    if kind in (list, tuple):
        if depth >= MAX_DEPTH:
            raise NotPlain("nested", limit=MAX_DEPTH)
        return [_plain(item, depth + 1, budget) for item in value]
    raise NotPlain("object", type=kind.__name__)


def _computed(value: Any, depth: int = 0) -> Any:
    """What the student's own code returned, in the forms :func:`_plain` reads: a torch tensor (of any dtype,
    bfloat16 and float16 included) as a NumPy array, a ``torch.Size`` or other tuple as a tuple, inside tuples and
    lists too. A prediction is read as it was written; a computed value is whatever the student's code returns."""
    if type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "dtype"):
        tensor = value.detach().cpu()
        return (tensor.double() if tensor.dtype.is_floating_point else tensor).numpy()
    if isinstance(value, tuple) and depth < MAX_DEPTH:
        return tuple(_computed(item, depth + 1) for item in value)
    if type(value) is list and depth < MAX_DEPTH:
        return [_computed(item, depth + 1) for item in value]
    return value


def _refused(status: str, why: str, **fields: Any) -> dict:
    """A reply without an answer: the English ``detail``, and ``why`` and ``fields`` for the grader's words."""
    return {"status": status, "value": None, "detail": sentence(why, fields), "why": why, "fields": fields}


STATUS = ("ok", "missing", "not_plain", "no_dict", "raised")


@probe(reply=replies.record(status=replies.one_of(*STATUS), value=replies.anything, detail=replies.text))
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
        return _refused("no_dict", "undefined", name=NAME)
    if not issubclass(type(table), dict):  # not isinstance: a __class__ property cannot pass
        return _refused("no_dict", "not_a_dict", name=NAME, type=type(table).__name__)
    answer = dict.get(table, question_id, marker)
    if answer is marker:
        # each key as [its repr, ""] when it is a string, ["", its type's name] when it is not
        keys = [
            [repr(key[:40]), ""] if type(key) is str else ["", type(key).__name__]
            for key in list(dict.keys(table))[:MAX_KEYS]
        ]
        shown = [text or KEY_OF_TYPE.format(type=kind) for text, kind in keys]
        return {"status": "missing", "value": None, "detail": ", ".join(shown) or NO_KEYS, "keys": keys}
    try:
        return {"status": "ok", "value": _plain(answer, 0, [MAX_ITEMS]), "detail": ""}
    except NotPlain as error:
        return _refused("not_plain", error.why, **error.fields)


class _Module:
    """One of the student's modules as a question's ``compute`` code sees it: it notes each function it hands out."""

    def __init__(self, name: str, module: Any, used: list[str]) -> None:
        self._name, self._module, self._used = name, module, used

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._module, attribute)
        if f"{self._name}.{attribute}" not in self._used:
            self._used.append(f"{self._name}.{attribute}")
        return value


class _Modules:
    """The student's modules under the name the compute code uses for them (``ref.scaling.attention``)."""

    def __init__(self, load: Load, used: list[str]) -> None:
        self._load, self._used = load, used

    def __getattr__(self, name: str) -> _Module:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Module(name, self._load(name), self._used)


class _Chapter:
    """The chapter's values as the compute code reads them (``chapter.inputs("RU_Q")``, ``chapter.value(id)``).

    The grader sends the catalog's text with the call: student code runs in this child, which reads none of the
    kit's files once it has started, so :mod:`autograder.base.chapter` cannot load it here.
    """

    def __init__(self, catalog: str) -> None:
        self._values = json.loads(catalog)

    def inputs(self, name: str) -> np.ndarray:
        return np.asarray(self._values["_inputs"][name], dtype=float)

    def value(self, entry: str) -> Any:
        raw = self._values[entry]
        try:
            return np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            return raw


@probe(reply=replies.record(status=replies.one_of(*STATUS), value=replies.anything))
def own_value(load: Load, compute: str, catalog: str) -> dict:
    """What a question's ``compute`` code gives with the student's own modules in place of the reference.

    ``compute`` is the question's trusted code from ``data/predictions.toml``, sent by the grader (an
    expression, or statements that assign ``answer``); ``catalog`` is the text of the chapter's values
    (its inputs and the values the questions name), for the code's ``chapter``. The reply:
    ``{"status": ..., "value": ..., "used": [...]}`` where ``used`` names the student's functions it called
    (``"kv_cache.kv_cache_bytes"``) and ``status`` is
    ``"ok"`` (``value`` is plain data), ``"raised"`` (``error`` and ``detail``: the exception's type and message)
    or ``"not_plain"`` (``why`` and ``fields``, as for :func:`prediction`).
    """
    used: list[str] = []
    scope: dict[str, Any] = {"ref": _Modules(load, used), "np": np, "chapter": _Chapter(catalog)}
    try:
        try:
            code, expression = compile(compute, "<question compute>", "eval"), True
        except SyntaxError:
            code, expression = compile(compute, "<question compute>", "exec"), False
        with np.errstate(all="ignore"):
            if expression:
                value = eval(code, scope)  # the kit's own question code; the student's functions it calls are theirs
            else:
                exec(code, scope)
                value = scope.get("answer")
    except Exception as error:  # the student's function raised (or returned what the question code cannot use)
        return {
            "status": "raised",
            "value": None,
            "error": type(error).__name__,
            "detail": str(error)[:200],
            "used": used,
        }
    try:
        return {"status": "ok", "value": _plain(_computed(value), 0, [MAX_ITEMS]), "detail": "", "used": used}
    except NotPlain as failure:
        return {**_refused("not_plain", failure.why, **failure.fields), "used": used}
