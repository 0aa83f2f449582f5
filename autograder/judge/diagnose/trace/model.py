"""A trace as typed data, read from a probe's reply with every field checked (a student's trace is their claim).

A reply that is not exactly what :mod:`autograder.sandbox.probes.trace` writes raises :class:`TraceError`; the
diagnosis then falls back to what it had before it asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_EVENTS = 5000
MAX_NODES = 20000
MAX_STRUCTURE_BYTES = 16 << 20  # the JSON text of a trace's events and nodes


class TraceError(Exception):
    """The reply is not a well-formed trace."""


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise TraceError(what)


def nodes_in(tree: Any, depth: int = 0) -> list[int]:
    """The node ids an encoded argument refers to, in order."""
    if depth > 8:
        return []
    if isinstance(tree, dict):
        if set(tree) == {"n"} and isinstance(tree["n"], int):
            return [tree["n"]]
        return [n for value in tree.values() for n in nodes_in(value, depth + 1)]
    if isinstance(tree, (list, tuple)):
        return [n for value in tree for n in nodes_in(value, depth + 1)]
    return []


@dataclass(frozen=True)
class Event:
    """One operation: its name and library, arguments (encoded), the nodes it made, where it was called from."""

    index: int
    op: str
    lib: str  # "numpy", "torch", "python" or "lab" (a call of the lab's own function)
    args: list
    kwargs: dict
    out: tuple[int, ...]
    file: str | None
    line: int
    depth: int
    parent: int
    result: Any = None  # a lab call's return value, encoded

    @property
    def lab(self) -> bool:
        return self.lib == "lab"

    @property
    def operands(self) -> list[int]:
        """Every node among the arguments, positional first."""
        return nodes_in(self.args) + nodes_in(self.kwargs)

    @property
    def function(self) -> str:
        """A lab call's function, without its module (``softmax``, ``KVCache.append``); the op otherwise."""
        return self.op.partition(".")[2] if self.lab else self.op

    @property
    def module(self) -> str:
        return self.op.partition(".")[0] if self.lab else ""


@dataclass(frozen=True)
class Node:
    index: int
    kind: str  # "input", "op", "const", "object"
    shape: tuple[int, ...]
    dtype: str
    value: np.ndarray | None
    name: str = ""


@dataclass
class Trace:
    """The events and nodes of one traced run, and how it ended."""

    events: list[Event]
    nodes: list[Node]
    files: list[str]
    lines: dict[str, str]
    truncated: bool
    inputs: list[tuple[str, int]]
    result: Any
    returned: Any
    error: dict | None
    unanswered: list[dict]
    producer: list[int] = field(default_factory=list)  # node -> the innermost event that made it, -1 for none
    outermost: list[int] = field(default_factory=list)  # node -> the shallowest event that gave it out, -1
    consumers: dict[int, list[int]] = field(default_factory=dict)  # node -> events that read it
    givers: dict[int, list[int]] = field(default_factory=dict)  # node -> every event that gave it out

    def __post_init__(self) -> None:
        self.producer = [-1] * len(self.nodes)
        self.outermost = [-1] * len(self.nodes)
        for event in self.events:
            for node in event.out:
                self.givers.setdefault(node, []).append(event.index)
                current = self.producer[node]
                if current < 0 or (self.events[current].lab and not event.lab):
                    self.producer[node] = event.index
                outer = self.outermost[node]
                if outer < 0 or event.depth < self.events[outer].depth:
                    self.outermost[node] = event.index
            for node in event.operands:
                self.consumers.setdefault(node, []).append(event.index)

    # -- reading ------------------------------------------------------------------------------------------------
    def value(self, node: int) -> np.ndarray | None:
        return self.nodes[node].value if 0 <= node < len(self.nodes) else None

    def made_by(self, node: int) -> Event | None:
        """The innermost event that produced ``node`` (None for an input or a constant)."""
        index = self.producer[node] if 0 <= node < len(self.nodes) else -1
        return self.events[index] if index >= 0 else None

    def given_by(self, node: int) -> Event | None:
        """The shallowest event that gave ``node`` out (a lab call that returned it, else its operation)."""
        index = self.outermost[node] if 0 <= node < len(self.nodes) else -1
        return self.events[index] if index >= 0 else None

    def source(self, event: Event) -> tuple[str | None, int, str]:
        """Where an event was called from: ``(file, line, that line's text if the trace kept it)``."""
        return event.file, event.line, self.lines.get(f"{event.file}:{event.line}", "")

    def ancestors(self, nodes: list[int], stop: set[int] | frozenset[int] = frozenset()) -> set[int]:
        """The nodes ``nodes`` were computed from (themselves included), through the innermost producers; the
        nodes of ``stop`` are kept but not gone behind."""
        seen: set[int] = set()
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if node in seen or not 0 <= node < len(self.nodes):
                continue
            seen.add(node)
            event = self.made_by(node) if node not in stop else None
            if event is not None:
                stack.extend(event.operands)
        return seen

    def output_nodes(self, path: tuple[int, ...]) -> list[int]:
        """The nodes of the returned value's part at ``path`` (a tuple index path), from the encoded result."""
        tree = self.result
        for index in path:
            if isinstance(tree, dict) and len(tree) == 1 and next(iter(tree)) in ("t", "l"):
                items = next(iter(tree.values()))
                if not isinstance(items, list) or not 0 <= index < len(items):
                    return []
                tree = items[index]
            else:
                return []
        found = nodes_in(tree)
        if found:
            return found
        return self._node_with_value(tree)

    def _node_with_value(self, constant: Any) -> list[int]:
        """A returned plain number (``int(...)``, ``float(...)``): the last node that holds that value."""
        if isinstance(constant, bool) or not isinstance(constant, (int, float)):
            return []
        for node in reversed(self.nodes):
            if node.value is not None and node.value.size == 1 and node.kind in ("op", "input"):
                if np.isclose(float(node.value.reshape(())), float(constant), rtol=1e-12, atol=0):
                    return [node.index]
        return []


