"""While a call is traced: the lab's modules see a tracing ``np``, and each lab function records its calls.

A *lab module* is a module whose file lies in the folder of the modules being traced (the submission's working
copy in the child, the reference's folder on the trusted side). For the time of the call each gets, in its own
globals, the NumPy proxy for ``np`` and a recording wrapper for every public function of a lab module; the
classes of lab modules get recording wrappers for their methods and properties. Everything is put back when the
call ends, whatever it did.

A *stand-in* (the upstream check, :mod:`autograder.judge.diagnose.trace.upstream`) answers a lab function's call with
a value the grader computed with the reference for the same inputs, after running the function itself (so what
it does to its arguments still happens): the downstream code then runs as it would with a correct callee.
"""

from __future__ import annotations

import functools
import inspect
import types
from pathlib import Path
from typing import Any

import numpy as np

from autograder.sandbox.probes.trace import arrays, graph, torchside

MATCH_RTOL, MATCH_ATOL = 1e-7, 1e-9  # a stand-in answers a call whose inputs are these (the same numbers)


def _home(value: Any) -> dict | None:
    """The globals of the module that defined ``value`` (a module, a function, a class), if it has Python ones."""
    if isinstance(value, types.ModuleType):
        return vars(value)
    if isinstance(value, types.FunctionType):
        return value.__globals__
    if isinstance(value, type):
        for member in vars(value).values():
            function = member.fget if isinstance(member, property) else member
            if isinstance(function, types.FunctionType):
                return function.__globals__
    return None


def _in_lab(namespace: dict | None, folders: tuple[str, ...]) -> bool:
    path = namespace.get("__file__") if namespace is not None else None
    return isinstance(path, str) and any(str(Path(path).resolve()).startswith(f) for f in folders)


class Patches:
    """The lab modules patched for one traced call, and how to put each back."""

    def __init__(self, recorder: graph.Recorder, stand_ins: list[dict]) -> None:
        self.recorder = recorder
        self.stand_ins: dict[str, list[dict]] = {}
        for entry in stand_ins:
            self.stand_ins.setdefault(str(entry.get("function")), []).append(entry)
        self.unanswered: list[dict] = []
        self._seen: set[int] = set()
        self._globals: list[tuple[dict, str, Any]] = []
        self._classes: list[tuple[type, str, Any]] = []
        self._patched_classes: set[int] = set()

    # -- modules ------------------------------------------------------------------------------------------------
    def module(self, module: types.ModuleType) -> types.ModuleType:
        """Patch ``module`` and every lab module its globals reach (once each)."""
        pending = [vars(module)]
        while pending:
            namespace = pending.pop()
            if id(namespace) in self._seen:
                continue
            self._seen.add(id(namespace))
            for name, value in list(namespace.items()):
                home = _home(value)
                if home is not None and id(home) not in self._seen and _in_lab(home, self.recorder.folders):
                    pending.append(home)
                replacement = self._replacement(name, value, home)
                if replacement is not value:
                    self._globals.append((namespace, name, value))
                    namespace[name] = replacement
        return module

    def _replacement(self, name: str, value: Any, home: dict | None) -> Any:
        proxy = arrays.proxy_for(value)
        if proxy is not value:
            return proxy
        if name.startswith("_") or isinstance(value, types.ModuleType) or not _in_lab(home, self.recorder.folders):
            return value
        if isinstance(value, types.FunctionType):
            return self.function(value, f"{home.get('__name__', '?')}.{value.__qualname__}")
        if isinstance(value, type):
            self.cls(value, str(home.get("__name__", "?")))
        return value

    def cls(self, cls: type, module: str) -> None:
        """Record the calls of a lab class's methods and properties (the class itself is patched, then restored)."""
        if id(cls) in self._patched_classes:
            return
        self._patched_classes.add(id(cls))
        for name, value in list(vars(cls).items()):
            if name.startswith("_") and name not in ("__init__", "__len__", "__call__"):
                continue
            qualified = f"{module}.{cls.__qualname__}.{name}"
            if isinstance(value, types.FunctionType):
                self._classes.append((cls, name, value))
                setattr(cls, name, self.function(value, qualified))
            elif isinstance(value, property) and value.fget is not None:
                self._classes.append((cls, name, value))
                setattr(cls, name, property(self.function(value.fget, qualified), value.fset, value.fdel))

    def restore(self) -> None:
        for namespace, name, value in reversed(self._globals):
            namespace[name] = value
        for cls, name, value in reversed(self._classes):
            setattr(cls, name, value)
        self._globals.clear()
        self._classes.clear()

    # -- lab calls ----------------------------------------------------------------------------------------------
    def function(self, function: Any, qualified: str) -> Any:
        """``function`` recording each call as one event (what runs inside it nested below it)."""
        patches = self

        @functools.wraps(function)
        def lab_call(*args: Any, **kwargs: Any) -> Any:
            recorder = graph.CURRENT
            if recorder is None or not recorder.on:
                return function(*args, **kwargs)
            with recorder.quiet():
                for value in (*args, *kwargs.values()):
                    if _is_object(value):
                        recorder.remember(value, "object")
            index, edit = recorder.begin("lab", qualified, args, kwargs)
            if edit is not None and edit.get("kind") == "call":
                args, kwargs = recorder.edited_call(edit, "lab")
            recorder.stack.append(index)
            try:
                result = function(*args, **kwargs)
            finally:
                recorder.stack.pop()
            result = patches.stand_in(qualified, args, kwargs, result)
            if edit is not None and edit.get("kind") == "skip":
                source = recorder.decode({"n": edit.get("node")}, "lab")
                with recorder.quiet():
                    value = graph.plain_value(source)
                    if value is None:
                        raise graph.EditError("a skip edit whose node holds no number")
                    result = _converted(value, result, recorder)
            with recorder.quiet():
                encoded = recorder.encode(result)
                nodes = _nodes_in(encoded)
            if index >= 0:
                recorder.events[index][9] = encoded
            recorder.finish(index, nodes)
            return result

        return lab_call

    def stand_in(self, qualified: str, args: tuple, kwargs: dict, result: Any) -> Any:
        """The stand-in's answer for this call (converted to the types ``result`` has), or ``result``."""
        entries = self.stand_ins.get(qualified)
        if not entries:
            return result
        recorder = self.recorder
        with recorder.quiet():
            given = _bound(args, kwargs)
            for entry in entries:
                if _same_inputs(given, entry.get("args", [])):
                    return _converted(entry.get("result"), result, recorder)
            self.unanswered.append({"function": qualified, "args": [recorder.encode(a) for a in given]})
        return result


