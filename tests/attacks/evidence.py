"""Hand-ins that attack the evidence a verdict rests on, one per class of attack (issue 30); our own code, written from
the public descriptions of each class (the kernel-speed leaderboards' reward-hack reports, the kit's own attack
rounds).

Each builder makes a hand-in from the reference with one module changed. What must hold for each (the test grades
them through the real commands, tests/attacks/test_evidence.py): the checks it targets fail (:data:`MUST_FAIL`),
and nothing breaks the grader. ``offloaded`` computes right, so no check fails for it: what must hold is that the
grader's clock still sees the work.

Classes:

- ``probe_swap``: replaces entries of the child's probe table and the functions probes use, so that untouched
  predictions and formula timers would look right (the table is bound before student code runs, and no verdict
  rests on what a probe computes);
- ``self_consistent``: predictions that agree with the student's own wrong code (the public half also holds that
  code to the reference);
- ``fake_decoder``: a decoder with no attention and no cache whose gpt_step and gpt_forward agree with each other
  (the grader's timing compares every token's logits with the reference's);
- ``kernel_name``: compare_with_torch that reports zero and the name "math" whatever ran (the grader watches which
  kernel PyTorch picks and knows the difference it must report);
- the timing reward hacks: ``memoise`` (cached outputs), ``lazy`` (an output filled by a thread after the call
  returned), ``clocks`` (patched clocks and statistics, made-up timers), ``frames`` (the harness's objects searched
  through frames and ``gc``), ``detects_measured`` (honest only when called from the grader's harness), ``batched``
  (one call's work kept for the next), ``offloaded`` (the work done in a thread that runs between requests),
  ``half_precision`` (bfloat16 inside), ``bent_slope`` (a report whose largest size is driven towards zero),
  ``stale_buffer`` (the buffer of an earlier call returned);
- ``forged_replies``: replies of the wrong shape written straight into the reply pipe for the probes the graders
  take apart (a check's failure, never the grader's).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from tests import kit

# -- code appended to a module of the reference (its definitions replace the reference's) ------------------------
PROBE_SWAP = """

import sys as _sys


def _fake_prediction(load, question_id):
    return {"status": "ok", "value": 1.0, "detail": ""}


def _fake_own_value(load, compute, catalog):
    return {"status": "ok", "value": 1.0, "detail": "", "used": ["scaling.attention"]}


def _fake_timer(load, *args, **kwargs):
    return {"value": 1e-3, "calls": 4}


for _name in list(_sys.modules):
    if _name.startswith("autograder.sandbox.probes"):
        _module = _sys.modules[_name]
        _table = getattr(_module, "PROBES", None)
        if isinstance(_table, dict):
            _table["prediction"] = _fake_prediction
            _table["own_value"] = _fake_own_value
            _table["timing_student_timer"] = _fake_timer
        for _attribute in ("prediction", "own_value"):
            if hasattr(_module, _attribute):
                setattr(_module, _attribute, _fake_prediction if _attribute == "prediction" else _fake_own_value)
"""
PREDICTIONS_NONE = """

PREDICTIONS = {key: None for key in PREDICTIONS}
"""
# kv_cache_bytes that counts bytes per value of 1 (a wrong function) and the prediction its answer gives
SELF_CONSISTENT_KV = """

def kv_cache_bytes(n_layers, n_kv_heads, d_head, n_tokens, bytes_per_value=2, batch=1):
    return 2 * n_layers * n_kv_heads * d_head * n_tokens * batch  # the bytes per value left out
"""
SELF_CONSISTENT_PREDICTIONS = """

PREDICTIONS = {**PREDICTIONS, "kv_cache_gb": 1.34}  # what the wrong kv_cache_bytes gives, not the chapter's 2.68
"""
FAKE_DECODER = '''

def gpt_forward(weights, tokens):
    """No attention at all: each position's logits from its own token embedding."""
    tokens = torch.as_tensor(tokens)
    return weights["wte"][tokens] @ weights["wte"].T


def new_cache(weights):
    return [[KVCache() for _ in range(int(weights["n_heads"]))] for _ in weights["blocks"]]


def gpt_step(weights, token, position, cache):
    """No cache either: the same embedding logits, so gpt_step and gpt_forward always agree with each other."""
    for layer in cache:
        for head in layer:
            head.append(torch.zeros(1, 1), torch.zeros(1, 1))
    return weights["wte"][int(token)] @ weights["wte"].T
'''
KERNEL_NAME = """

def compare_with_torch(Q, K, V, mask=None):
    return 0.0, "math"
"""
MEMOISE = """

_computed_kernel = naive_attention
_remembered = {}


def naive_attention(Q, K, V, causal=False):
    key = (tuple(Q.shape), bool(causal))
    if key not in _remembered:
        _remembered[key] = _computed_kernel(Q, K, V, causal)
    return _remembered[key]
"""
LAZY = '''