def _array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value
    return None


def unpacked(reply: Any) -> Any:
    """A reply with its packed structure (the bytes of a JSON text, see the trace probes) read back."""
    if not isinstance(reply, dict) or "structure" not in reply:
        return reply
    blob = reply["structure"]
    _need(isinstance(blob, np.ndarray) and blob.dtype == np.uint8 and blob.ndim == 1, "the structure")
    _need(blob.size <= MAX_STRUCTURE_BYTES, "the structure's size")
    try:
        structure = json.loads(blob.tobytes().decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise TraceError(f"the structure: {error}") from None
    _need(isinstance(structure, dict), "the structure")
    kept = {k: structure.get(k) for k in ("events", "nodes", "files", "lines", "inputs", "result", "unanswered")}
    return {**{k: v for k, v in reply.items() if k != "structure"}, **kept}


def parse(reply: Any) -> Trace:
    """A :class:`Trace` from a trace probe's reply; :class:`TraceError` for anything malformed."""
    reply = unpacked(reply)
    _need(isinstance(reply, dict), "the reply is not a dict")
    raw_events, raw_nodes = reply.get("events"), reply.get("nodes")
    values, files = reply.get("values"), reply.get("files")
    _need(isinstance(raw_events, list) and len(raw_events) <= MAX_EVENTS, "events")
    _need(isinstance(raw_nodes, list) and len(raw_nodes) <= MAX_NODES, "nodes")
    _need(isinstance(values, list) and isinstance(files, list), "values or files")
    _need(all(isinstance(f, str) for f in files), "file names")
    nodes = []
    for index, raw in enumerate(raw_nodes):
        _need(isinstance(raw, list) and len(raw) == 5, "a node")
        kind, shape, dtype, value_index, name = raw
        _need(isinstance(kind, str) and isinstance(dtype, str) and isinstance(name, str), "a node's fields")
        _need(isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape), "a node's shape")
        _need(isinstance(value_index, int) and -1 <= value_index < len(values), "a node's value")
        value = _array(values[value_index]) if value_index >= 0 else None
        if value is not None and value.size != int(np.prod(shape, dtype=np.int64)):
            value = None
        if value is not None:
            value = value.reshape(shape)
        nodes.append(Node(index, kind[:12], tuple(shape), dtype[:24], value, name[:80]))
    events = []
    for index, raw in enumerate(raw_events):
        _need(isinstance(raw, list) and len(raw) == 10, "an event")
        op, lib, args, kwargs, out, file, line, depth, parent, result = raw
        _need(isinstance(op, str) and isinstance(lib, str), "an event's name")
        _need(isinstance(args, dict) and isinstance(kwargs, dict), "an event's arguments")
        _need(isinstance(out, list) and all(isinstance(n, int) and 0 <= n < len(nodes) for n in out), "outputs")
        _need(isinstance(file, int) and -1 <= file < len(files), "an event's file")
        _need(all(isinstance(v, int) for v in (line, depth, parent)) and -1 <= parent < index, "an event's place")
        events.append(
            Event(
                index,
                op[:60],
                lib[:8],
                list(args.get("l", [])),
                dict(kwargs.get("d", {})),
                tuple(out),
                files[file] if file >= 0 else None,
                line,
                depth,
                parent,
                result,
            )
        )
    for event in events:
        _need(all(0 <= n < len(nodes) for n in event.operands), "an argument's node")
    inputs = reply.get("inputs") or []
    _need(isinstance(inputs, list), "inputs")
    parsed_inputs = [
        (str(name)[:80], int(node)) for name, node in inputs if isinstance(node, int) and 0 <= node < len(nodes)
    ]
    lines = reply.get("lines") or {}
    _need(isinstance(lines, dict), "lines")
    error = reply.get("error")
    _need(error is None or isinstance(error, dict), "error")
    unanswered = reply.get("unanswered") or []
    _need(isinstance(unanswered, list), "unanswered")
    return Trace(
        events,
        nodes,
        list(files),
        {str(k)[:200]: str(v)[:200] for k, v in lines.items()},
        bool(reply.get("truncated")),
        parsed_inputs,
        reply.get("result"),
        reply.get("returned"),
        error,
        unanswered,
    )