def _is_object(value: Any) -> bool:
    """An argument that is neither data nor a container of it (a cache, a callable): a node by identity."""
    plain_types = (np.ndarray, np.generic, int, float, str, bytes, tuple, list, dict, slice, type(None))
    return not isinstance(value, plain_types) and not torchside._is_tensor(value) and not isinstance(value, type)


def _bound(args: tuple, kwargs: dict) -> list:
    return [*args, *kwargs.values()]


def _same_inputs(given: list, wanted: list) -> bool:
    if len(given) != len(wanted):
        return False
    for value, target in zip(given, wanted):
        if target is None:
            continue
        mine = graph.plain_value(arrays.plain(value))
        theirs = np.asarray(target)
        if mine is None or mine.shape != theirs.shape:
            return False
        if not np.allclose(mine.astype(float), theirs.astype(float), rtol=MATCH_RTOL, atol=MATCH_ATOL, equal_nan=True):
            return False
    return True


def _converted(answer: Any, like: Any, recorder: graph.Recorder) -> Any:
    """The reference's ``answer`` in the form the student's function returned (tuple, tensor, dtype)."""
    if isinstance(answer, (tuple, list)):
        parts = like if isinstance(like, (tuple, list)) and len(like) == len(answer) else [None] * len(answer)
        items = [_converted(a, p, recorder) for a, p in zip(answer, parts)]
        return tuple(items) if isinstance(answer, tuple) else items
    if torchside.tensors_in(like):
        import torch

        return torch.as_tensor(np.asarray(answer), dtype=like.dtype, device=like.device)
    array = np.asarray(answer)
    if isinstance(like, np.ndarray) and like.dtype.kind == array.dtype.kind:
        array = array.astype(like.dtype)
    wrapped, _nodes = arrays.wrap(array, recorder, kind="const")
    return wrapped


def _nodes_in(tree: Any) -> list[int]:
    if isinstance(tree, dict):
        if set(tree) == {"n"}:
            return [tree["n"]]
        return [n for value in tree.values() for n in _nodes_in(value)]
    if isinstance(tree, list):
        return [n for value in tree for n in _nodes_in(value)]
    return []


def traced_inputs(recorder: graph.Recorder, names: list[str], values: list[Any]) -> list[Any]:
    """The call's arguments with every array and number in them traced, each an input node named by its path."""
    return [_input(recorder, name, value, 0) for name, value in zip(names, values)]


def _input(recorder: graph.Recorder, name: str, value: Any, depth: int) -> Any:
    if torchside._is_tensor(value):
        recorder.remember(value, "input", name)
        return value
    if isinstance(value, (np.ndarray, int, float, np.generic)) and not isinstance(value, (bool, np.bool_)):
        if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            return value
        wrapped, _ = arrays.wrap(value if not isinstance(value, np.generic) else np.asarray(value), recorder,
                                 kind="input", name=name, numbers=True)  # fmt: skip
        return wrapped
    if depth < graph.MAX_DEPTH and type(value) in (list, tuple):
        items = [_input(recorder, f"{name}[{i}]", v, depth + 1) for i, v in enumerate(value)]
        return type(value)(items)
    if depth < graph.MAX_DEPTH and type(value) is dict:
        return {k: _input(recorder, f"{name}[{k!r}]", v, depth + 1) for k, v in value.items()}
    return value


def parameter_names(function: Any, args: tuple, kwargs: dict) -> tuple[list[str], list[str]]:
    """The names of the positional arguments (from the signature where it has them) and of the keywords."""
    try:
        parameters = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        parameters = []
    names = [parameters[i] if i < len(parameters) else f"arg{i}" for i in range(len(args))]
    return names, list(kwargs)