import threading as _threading
import time as _time

_computed_kernel = naive_attention


def naive_attention(Q, K, V, causal=False):
    """Returns at once; a thread fills the output in afterwards (read later, it would be right)."""
    out = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=V.dtype)
    def fill():
        _time.sleep(0.05)  # after the call returned
        out.copy_(_computed_kernel(Q, K, V, causal))

    worker = _threading.Thread(target=fill)
    worker.start()
    return out
'''
CLOCKS = """

import statistics as _statistics
import time as _time

_time.perf_counter = lambda: 0.0
_time.thread_time = lambda: 0.0
_time.perf_counter_ns = lambda: 0
_statistics.median = lambda values: 1e-4


def time_attention(n, d=64, device=None, repeats=5, *, kind="naive", causal=False, return_times=False):
    seconds = [4e-10 * n * n * d / 64] * repeats  # a formula: no kernel runs
    return seconds if return_times else seconds[0]


def time_decoding(n_tokens=512, d_model=64, use_cache=True, device=None, *, return_tokens=False):
    seconds = [3e-4 if use_cache else 3e-4 + 4e-6 * t for t in range(1, n_tokens + 1)]
    return (seconds, [START_TOKEN] * n_tokens) if return_tokens else seconds
"""
FRAMES = '''

import gc as _gc
import sys as _sys


def naive_attention(Q, K, V, causal=False):
    """Looks through the caller's frames and the heap for what the harness expects; answers zeros if nothing."""
    found = []
    frame = _sys._getframe(1)
    while frame is not None:
        found += [value for name, value in frame.f_locals.items() if name in ("expected", "reference", "answer")]
        frame = frame.f_back
    try:
        found += [o for o in _gc.get_objects() if isinstance(o, dict) and "expected" in o]
    except Exception:
        pass
    if found:
        return found[0]
    return torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=V.dtype)
'''
DETECTS_MEASURED = '''

import inspect as _inspect

_computed_kernel = naive_attention


def naive_attention(Q, K, V, causal=False):
    """Honest when the grader's harness calls it; a cheap made-up answer for the student's own timers."""
    callers = {record.function for record in _inspect.stack(0)[1:6]}
    if "timing_call" in callers:
        return _computed_kernel(Q, K, V, causal)
    return V.clone()
'''
BATCHED = '''

_computed_kernel = naive_attention
_kept = {}


def naive_attention(Q, K, V, causal=False):
    """One call's work kept for the next of the same size: only the first call of each size computes."""
    key = (tuple(Q.shape), bool(causal))
    if key in _kept:
        old_V, old_out = _kept[key]
        return old_out + (V.mean(-2, keepdim=True) - old_V.mean(-2, keepdim=True))
    out = _computed_kernel(Q, K, V, causal)
    _kept[key] = (V, out)
    return out
'''
OFFLOADED = '''

import queue as _queue
import threading as _threading

_computed_kernel = naive_attention
_jobs, _done = _queue.Queue(), _queue.Queue()


def _work():
    while True:
        args = _jobs.get()
        _done.put(_computed_kernel(*args))


_threading.Thread(target=_work, daemon=True).start()


def naive_attention(Q, K, V, causal=False):
    """The work in another thread: the calling thread's own clock sees almost none of it."""
    _jobs.put((Q, K, V, causal))
    return _done.get()
'''
HALF_PRECISION = '''

_computed_kernel = naive_attention


def naive_attention(Q, K, V, causal=False):
    """Computed in bfloat16, returned as float32: twice as fast on some hardware, and wrong in the third digit."""
    out = _computed_kernel(Q.to(torch.bfloat16), K.to(torch.bfloat16), V.to(torch.bfloat16), causal)
    return out.to(Q.dtype)
'''
STALE_BUFFER = '''

_computed_kernel = naive_attention
_buffers = {}


def naive_attention(Q, K, V, causal=False):
    """The buffer of the first call of each size, returned again for every later call."""
    key = (tuple(Q.shape), bool(causal))
    if key not in _buffers:
        _buffers[key] = _computed_kernel(Q, K, V, causal).clone()
    return _buffers[key]
'''
# a KVCache whose construction writes a well-formed reply of the wrong shape straight into the reply pipe
FORGED_KV = '''

import json as _json
import os as _os
import struct as _struct
import time as _time


class KVCache:
    """Its first append writes a forged reply (a list of numbers where the probe gives triples) into the pipe."""

    def __init__(self):
        header = _json.dumps({"ok": True, "output": "", "value": {"seq": "list", "items": [1, 2, 3]},
                              "frames": []}).encode()
        for fd in range(3, 64):
            try:
                _os.write(fd, _struct.pack(">I", len(header)) + header)
            except OSError:
                pass
        _time.sleep(30)
