"""NumPy arrays and Python numbers that record what is done with them, and the ``np`` a traced module sees.

:class:`Traced` is an ``ndarray`` subclass: NumPy hands every ufunc (operators included) to its
``__array_ufunc__`` and every array function to its ``__array_function__``, which record one event each, compute
on plain arrays (so nothing inside NumPy is recorded twice) and wrap the results again. Its methods that NumPy
would compute from several ufuncs (``var``, ``mean``) record themselves as one event. :class:`TracedInt` and
:class:`TracedFloat` do the same for Python numbers. :class:`NumpyProxy` stands in for the ``numpy`` module in the
lab's modules while a call is traced, so that ``np.asarray`` (which drops subclasses) keeps the trace.

With no recorder active every one of them computes as the plain type it extends.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from autograder.sandbox.probes.trace import graph

# ndarray methods recorded as one event each (NumPy computes several of them from more than one ufunc).
METHODS = (
    "sum mean max min var std prod argmax argmin argsort cumsum clip round dot all any reshape transpose swapaxes "
    "astype copy flatten ravel squeeze repeat take nonzero"
).split()
# Constructors that make a new array from nothing traced (their arguments may hold traced sizes).
MAKERS = "zeros ones empty full eye identity arange linspace tri".split()
# Constructors that drop subclasses: in a traced module they keep the trace.
KEEPERS = "asarray array asanyarray ascontiguousarray asfortranarray asarray_chkfinite".split()
OPERATORS = {name: getattr(operator, name) for name in "add sub mul truediv floordiv mod pow neg abs".split()}


def plain(value: Any) -> Any:
    """``value`` with every traced array and number made plain again (inside lists, tuples and dicts too)."""
    if isinstance(value, Traced):
        return value.view(np.ndarray)
    if isinstance(value, TracedInt):
        return int.__int__(value)
    if isinstance(value, TracedFloat):
        return float.__float__(value)
    if type(value) is list:
        return [plain(v) for v in value]
    if type(value) is tuple:
        return tuple(plain(v) for v in value)
    if type(value) is dict:
        return {k: plain(v) for k, v in value.items()}
    return value


def wrap(
    value: Any, recorder: graph.Recorder, kind: str = "op", name: str = "", numbers: bool = False
) -> tuple[Any, list[int]]:
    """``value`` (a result) made traced again, with a new node for each array in it; the nodes made.

    Python numbers get nodes (as :class:`TracedInt` and :class:`TracedFloat`) only when ``numbers`` is set: the
    inputs, arithmetic on traced numbers, ``item()``; sizes NumPy reports (``np.shape``) stay plain.
    """
    if type(value) is tuple:
        pairs = [wrap(v, recorder, kind, name, numbers) for v in value]
        return tuple(p[0] for p in pairs), [n for p in pairs for n in p[1]]
    if type(value) is list and len(value) <= graph.MAX_ITEMS and any(isinstance(v, np.ndarray) for v in value):
        pairs = [wrap(v, recorder, kind, name, numbers) for v in value]
        return [p[0] for p in pairs], [n for p in pairs for n in p[1]]
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        array = value.view(Traced)
        node = recorder.new_node(array, kind, name)
        injected = recorder.injected(node)
        if injected is not None:
            array = np.array(injected, dtype=value.dtype).reshape(np.shape(injected)).view(Traced)
            recorder.live[node] = array
        array._tnode = node
        return array, [node]
    if isinstance(value, (np.floating, np.integer)):
        return wrap(np.asarray(value), recorder, kind, name, numbers)
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        scalar = (TracedFloat if isinstance(value, float) else TracedInt)(value)
        node = recorder.new_node(scalar, kind, name)
        injected = recorder.injected(node)
        if injected is not None:
            scalar = type(scalar)(np.asarray(injected).item())
            recorder.live[node] = scalar
        scalar._tnode = node
        return scalar, [node]
    return value, []


def record(
    lib: str, op: str, compute: Any, args: tuple, kwargs: dict, inplace: Any = None, numbers: bool = False
) -> Any:
    """Record ``compute(*args, **kwargs)`` as the event ``op`` and return its traced result.

    ``compute`` gets plain values. ``inplace`` is the traced array the operation writes into (``out=``,
    ``x[...] = v``): it gets a new node, its new version. ``numbers``: a Python number that comes back is traced
    too (see :func:`wrap`). With no recorder active this is ``compute`` on plain values.
    """
    recorder = graph.CURRENT
    if recorder is None or not recorder.on:
        return compute(*plain(args), **plain(kwargs))
    index, edit = recorder.begin(lib, op, args, kwargs)
    if edit is not None and edit.get("kind") == "call":
        args, kwargs = recorder.edited_call(edit, lib)
    with recorder.quiet():
        result = compute(*plain(args), **plain(kwargs))
    if edit is not None and edit.get("kind") == "skip":
        recorder.pass_on(edit)
    if isinstance(inplace, Traced) and (result is None or _same_memory(result, inplace)):
        node = recorder.new_node(inplace, "op")
        inplace._tnode = node
        recorder.finish(index, [node])
        return inplace if result is not None else None
    wrapped, nodes = wrap(result, recorder, numbers=numbers or lib == "python")
    recorder.finish(index, nodes)
    return wrapped


def _same_memory(result: Any, target: Traced) -> bool:
    return isinstance(result, np.ndarray) and np.shares_memory(result, target.view(np.ndarray))


class Traced(np.ndarray):
    """An array whose operations are recorded while a recorder is active; ``_tnode`` is its node."""

    _tnode: int | None = None

    def __array_finalize__(self, obj: Any) -> None:
        self._tnode = None  # a view NumPy made by itself: not a node until an operation records it

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        op = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        out = kwargs.get("out")
        target = out[0] if isinstance(out, tuple) and len(out) == 1 else None
        if method == "at":
            target = inputs[0]
        return record("numpy", op, getattr(ufunc, method), inputs, kwargs, inplace=target)

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        out = kwargs.get("out")
        return record("numpy", func.__name__, func, args, kwargs, inplace=out if isinstance(out, Traced) else None)

    def __getitem__(self, key: Any) -> Any:
        return record("numpy", "getitem", np.ndarray.__getitem__, (self, key), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        record("numpy", "setitem", np.ndarray.__setitem__, (self, key, value), {}, inplace=self)

    def __iter__(self) -> Any:
        for index in range(len(self)):
            yield self[index]

    @property
    def T(self) -> Any:
        return record("numpy", "transpose", np.transpose, (self,), {})

    def item(self, *args: Any) -> Any:
        return record("numpy", "item", np.ndarray.item, (self, *args), {}, numbers=True)

    def fill(self, value: Any) -> None:
        record("numpy", "fill", np.ndarray.fill, (self, value), {}, inplace=self)


def _method(name: str) -> Any:
    base = getattr(np.ndarray, name)

    @functools.wraps(base)
    def method(self: Traced, *args: Any, **kwargs: Any) -> Any:
        return record("numpy", name, base, (self, *args), kwargs)

    return method


for _name in METHODS:
    setattr(Traced, _name, _method(_name))


class _Scalar:
    """The recording arithmetic shared by :class:`TracedInt` and :class:`TracedFloat`."""

    _tnode: int | None = None

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        op = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        return record("numpy", op, getattr(ufunc, method), inputs, kwargs)


def _arithmetic(op: str, reflected: bool) -> Any:
    """A binary operator of a traced number: the event ``op`` with its operands in the order they are written."""
    function = OPERATORS[op]

    def method(self: Any, other: Any) -> Any:
        if not isinstance(other, (int, float)) or isinstance(other, bool):
            return NotImplemented
        return record("python", op, function, (other, self) if reflected else (self, other), {})

    return method


def _unary(op: str) -> Any:
    function = OPERATORS[op]

    def method(self: Any) -> Any:
        return record("python", op, function, (self,), {})

    return method


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    setattr(_Scalar, f"__{_op}__", _arithmetic(_op, False))
    setattr(_Scalar, f"__r{_op}__", _arithmetic(_op, True))
_Scalar.__neg__ = _unary("neg")
_Scalar.__abs__ = _unary("abs")


class TracedInt(_Scalar, int):
    """An integer whose arithmetic is recorded (a count, a size given to a lab function)."""

    __hash__ = int.__hash__


class TracedFloat(_Scalar, float):
    """A float whose arithmetic is recorded (an ``eps``, a slope, a step ``h`` given to a lab function)."""

    __hash__ = float.__hash__


def _keeper(name: str) -> Any:
    """``np.asarray`` and its kind: a traced array stays traced (the same node when nothing was copied or cast)."""
    base = getattr(np, name)

    @functools.wraps(base)
    def keeper(value: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = graph.CURRENT
        if recorder is None or not recorder.on:
            return base(plain(value), *plain(args), **plain(kwargs))
        if isinstance(value, Traced):
            raw = value.view(np.ndarray)
            result = base(raw, *plain(args), **plain(kwargs))
            unchanged = isinstance(result, np.ndarray) and (result.dtype, result.shape) == (raw.dtype, raw.shape)
            if unchanged and np.shares_memory(result, raw):
                return value
            return record("numpy", name, lambda *a, **k: result, (value, *args), kwargs)
        return record("numpy", name, base, (value, *args), kwargs)

    return keeper


def _maker(name: str) -> Any:
    base = getattr(np, name)

    @functools.wraps(base)
    def maker(*args: Any, **kwargs: Any) -> Any:
        return record("numpy", name, base, args, kwargs)

    return maker


class NumpyProxy:
    """The ``numpy`` a traced lab module sees: NumPy itself, but for constructors that keep (or start) a trace."""

    def __init__(self) -> None:
        self._own = {name: _keeper(name) for name in KEEPERS} | {name: _maker(name) for name in MAKERS}

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__.get("_own", {})
        return own[name] if name in own else getattr(np, name)

    def __dir__(self) -> list[str]:
        return dir(np)

    def __repr__(self) -> str:
        return repr(np)


PROXY = NumpyProxy()
OWN_FUNCTIONS = {id(getattr(np, name)): name for name in (*KEEPERS, *MAKERS)}


def proxy_for(value: Any) -> Any:
    """What a lab module's global ``value`` becomes while a call is traced (``value`` itself if nothing)."""
    if value is np:
        return PROXY
    name = OWN_FUNCTIONS.get(id(value)) if callable(value) else None
    return PROXY._own[name] if name is not None and value is getattr(np, name) else value
