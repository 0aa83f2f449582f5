"""The recorder of one traced call: its nodes (values), its events (operations), and the edits a replay makes.

A *node* is one value the computation held: an input, the output of an operation, a constant array it met. An
*event* is one operation: its name, its arguments (a node reference or a plain constant each, see
:func:`Recorder.encode`), the nodes it produced, where in the lab's files it was called, and the lab call it ran
inside. Nodes and events are numbered in the order they happen, so a replay of the same code on inputs of the
same shapes numbers them the same way; that is what lets an edit name the event or node it changes.

Everything here runs on either side of the sandbox; on the student's side it is only ever a claim.
"""

from __future__ import annotations

import linecache
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

MAX_EVENTS = 2500  # a longer computation is cut there (the trace says so)
MAX_VALUE_ENTRIES = 4096  # a node's value is kept when it has at most this many entries
MAX_VALUE_BYTES = 24 << 20  # every kept value together
MAX_ITEMS = 64  # entries of one encoded tuple, list or dict
MAX_DEPTH = 4  # nesting of one encoded argument
MAX_TEXT = 64  # characters of an encoded string
MAX_CONSTANT = 1 << 20  # an edit's integer (an edit's constants come from the student's trace)
LINE_CHARS = 160
DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 float16 bfloat16 float32 float64 float double half long int".split()
)

CURRENT: Recorder | None = None  # the recorder of the call being traced, if any


class EditError(Exception):
    """An edit that cannot be applied to this run (a node it names does not exist, a constant out of bounds)."""


def plain_value(value: Any) -> np.ndarray | None:
    """``value`` (a NumPy array or scalar, a torch tensor, a number) as a float64/int64/bool array, or None."""
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        tensor = value.detach().cpu()
        if tensor.is_complex():
            return None
        if tensor.dtype.is_floating_point:
            tensor = tensor.double()
        array = tensor.numpy()
    elif isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
        array = np.asarray(value).view(np.ndarray) if isinstance(value, np.ndarray) else np.asarray(value)
    elif isinstance(value, (bool, np.bool_)):
        array = np.asarray(bool(value))
    else:
        return None
    kind = array.dtype.kind
    if kind == "f":
        return np.array(array, dtype=np.float64)
    if kind in "iu":
        return np.array(array, dtype=np.int64)
    if kind == "b":
        return np.array(array, dtype=bool)
    return None


def shape_and_dtype(value: Any) -> tuple[list[int], str]:
    if type(value).__module__.startswith("torch") and hasattr(value, "dtype"):
        return [int(d) for d in value.shape], str(value.dtype)  # "torch.float32": a tensor's
    if isinstance(value, (np.ndarray, np.generic)):
        return [int(d) for d in np.shape(value)], str(value.dtype)
    if isinstance(value, bool):
        return [], "bool"
    if isinstance(value, int):
        return [], "int"
    if isinstance(value, float):
        return [], "float"
    return [], type(value).__name__[:40]


def _like(value: np.ndarray, like: Any) -> Any:
    """A value an edit puts in an operation's operand, in the kind and dtype of the operand it replaces."""
    if value.dtype.kind not in "biuf" or value.size > MAX_VALUE_ENTRIES:
        raise EditError("a value edit of no numbers, or too large")
    if type(like).__module__.startswith("torch") and hasattr(like, "dtype"):
        import torch

        return torch.as_tensor(np.array(value)).to(dtype=like.dtype, device=like.device)
    dtype = getattr(like, "dtype", None)
    return np.array(value, dtype=dtype) if isinstance(dtype, np.dtype) else np.array(value)