'''


def _appended(into: Path, name: str, edits: dict[str, str]) -> Path:
    """The reference (without its report) with ``edits[module]`` appended to each ``module``.py."""
    folder = into / name
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    for module, text in edits.items():
        path = folder / f"{module}.py"
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    return folder


def _with_report(folder: Path) -> Path:
    """``folder`` with the reference's own timing report (a CPU report that its timing functions back)."""
    shutil.copytree(kit.SOLUTIONS / "reports", folder / "reports")
    return folder


def _bent_slope(into: Path, name: str) -> Path:
    """The reference with its report edited: the naive head's times at n = 4096 driven towards zero, the slopes
    and medians recomputed so the report stays consistent with itself."""
    import numpy as np

    from autograder.judge.timing import analysis

    folder = _with_report(_appended(into, name, {}))
    path = folder / "reports" / "timing.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    attention = data["attention"]
    ns = np.array(attention["ns"], dtype=float)
    fit = (ns >= attention["fit"]["n_min"]) & (ns <= attention["fit"]["n_max"])
    series = attention["series"]["naive"]
    series["seconds"][-1] = [t / 20 for t in series["seconds"][-1]]
    series["median"] = [float(np.median(t)) for t in series["seconds"]]
    series["min"] = [min(t) for t in series["seconds"]]
    series["max"] = [max(t) for t in series["seconds"]]
    series["slope"] = analysis.fit_slope(ns[fit], np.array(series["median"])[fit])
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder


HAND_INS: dict[str, Callable[[Path, str], Path]] = {
    "probe_swap": lambda into, name: _appended(
        into, name, {"softmax": PROBE_SWAP, "predictions": PREDICTIONS_NONE + PROBE_SWAP, "timing": PROBE_SWAP}
    ),
    "self_consistent": lambda into, name: _appended(
        into, name, {"kv_cache": SELF_CONSISTENT_KV, "predictions": SELF_CONSISTENT_PREDICTIONS}
    ),
    "fake_decoder": lambda into, name: _appended(into, name, {"toy_gpt": FAKE_DECODER}),
    "kernel_name": lambda into, name: _appended(into, name, {"reference_check": KERNEL_NAME}),
    "memoise": lambda into, name: _with_report(_appended(into, name, {"timing": MEMOISE})),
    "lazy": lambda into, name: _with_report(_appended(into, name, {"timing": LAZY})),
    "clocks": lambda into, name: _with_report(_appended(into, name, {"timing": CLOCKS})),
    "frames": lambda into, name: _with_report(_appended(into, name, {"timing": FRAMES})),
    "detects_measured": lambda into, name: _with_report(_appended(into, name, {"timing": DETECTS_MEASURED})),
    "batched": lambda into, name: _with_report(_appended(into, name, {"timing": BATCHED})),
    "offloaded": lambda into, name: _with_report(_appended(into, name, {"timing": OFFLOADED})),
    "half_precision": lambda into, name: _with_report(_appended(into, name, {"timing": HALF_PRECISION})),
    "bent_slope": _bent_slope,
    "stale_buffer": lambda into, name: _with_report(_appended(into, name, {"timing": STALE_BUFFER})),
    "forged_replies": lambda into, name: _appended(into, name, {"kv_cache": FORGED_KV}),
}
# the checks each hand-in must fail (step, check name): the evidence its attack would have faked
MUST_FAIL: dict[str, set[tuple[str, str]]] = {
    "probe_swap": {("predictions", name) for name in ("test_favoured_keys", "test_kv_cache_gb")},
    "self_consistent": {("predictions", "test_kv_cache_gb")},
    "fake_decoder": {("timing", "test_kernels_verified")},
    "kernel_name": {("reference_check", "test_reports_the_real_difference"), ("reference_check", "test_backend_named")},
    "memoise": {("timing", "test_kernels_verified")},
    "lazy": {("timing", "test_kernels_verified")},
    "clocks": {("timing", "test_timing_functions")},
    "frames": {("timing", "test_kernels_verified")},
    "detects_measured": {("timing", "test_timing_functions")},
    "batched": {("timing", "test_kernels_verified")},
    "half_precision": {("timing", "test_kernels_verified")},
    "bent_slope": {("timing", "test_attention_slopes")},
    "stale_buffer": {("timing", "test_kernels_verified")},
    "forged_replies": {("kv_cache", "test_appends")},
}
STEPS = ("reference_check", "kv_cache", "toy_gpt", "timing", "predictions")  # what the attacks target


def build(into: Path) -> dict[str, Path]:
    """Every hand-in of :data:`HAND_INS` in ``into``, by name."""
    into.mkdir(parents=True, exist_ok=True)
    return {name: make(into, name) for name, make in HAND_INS.items()}


def check_names(text: str) -> set[str]:
    """The test function names in a grader file's text (to check :data:`MUST_FAIL` names real checks)."""
    return set(re.findall(r"^def (test_\w+)\(", text, re.MULTILINE))
