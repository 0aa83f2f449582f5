"""The tracing probes: trace a lab call or another probe, replay it with edits, and call lab functions plainly.

Each takes ``load`` first, as every probe does: in the student's child it imports the student's modules, on the
grader's trusted side (:mod:`autograder.judge.oracle`) the reference's. A *plan* (a dict of plain data) says what to
keep and what to change:

- ``values``: keep each node's value (default True); ``sources``: keep the text of each line an operation was
  called from (the student's own lines, for the message; never asked of the reference);
- ``edits``: a replay's changes (the trusted side only): ``{"kind": "call", "event": i, "args": [...],
  "kwargs": {...}}`` calls event ``i`` with other arguments (encoded as :meth:`graph.Recorder.encode` writes them,
  ``{"n": node}`` naming this run's nodes, ``{"v": [array, {"n": node}]}`` a value given in the kind and dtype of
  that node's), ``{"kind": "skip", "event": i, "node": n}`` makes event ``i`` give
  node ``n`` instead of computing, and ``{"kind": "inject", "node": n, "value": array}`` puts a value in place of
  node ``n``;
- ``stand_ins``: the upstream check's answers, ``{"function": "softmax.softmax", "args": [...], "result": ...}``
  (the student's side only).

The reply is plain data: the trace (:meth:`graph.Recorder.report`; its structure as the bytes of a JSON text, its
values as arrays), the value the call returned, and how it ended.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from autograder.sandbox.probes import PROBES, Load, probe
from autograder.sandbox.probes.trace import arrays, graph, patching, torchside

MAX_REPLAYS = 16  # plans in one trace_replays request
MESSAGE_CHARS = 300


def _materialized(value: Any) -> Any:
    """An argument as student code gets it: ``AsTorch`` (sent as such to an in-process oracle) as a tensor."""
    if type(value).__name__ == "AsTorch" and hasattr(value, "array"):
        import torch

        return torch.from_numpy(value.array.copy())
    if type(value) in (list, tuple):
        return type(value)(_materialized(v) for v in value)
    if type(value) is dict:
        return {k: _materialized(v) for k, v in value.items()}
    return value


def _folders(path: str | None) -> tuple[str, ...]:
    if not path:
        return ()
    folder = Path(path).parent
    return tuple(dict.fromkeys((str(folder).rstrip("/") + "/", str(folder.resolve()).rstrip("/") + "/")))


def _error(error: BaseException, recorder: graph.Recorder) -> dict:
    """Where a traced call raised: its type, message and the deepest lab line it passed."""
    file, line = None, None
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        for folder in recorder.folders:
            if name.startswith(folder):
                file, line = name[len(folder) :], tb.tb_lineno
        tb = tb.tb_next
    try:
        message = str(error)[:MESSAGE_CHARS]
    except Exception:  # a message that cannot be read
        message = ""
    return {"type": type(error).__name__[:80], "message": message, "file": file, "line": line}


def _run(load: Load, target: dict, args: list, kwargs: dict, plan: dict) -> dict:
    """Run ``target`` (``{"call": [module, function]}`` or ``{"probe": name}``) traced; the report."""
    recorder = graph.Recorder((), plan)
    patches = patching.Patches(recorder, list(plan.get("stand_ins", ())))

    def traced_load(name: str) -> Any:
        module = load(name)
        if not recorder.folders:
            recorder.folders = _folders(getattr(module, "__file__", None))
        return patches.module(module)

    args, kwargs = _materialized(list(args)), _materialized(dict(kwargs))
    result, error, inputs = None, None, []
    mode = torchside.mode() if "torch" in sys.modules else contextlib.nullcontext()
    try:
        with recorder.recording(), mode, warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # a replay's edits may make NaNs: the trace says so, not stderr
            if "call" in target:
                module, function = target["call"]
                callee = getattr(traced_load(module), function)
                names, keywords = patching.parameter_names(callee, tuple(args), kwargs)
                traced = patching.traced_inputs(recorder, names, args)
                traced_kw = dict(zip(keywords, patching.traced_inputs(recorder, keywords, list(kwargs.values()))))
                inputs = [[n, recorder.node_of(v)] for n, v in zip(names + keywords, [*traced, *traced_kw.values()])]
                result = callee(*traced, **traced_kw)
            else:
                name = target["probe"]
                if name.startswith("trace_") or name not in PROBES:
                    raise ValueError(f"probe {name!r} cannot be traced")
                traced = patching.traced_inputs(recorder, [f"arg{i}" for i in range(len(args))], args)
                result = PROBES[name](traced_load, *traced)
    except Exception as caught:  # the call's own error: reported, the trace up to it kept
        error = _error(caught, recorder)
    finally:
        patches.restore()
    with recorder.recording(), recorder.quiet():
        encoded = recorder.encode(result) if error is None else None
    report = recorder.report()
    structure = {
        "events": report["events"],
        "nodes": report["nodes"],
        "files": report["files"],
        "lines": report["lines"],
        "inputs": inputs,
        "result": encoded,
        "unanswered": patches.unanswered,
    }
    return {
        "structure": _packed(structure),
        "values": report["values"],
        "truncated": report["truncated"],
        "returned": arrays.plain(result) if error is None else None,
        "error": error,
    }


def _packed(structure: dict) -> np.ndarray:
    """The trace's structure (events, nodes: thousands of small lists) as the bytes of its JSON text: one array
    crosses the process boundary where a nested value of that many items would not (the protocol's item bound)."""
    return np.frombuffer(json.dumps(structure, separators=(",", ":")).encode("utf-8"), dtype=np.uint8)


@probe
def trace_call(load: Load, module: str, function: str, args: list, kwargs: dict, plan: dict) -> dict:
    """``module.function(*args, **kwargs)`` traced under ``plan`` (see the module docstring)."""
    return _run(load, {"call": [module, function]}, args, kwargs, plan)


@probe
def trace_probe(load: Load, name: str, args: list, plan: dict) -> dict:
    """The probe ``name`` on ``args``, traced (every lab call it makes, and what they compute)."""
    return _run(load, {"probe": name}, args, {}, plan)


@probe
def trace_replays(load: Load, target: dict, args: list, kwargs: dict, plans: list) -> list:
    """Several traced runs of one target, one per plan (a replay's edits each): the grader's trusted side only."""
    return [_run(load, target, args, kwargs, plan) for plan in plans[:MAX_REPLAYS]]


@probe
def lab_calls(load: Load, calls: list) -> list:
    """What the lab functions ``calls`` (``[qualified name, args, kwargs]`` each) return, or how each raised.

    Module-level functions only (a method's object cannot cross); the reply is ``{"ok": True, "value": ...}``
    or ``{"ok": False, "error": type name}`` per call.
    """
    replies = []
    for qualified, args, kwargs in calls[:64]:
        module, _dot, name = str(qualified).rpartition(".")
        try:
            if "." in module or not module or name.startswith("_"):
                raise ValueError(f"{qualified} is not a module-level lab function")
            value = getattr(load(module), name)(*_materialized(list(args)), **_materialized(dict(kwargs)))
            replies.append({"ok": True, "value": arrays.plain(value)})
        except Exception as caught:  # the function rejects these inputs: the upstream check treats it as unknown
            replies.append({"ok": False, "error": type(caught).__name__[:80]})
    return replies