class Recorder:
    """Records one call; ``plan`` says what to keep and which edits to make (see :mod:`.probes`)."""

    def __init__(self, folders: tuple[str, ...], plan: dict) -> None:
        self.folders = folders  # absolute folder prefixes ("/.../work/") whose files are the lab's code
        self.keep_values = bool(plan.get("values", True))
        self.sources = bool(plan.get("sources", False))
        self.max_events = int(min(plan.get("max_events", MAX_EVENTS), MAX_EVENTS))
        self.events: list[list] = []  # [op, lib, args, kwargs, out, file, line, depth, parent, result]
        self.nodes: list[list] = []  # [kind, shape, dtype, value index, name]
        self.values: list[np.ndarray] = []
        self.live: list[Any] = []  # each node's object, for replays (and to keep ids alive)
        self.by_id: dict[int, int] = {}  # id(object) -> node, for tensors, plain arrays and lab objects
        self.stack: list[int] = []  # the lab calls open now
        self.files: list[str] = []
        self.lines: dict[str, str] = {}
        self.active = 0  # recording while > 0 (a quiet block lowers it)
        self.truncated = False
        self.value_bytes = 0
        self.calls: dict[int, dict] = {}
        self.pending: Any = None  # the value a skipped event passes on, for the next node made
        self.injections: dict[int, Any] = {}
        for edit in plan.get("edits", ()):
            if edit.get("kind") == "inject":
                self.injections[int(edit["node"])] = edit["value"]
            else:
                self.calls[int(edit["event"])] = edit

    # -- switching on and off ----------------------------------------------------------------------------------
    @contextmanager
    def recording(self) -> Iterator[Recorder]:
        global CURRENT
        saved, CURRENT = CURRENT, self
        self.active += 1
        try:
            yield self
        finally:
            self.active -= 1
            CURRENT = saved

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Operations inside the block are the recorder's own (copying a value): they are not recorded."""
        self.active -= 1
        try:
            yield
        finally:
            self.active += 1

    @property
    def on(self) -> bool:
        return self.active > 0

    # -- nodes --------------------------------------------------------------------------------------------------
    def new_node(self, obj: Any, kind: str, name: str = "") -> int:
        """A node for ``obj`` (its value copied now, when small enough); ``kind`` is input, op, const or object."""
        node = len(self.nodes)
        with self.quiet():
            shape, dtype = shape_and_dtype(obj)
            index = -1
            if self.keep_values and kind != "object":
                value = plain_value(obj)
                if value is not None and value.size <= MAX_VALUE_ENTRIES:
                    if self.value_bytes + value.nbytes <= MAX_VALUE_BYTES:
                        index = len(self.values)
                        self.values.append(value)
                        self.value_bytes += value.nbytes
        self.nodes.append([kind, shape, dtype, index, name[:80]])
        self.live.append(obj)
        return node

    def remember(self, obj: Any, kind: str, name: str = "") -> int:
        """The node of an object tracked by identity (a tensor, a plain array, a lab object), made on first sight."""
        known = self.by_id.get(id(obj))
        if known is not None and self.live[known] is obj:
            return known
        node = self.new_node(obj, kind, name)
        self.by_id[id(obj)] = node
        return node

    def node_of(self, value: Any) -> int | None:
        """The node a traced value carries (``_tnode``), or that its identity maps to; None for an untracked one."""
        node = getattr(value, "_tnode", None) if not isinstance(value, type) else None
        if isinstance(node, int) and 0 <= node < len(self.nodes):
            return node
        known = self.by_id.get(id(value))
        if known is not None and self.live[known] is value:
            return known
        return None

    # -- events -------------------------------------------------------------------------------------------------
    def where(self) -> tuple[int, int]:
        """The lab file and line the current operation was called from: ``(file index, line)``, (-1, 0) if none."""
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            for folder in self.folders:
                if name.startswith(folder):
                    relative = name[len(folder) :]
                    if relative not in self.files:
                        self.files.append(relative)
                    if self.sources:
                        key = f"{relative}:{frame.f_lineno}"
                        if key not in self.lines:
                            self.lines[key] = linecache.getline(name, frame.f_lineno).strip()[:LINE_CHARS]
                    return self.files.index(relative), frame.f_lineno
            frame = frame.f_back
        return -1, 0

    def begin(self, lib: str, op: str, args: Any, kwargs: Any) -> tuple[int, dict | None]:
        """Open an event (its arguments encoded now, before anything changes them); its index and its edit."""
        index = len(self.events)
        if index >= self.max_events:
            self.truncated = True
            return -1, None
        with self.quiet():
            encoded_args, encoded_kwargs = self.encode(list(args)), self.encode(dict(kwargs))
            file, line = self.where()
        parent = self.stack[-1] if self.stack else -1
        self.events.append([op[:60], lib, encoded_args, encoded_kwargs, [], file, line, len(self.stack), parent, None])
        return index, self.calls.get(index)

    def finish(self, index: int, outputs: list[int]) -> None:
        if index >= 0:
            self.events[index][4] = outputs

    def injected(self, node: int) -> Any:
        """The value a replay puts in place of ``node`` (None: keep what was computed)."""
        if self.pending is not None:
            value, self.pending = self.pending, None
            return value
        return self.injections.get(node)

    def pass_on(self, edit: dict) -> None:
        """A ``skip`` edit: the event computes as before, then gives the value of the edit's node instead."""
        source = self.decode({"n": edit.get("node")}, "numpy")
        with self.quiet():
            value = plain_value(source)
        if value is None:
            raise EditError("a skip edit whose node holds no number")
        self.pending = value

    # -- arguments ----------------------------------------------------------------------------------------------
    def encode(self, value: Any, depth: int = 0) -> Any:
        """An argument as plain data: ``{"n": node}`` for a traced value, the constant itself otherwise."""
        node = self.node_of(value)
        if node is not None:
            return {"n": node}
        if value is None or isinstance(value, (bool, np.bool_)):
            return None if value is None else bool(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, (float, np.floating)):
            value = float(value)
            return value if math.isfinite(value) else {"f": repr(value)}
        if isinstance(value, str):
            return value[:MAX_TEXT]
        if value is Ellipsis:
            return {"e": 1}
        if isinstance(value, slice):
            return {"s": [self.encode(v, depth + 1) for v in (value.start, value.stop, value.step)]}
        dtype = _dtype_name(value)
        if dtype is not None:
            return {"dt": dtype}
        if isinstance(value, np.ndarray) or (type(value).__module__.startswith("torch") and hasattr(value, "dtype")):
            return {"n": self.remember(value, "const")}
        if depth >= MAX_DEPTH:
            return {"o": type(value).__name__[:40]}
        if isinstance(value, (tuple, list)):
            items = [self.encode(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
            return {"l": items} if isinstance(value, list) else {"t": items}
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {"d": {k[:MAX_TEXT]: self.encode(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}}
        return {"o": type(value).__name__[:40]}

    def decode(self, tree: Any, lib: str, depth: int = 0) -> Any:
        """The Python value an edit's argument stands for (the inverse of :meth:`encode` on the trusted side).

        Raises EditError for anything outside the plain forms (the edit's constants came from the student).
        """
        if depth > MAX_DEPTH:
            raise EditError("an argument nested too deep")
        if tree is None or isinstance(tree, (bool, float, str)):
            return tree[:MAX_TEXT] if isinstance(tree, str) else tree
        if isinstance(tree, int):
            if abs(tree) > MAX_CONSTANT:
                raise EditError(f"an integer of {tree}")
            return tree
        if not isinstance(tree, dict) or len(tree) != 1:
            raise EditError("an argument of no known form")
        ((kind, body),) = tree.items()
        if kind == "n":
            if not isinstance(body, int) or not 0 <= body < len(self.live):
                raise EditError(f"no node {body!r} in this run")
            return self.live[body]
        if kind == "v" and isinstance(body, list) and len(body) == 2 and isinstance(body[0], np.ndarray):
            return _like(body[0], self.decode(body[1], lib, depth + 1))
        if kind == "f" and body in ("inf", "-inf", "nan"):
            return float(body)
        if kind == "e":
            return Ellipsis
        if kind == "s" and isinstance(body, list) and len(body) == 3:
            return slice(*(self.decode(v, lib, depth + 1) for v in body))
        if kind == "dt" and body in DTYPES:
            return _dtype(body, lib)
        if kind in ("t", "l") and isinstance(body, list) and len(body) <= MAX_ITEMS:
            items = [self.decode(v, lib, depth + 1) for v in body]
            return tuple(items) if kind == "t" else items
        if kind == "d" and isinstance(body, dict) and len(body) <= MAX_ITEMS:
            return {str(k)[:MAX_TEXT]: self.decode(v, lib, depth + 1) for k, v in body.items()}
        raise EditError(f"an argument of kind {kind!r}")

    def edited_call(self, edit: dict, lib: str) -> tuple[list, dict]:
        """The arguments an edit of kind ``call`` gives the event (every one of them, constants and nodes)."""
        args, kwargs = edit.get("args"), edit.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise EditError("a call edit without its arguments")
        return [self.decode(a, lib) for a in args], {str(k): self.decode(v, lib) for k, v in kwargs.items()}

    # -- the report ---------------------------------------------------------------------------------------------
    def report(self) -> dict:
        """Everything recorded, as plain data (numbers, strings, lists, arrays)."""
        return {
            "events": self.events,
            "nodes": self.nodes,
            "values": self.values,
            "files": self.files,
            "lines": self.lines,
            "truncated": self.truncated,
        }


def _dtype_name(value: Any) -> str | None:
    """The name of a NumPy or torch dtype (or scalar type), if ``value`` is one."""
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    for kind, name in ((float, "float64"), (int, "int64"), (bool, "bool")):
        if value is kind:
            return name
    if type(value).__name__ == "dtype" and type(value).__module__.startswith("torch"):
        return str(value).removeprefix("torch.")
    return None


def _dtype(name: str, lib: str) -> Any:
    if lib == "torch":
        import torch

        return getattr(torch, name)
    return np.dtype({"half": "float16", "double": "float64", "long": "int64"}.get(name, name))
