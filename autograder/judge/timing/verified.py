"""The grader's own measurement of a submission's kernels: timed from outside the child, every result checked.

Student code can change any clock inside its own process (``time.thread_time``, ``time.perf_counter``, a probe's
reference to a clock, CUDA events, memory through ctypes) and anything a probe there computes, counts or compares,
so nothing the child says about time, counts or agreement decides a verdict here. The grader:

- **times each kernel call from outside** (:class:`Clock`): one request per call, bracketed by two questions to
  the child's keeper (:meth:`~autograder.sandbox.client.Sandbox.child_cpu_ns`: the CPU time of the student
  process, its threads and every process it started, from the kernel's accounting), never more than the
  grader's own :func:`time.perf_counter` saw around the request, an empty request's time subtracted; CPU time the
  child spent between requests (a thread working on while no request was in flight) is charged to the next
  timed call. On a GPU the grader's wall clock around the request bounds the CUDA events the request recorded
  around the call: the events count only where they agree with it (:func:`seconds_of`);
- **checks every timed result against the reference** on inputs of its own (drawn inside the request from a seed
  the child learns only with it, so nothing can be remembered, prepared ahead or carried over between calls): the
  request itself returns the output's rows projected on a random direction (so the whole output exists before its
  clock stops), and rows the grader picks afterwards are compared with :func:`reference_rows` (float32
  accuracy: a kernel that rounds to half precision fails);
- **decodes with its own weights and tokens** (teacher forcing, :func:`decoder_weights`): each timed
  ``gpt_step`` (with the cache) and ``gpt_forward`` (over the whole prefix) must give the reference's logits at
  that position (the oracle's ``gpt_forward``; where no reference is available, as in a student's own run, each
  must give the other's, and the result says so);
- **holds the student's timers to its own measurement** (:func:`run_timers`, :func:`timer_findings`):
  ``time_attention`` and ``time_decoding`` run as plain calls; each request must cost the CPU of the kernel calls
  they time (warm-up and repeats, from outside) and report times that agree with the grader's measurement of the
  same kernel at sizes the grader chose, one of them drawn at random for each grading.

Only numpy here: the reference rows are computed in the grading process; the reference decoder runs on the
oracle's side.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from autograder.judge.timing.analysis import fit_slope
from autograder.judge.timing.calibration import HarnessWindows, harness_for
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Limits, Sandbox
from autograder.sandbox.probes.timing import timing_inputs
from autograder.sandbox.protocol import AsTorch

MODULE = "timing"
KERNELS = ("naive", "causal_naive", "sdpa")  # naive and causal_naive are the student's naive_attention
D = 64
REPEATS = 3  # timed calls per kernel and size; the fastest counts
ROUND_TRIPS = 5  # empty requests; the fastest is subtracted from each timed call
CHECKED_ROWS = 8  # output rows compared with the reference per call
DECODE_AT = (32, 64, 128, 256)  # prefix lengths at which one token is timed with and without the cache
DECODE_REPEATS = 2
DECODER = {"vocab": 256, "d_model": 64, "n_heads": 4, "n_layers": 2}  # the kit's timing decoder's size
ATOL, RTOL = 2e-5, 1e-4  # float32 attention of unit-variance inputs, any summation order; half precision fails
LOGITS_ATOL, LOGITS_RTOL = 1e-4, 1e-4  # float32 decoding against the float64 reference
MIN_SECONDS = 1e-6
EVENTS_AGREE = 0.5  # CUDA events count when at least this share of the grader's wall time and not above it
TIMER_REPEATS = 3
TIMER_TOKENS = 32  # time_decoding's tokens
TIMER_WARMUP_TOKENS = 8  # and the warm-up tokens it generates first (the handout's WARMUP_TOKENS)
KERNEL_ATTEMPTS = 3  # measurements of the kernels before a slope outside its window counts (see measure)
TIMER_ATTEMPTS = 3  # runs of the student's timers before a finding counts (see measure)
AGREE_FACTOR = 6.0  # a correct timer reports at most this many times the grader's measurement of the same kernel ...
# ... and, measuring wall time on a busy machine, more: up to the request's wall/CPU ratio times that
AGREE_BELOW = 4.0  # ... and at least this share of it (a warm loop faults less than one request a call: 0.4..0.7x)
RUN_FRACTION = 0.25  # a timer's request costs at least this share of the CPU of the kernel calls it times
REPORT_FACTOR = 8.0  # a report (measured earlier, maybe on a quieter machine) agrees within this factor
ODD_WIDTHS = (32, 48, 96)  # the width of the timer size drawn for each grading


def gpu_limits(limits: Limits) -> Limits:
    """``limits`` for a child that measures on a GPU: CUDA maps far more address space than it uses, and starts
    slowly. (Memory stays bounded where the sandbox counts it by other means.)"""
    return replace(
        limits,
        memory_bytes=resource.RLIM_INFINITY,
        call_timeout_s=max(limits.call_timeout_s, 60.0),
        import_timeout_s=max(limits.import_timeout_s, 120.0),
    )


@dataclass(frozen=True)
class Broken:
    """A call of the harness that produced no value: where (``function``, the student function reached), how."""

    function: str
    called: str  # "module.name" or "probe.name"
    outcome: outcomes.Failure


@dataclass(frozen=True)
class Wrong:
    """A timed call whose result differs from the reference: ``kernel`` and its input size."""

    kernel: str
    n: int
    worst: float  # the largest absolute difference (-1: not an array of the expected shape)


@dataclass(frozen=True)
class Kernels:
    """The grader's fastest seconds per kernel and size (``(n, d)``), and its own fitted slopes over ``ns``."""

    ns: tuple[int, ...]
    seconds: dict[str, tuple[float, ...]]
    wrong: tuple[Wrong, ...]
    extra: dict[tuple[str, int, int], float]  # (kernel, n, d) -> seconds at the timers' other sizes

    def slope(self, kernel: str) -> float:
        return fit_slope(np.array(self.ns), np.array(self.seconds[kernel]))

    def at(self, kernel: str, n: int, d: int = D) -> float:
        if d == D and n in self.ns:
            return self.seconds[kernel][self.ns.index(n)]
        return self.extra[(kernel, n, d)]


@dataclass(frozen=True)
class Decode:
    """The grader's fastest seconds of one token at each prefix length, without and with the cache."""

    positions: tuple[int, ...]
    without_cache: tuple[float, ...]
    with_cache: tuple[float, ...]
    wrong: tuple[Wrong, ...]  # kernel "gpt_forward" or "gpt_step": logits that are not the reference's
    against_reference: bool  # False: no reference here, each path was held to the other

    @property
    def slope_without(self) -> float:
        return fit_slope(np.array(self.positions), np.array(self.without_cache))

    @property
    def slope_with(self) -> float:
        return fit_slope(np.array(self.positions), np.array(self.with_cache))

    @property
    def speedup_last(self) -> float:
        return self.without_cache[-1] / self.with_cache[-1]


@dataclass(frozen=True)
class Timer:
    """One run of a student's timing function: its call, what it returned, and what its request cost."""

    call: str  # how the call reads in messages, e.g. "time_attention(1024, d=64, ...)"
    value: Any
    cpu: float | None  # the request's CPU seconds by the keeper's count (None: it could not tell)
    wall: float  # the request's seconds on the grader's clock
    calls: int  # kernel calls the timer makes by the contract (warm-up and repeats, or tokens)
    kernel: tuple[str, int, int] | None  # (kernel, n, d) of the grader's measurement it is held to
    per_call: float | None  # the grader's seconds of one such call (None: none to hold it to)
    floor: float | None = None  # the least one of its calls costs by the grader's measurement (None: per_call)


@dataclass(frozen=True)
class Measurement:
    """Everything the grader measured; each part is :class:`Broken` when one of its calls produced no value."""

    device: str
    kernels: Kernels | Broken
    decode: Decode | Broken
    timers: dict[str, Timer] | Broken

    @property
    def timers_ok(self) -> bool:
        """Whether the student's timers measure: see :func:`timer_findings` (no finding at all)."""
        return not isinstance(self.timers, Broken) and not timer_findings(self)

    @property
    def windows(self) -> HarnessWindows | None:
        return harness_for(self.device).windows


class _Stop(Exception):
    def __init__(self, broken: Broken) -> None:
        super().__init__(broken.called)
        self.broken = broken


@dataclass(frozen=True)
class Spent:
    """What one request cost: the grader's wall seconds around it, the child's CPU seconds in it by its keeper's
    count (None: the keeper could not tell), and the child's CPU seconds since the grader's previous request ended
    (work done while no request was in flight)."""

    wall: float
    cpu: float | None
    idle: float = 0.0
    slowest: float = 0.0  # for a baseline of several requests: the wall seconds of its slowest one


class Clock:
    """The grader's requests to one sandbox child, each timed from outside (wall, the keeper's CPU count)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._last: int | None = None  # the keeper's count at the end of the previous request

    def request(self, name: str, *args: Any, reaches: str = "") -> tuple[Any, Spent]:
        """Run probe ``name``: ``(value, what it cost)``; a request without a value stops the harness."""
        return self._run(reaches or name, f"probe.{name}", lambda: self.sandbox.run_probe(name, MODULE, *args))

    def call(self, function: str, kwargs: dict[str, Any]) -> tuple[Any, Spent]:
        """Call the student's ``timing.function(**kwargs)``: ``(value, what it cost)``."""
        return self._run(function, f"{MODULE}.{function}", lambda: self.sandbox.run_call(MODULE, function, **kwargs))

    def _run(self, reaches: str, called: str, run: Callable[[], outcomes.Outcome]) -> tuple[Any, Spent]:
        before = self.sandbox.child_cpu_ns()
        started = time.perf_counter()
        outcome = run()
        wall = time.perf_counter() - started
        after = self.sandbox.child_cpu_ns()
        if not isinstance(outcome, outcomes.Returned):
            raise _Stop(Broken(reaches, called, outcome))
        known = before is not None and after is not None and after >= before
        idle = (before - self._last) / 1e9 if known and self._last is not None and before >= self._last else 0.0
        self._last = after if known else None
        return outcome.value, Spent(wall, (after - before) / 1e9 if known else None, idle)


def seconds_of(spent: Spent, trip: Spent, events: Any, device: str, baseline: Spent | None = None) -> float:
    """The seconds of one timed request, from the grader's clocks.

    ``trip`` is an empty request, ``baseline`` (where there is one) the same request without the kernel (the
    inputs made, the output projected and sent back). On a CPU: the keeper's count of the child's CPU seconds
    less the baseline's, never more than the grader's own wall clock saw (its whole wall time), or that wall time
    where the keeper cannot tell. On a GPU the CPU clock misses the device's work: the CUDA ``events`` the request
    recorded around the call, held between half the wall time less the baseline's slowest request and the wall time
    less the empty request's (no claimed time can halve what the grader's clock saw, or exceed it); the wall time
    less the baseline's fastest where there are no events. Either way the CPU the child spent between requests is
    added: work done outside the timed call is charged to it.
    """
    bound = max(spent.wall, MIN_SECONDS)  # not less the round trip: under load an empty request can take longer
    base = baseline or trip
    if device != "cpu":
        high = max(spent.wall - trip.wall, MIN_SECONDS)
        low = max(spent.wall - max(base.wall, base.slowest), MIN_SECONDS)  # the baseline's own spread allowed for
        claimed = events if isinstance(events, float) and math.isfinite(events) else None
        chosen = (
            max(spent.wall - base.wall, MIN_SECONDS) if claimed is None else min(max(claimed, EVENTS_AGREE * low), high)
        )
        return chosen + spent.idle
    if spent.cpu is None:
        return bound + spent.idle
    return max(min(spent.cpu - (base.cpu or 0.0), bound), MIN_SECONDS) + spent.idle


def _round_trip(clock: Clock, device: str) -> Spent:
    """The fastest of :data:`ROUND_TRIPS` empty requests, on each clock (after one that starts the child)."""
    clock.request("timing_noop", device)
    trips = [clock.request("timing_noop", device)[1] for _ in range(ROUND_TRIPS)]
    cpus = [trip.cpu for trip in trips if trip.cpu is not None]
    return Spent(min(trip.wall for trip in trips), min(cpus) if len(cpus) == len(trips) else None)


def reference_rows(Q: np.ndarray, K: np.ndarray, V: np.ndarray, rows: np.ndarray, causal: bool) -> np.ndarray:
    """Rows ``rows`` of ``softmax(Q K^T / sqrt(d)) V`` (the causal mask: key ``j`` only for ``j <= i``), float64.

    Written with numpy here: the grading process does not load torch for a handful of rows.
    """
    scores = Q[rows].astype(np.float64) @ K.T.astype(np.float64) / math.sqrt(Q.shape[-1])  # (rows, n)
    if causal:
        scores = np.where(np.arange(K.shape[0])[None, :] <= rows[:, None], scores, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=1, keepdims=True)) @ V.astype(np.float64)  # (rows, d)


def _inputs(n: int, d: int, seed: int) -> tuple[np.ndarray, ...]:
    """The grader's ``Q``, ``K``, ``V`` (n, d) for ``seed``: what the probe ``timing_call`` makes in the child."""
    return tuple(x[0, 0] for x in timing_inputs(seed, n, d))


def _worst(got: Any, expected: np.ndarray, atol: float = ATOL, rtol: float = RTOL) -> float | None:
    """None when ``got`` is the reference's ``expected`` within tolerance; else the largest difference (-1: not an
    array of its shape)."""
    if not isinstance(got, np.ndarray) or got.shape != expected.shape or got.dtype.kind not in "iuf":
        return -1.0
    if np.allclose(got, expected, atol=atol, rtol=rtol):
        return None
    return float(np.nanmax(np.abs(got.astype(np.float64) - expected)))


def _timed_pair(value: Any) -> tuple[Any, Any]:
    """A timed probe's ``(result, CUDA seconds)``; anything else is a result that cannot be read."""
    return (value[0], value[1]) if isinstance(value, (tuple, list)) and len(value) == 2 else (None, None)


def _checked_call(
    clock: Clock,
    rng: np.random.Generator,
    n: int,
    d: int,
    kernel: str,
    trip: Spent,
    device: str,
    baseline: Spent | None,
) -> tuple[float, float | None]:
    """One call of ``kernel`` on inputs of its own (a new seed): ``(its seconds, its difference from the
    reference)`` (see :func:`_worst`)."""
    reaches = "naive_attention" if kernel != "sdpa" else "timing_call"
    seed = int(rng.integers(1 << 62))
    direction = rng.standard_normal(d).astype(np.float32)
    value, spent = clock.request("timing_call", kernel, seed, n, d, direction, reaches=reaches)
    projection, events = _timed_pair(value)
    rows = np.sort(rng.choice(n, CHECKED_ROWS, replace=False))  # chosen after the call returned
    got, _spent = clock.request("timing_output", rows.tolist(), reaches=reaches)
    Q, K, V = _inputs(n, d, seed)
    expected = reference_rows(Q, K, V, rows, kernel == "causal_naive")  # (rows, d)
    worst = _worst(got, expected)
    if worst is None:
        picked = projection[rows] if isinstance(projection, np.ndarray) and projection.shape == (n,) else None
        worst = _worst(picked, expected @ direction.astype(np.float64), atol=ATOL * float(np.abs(direction).sum()))
    return seconds_of(spent, trip, events, device, baseline), worst


def _baseline(clock: Clock, rng: np.random.Generator, n: int, d: int) -> Spent:
    """The fastest of :data:`ROUND_TRIPS` timed requests that do everything but attention (``kernel="none"``: the
    inputs made, the output projected and sent back), on each clock: what :func:`seconds_of` subtracts."""
    spent = []
    for _ in range(ROUND_TRIPS):
        seed, direction = int(rng.integers(1 << 62)), rng.standard_normal(d).astype(np.float32)
        spent.append(clock.request("timing_call", "none", seed, n, d, direction, reaches="timing_call")[1])
    cpus = [s.cpu for s in spent if s.cpu is not None]
    walls = [s.wall for s in spent]
    return Spent(min(walls), min(cpus) if len(cpus) == len(spent) else None, slowest=max(walls))


def _kernel_at(
    clock: Clock, rng: np.random.Generator, n: int, d: int, trip: Spent, device: str, kernels: tuple[str, ...]
) -> tuple[dict[str, float], list[Wrong]]:
    """The fastest of :data:`REPEATS` timed calls (after a checked warm-up) of each of ``kernels`` at ``(n, d)``."""
    clock.request("timing_prepare", device, reaches="naive_attention")
    baseline = _baseline(clock, rng, n, d)
    seconds, wrong = {}, []
    for kernel in kernels:
        # the first call is the warm-up (allocations, kernel choice): checked, not timed
        calls = [_checked_call(clock, rng, n, d, kernel, trip, device, baseline) for _ in range(1 + REPEATS)]
        seconds[kernel] = min(spent for spent, _worst in calls[1:])
        worst = [w for _spent, w in calls if w is not None]
        if worst:
            wrong.append(Wrong(kernel, n, -1.0 if -1.0 in worst else max(worst)))
    return seconds, wrong


def timer_sizes(rng: np.random.Generator, device: str) -> dict[str, tuple[int, int]]:
    """The ``(n, d)`` each attention timer is asked for: the harness's two largest sizes at ``d`` = 64, and one
    drawn for this grading (an ``n`` between them, an odd width), so no formula learned in advance fits."""
    ns = harness_for(device).ns
    small, large = ns[-2], ns[-1]
    step = max(small // 8, 1)
    drawn = int(rng.integers(small // step + 1, large // step)) * step
    odd = int(rng.choice(ODD_WIDTHS))
    return {"attention": (large, D), "attention_small": (small, D), "attention_drawn": (drawn, odd)}


def measure_kernels(
    clock: Clock, rng: np.random.Generator, trip: Spent, device: str, extra: dict[str, tuple[int, int]]
) -> Kernels:
    """Time every kernel at every size of the harness (a warm-up, then :data:`REPEATS` timed calls, each on new
    inputs) and the naive head at the timers' ``extra`` sizes; compare every call's output with the reference."""
    ns = harness_for(device).ns
    seconds: dict[str, list[float]] = {k: [] for k in KERNELS}
    wrong: list[Wrong] = []
    for n in ns:
        found, bad = _kernel_at(clock, rng, n, D, trip, device, KERNELS)
        for kernel in KERNELS:
            seconds[kernel].append(found[kernel])
        wrong += bad
    more: dict[tuple[str, int, int], float] = {}
    for n, d in {size for size in extra.values() if size[1] != D or size[0] not in ns}:
        found, bad = _kernel_at(clock, rng, n, d, trip, device, ("naive",))
        more[("naive", n, d)] = found["naive"]
        wrong += bad
    return Kernels(ns, {k: tuple(v) for k, v in seconds.items()}, tuple(wrong), more)


def decoder_weights(rng: np.random.Generator, n_ctx: int) -> dict[str, Any]:
    """Random weights of the timing decoder's size (:data:`DECODER`), float64, in ``toy_gpt.py``'s layout: the
    grader's own, new for each grading (the reference's decoder computes the expected logits from the same)."""
    d, V = DECODER["d_model"], DECODER["vocab"]
    residual = 1 / math.sqrt(2 * DECODER["n_layers"])

    def matrix(rows: int, columns: int, scale: float = 1.0) -> np.ndarray:
        return rng.standard_normal((rows, columns)) * scale / math.sqrt(rows)

    def vector(size: int, centre: float = 0.0) -> np.ndarray:
        return centre + 0.1 * rng.standard_normal(size)

    blocks = [
        {
            "ln1_g": vector(d, 1.0),
            "ln1_b": vector(d),
            "W_Q": matrix(d, d),
            "W_K": matrix(d, d),
            "W_V": matrix(d, d),
            "W_O": matrix(d, d, residual),
            "ln2_g": vector(d, 1.0),
            "ln2_b": vector(d),
            "W1": matrix(d, 4 * d),
            "b1": vector(4 * d),
            "W2": matrix(4 * d, d, residual),
            "b2": vector(d),
        }
        for _ in range(DECODER["n_layers"])
    ]
    return {
        "wte": rng.standard_normal((V, d)),
        "wpe": 2.0 * rng.standard_normal((n_ctx, d)),
        "lnf_g": vector(d, 1.0),
        "lnf_b": vector(d),
        "n_heads": DECODER["n_heads"],
        "blocks": blocks,
    }


def sent(weights: dict[str, Any]) -> dict[str, Any]:
    """``weights`` as the child receives them: float32 tensors (``AsTorch``), ``n_heads`` an int."""

    def tensor(array: Any) -> AsTorch:
        return AsTorch(np.asarray(array, dtype=np.float32))

    return {
        **{key: tensor(value) for key, value in weights.items() if key not in ("n_heads", "blocks")},
        "n_heads": int(weights["n_heads"]),
        "blocks": [{key: tensor(value) for key, value in block.items()} for block in weights["blocks"]],
    }


ReferenceLogits = Callable[[dict[str, Any], list[int]], np.ndarray]  # (weights, tokens) -> logits [n, V]


def measure_decode(
    clock: Clock, rng: np.random.Generator, trip: Spent, device: str, reference: ReferenceLogits | None
) -> Decode:
    """Time one token at each prefix length of :data:`DECODE_AT`, with ``gpt_step`` (the cache) and with
    ``gpt_forward`` (the whole prefix), on the grader's weights and tokens; each call's logits are the reference's
    at its position (``reference``; None: each path is held to the other). Every call is at a new position (the
    step appends its token): none can be answered from memory."""
    length = DECODE_AT[-1] + DECODE_REPEATS + 1
    weights = decoder_weights(rng, length)
    tokens = [int(t) for t in rng.integers(DECODER["vocab"], size=length)]
    expected = None if reference is None else np.asarray(reference(weights, tokens), dtype=np.float64)
    clock.request("timing_decode_start", sent(weights), device, reaches="new_cache")
    clock.request("timing_decode_forward", tokens[: DECODE_AT[0]], reaches="gpt_forward")  # a warm-up, untimed
    position, without, cached, wrong = 0, [], [], []
    for prefix in DECODE_AT:
        clock.request("timing_decode_fill", tokens[position:prefix], reaches="gpt_step")
        position = prefix
        forward_s, step_s = [], []
        for _repeat in range(DECODE_REPEATS):
            value, spent = clock.request("timing_decode_forward", tokens[: position + 1], reaches="gpt_forward")
            forward, events = _timed_pair(value)
            forward_s.append(seconds_of(spent, trip, events, device))
            value, spent = clock.request("timing_decode_step", tokens[position], reaches="gpt_step")
            step, events = _timed_pair(value)
            step_s.append(seconds_of(spent, trip, events, device))
            wrong += _decode_wrong(forward, step, None if expected is None else expected[position], position)
            position += 1
        without.append(min(forward_s))
        cached.append(min(step_s))
    return Decode(DECODE_AT, tuple(without), tuple(cached), tuple(wrong), expected is not None)


def _decode_wrong(forward: Any, step: Any, expected: np.ndarray | None, position: int) -> list[Wrong]:
    """The paths whose logits at ``position`` are not ``expected`` (None: the step's are held to the forward's)."""
    V = DECODER["vocab"]
    found = []
    if expected is None:
        anchor = forward if isinstance(forward, np.ndarray) and forward.shape == (V,) else None
        worst = -1.0 if anchor is None else _worst(step, anchor.astype(np.float64), LOGITS_ATOL, LOGITS_RTOL)
        return [Wrong("gpt_step", position, worst)] if worst is not None else []
    for name, got in (("gpt_forward", forward), ("gpt_step", step)):
        worst = _worst(got, expected, LOGITS_ATOL, LOGITS_RTOL)
        if worst is not None:
            found.append(Wrong(name, position, worst))
    return found


def run_timers(
    clock: Clock, device: str, sizes: dict[str, tuple[int, int]], kernels: Kernels | Broken, decode: Decode | Broken
) -> dict[str, Timer]:
    """The student's ``time_attention`` at each of ``sizes`` and ``time_decoding`` without and with the cache, on
    the grader's device, as plain calls, each request's cost read from outside."""
    timers = {}
    for key, (n, d) in sizes.items():
        kwargs = {"n": n, "d": d, "device": device, "repeats": TIMER_REPEATS, "kind": "naive"}
        per_call = kernels.at("naive", n, d) if isinstance(kernels, Kernels) else None
        value, spent = clock.call("time_attention", kwargs)
        timers[key] = Timer(
            _shown("time_attention", kwargs), value, spent.cpu, spent.wall, TIMER_REPEATS + 1, ("naive", n, d), per_call
        )
    for key, use_cache in (("decoding", False), ("decoding_cached", True)):
        kwargs = {"n_tokens": TIMER_TOKENS, "d_model": DECODER["d_model"], "use_cache": use_cache, "device": device}
        per_call = floor = None
        if isinstance(decode, Decode):  # the cheapest token the grader timed; any costs at least a cached one
            per_call = min(decode.without_cache) if not use_cache else min(decode.with_cache)
            floor = min(decode.with_cache)
        value, spent = clock.call("time_decoding", kwargs)
        calls = TIMER_TOKENS + min(TIMER_WARMUP_TOKENS, TIMER_TOKENS)
        timers[key] = Timer(_shown("time_decoding", kwargs), value, spent.cpu, spent.wall, calls, None, per_call, floor)
    return timers


def _shown(function: str, kwargs: dict[str, Any]) -> str:
    return f"{function}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def _slopes_in_window(kernels: Kernels, windows: HarnessWindows | None) -> bool:
    """Whether the grader's naive and causal slopes, and naive/SDPA at the largest n, are inside the harness windows
    the grader checks."""
    if windows is None:
        return True
    largest, minimum = kernels.ns[-1], windows.naive_over_sdpa_min
    ratio_ok = minimum is None or kernels.at("naive", largest) >= minimum * kernels.at("sdpa", largest)
    return ratio_ok and all(
        window is None or window[0] <= kernels.slope(kernel) <= window[1]
        for kernel, window in (("naive", windows.naive_slope), ("causal_naive", windows.causal_slope))
    )


def _decode_in_window(decode: Decode, windows: HarnessWindows | None) -> bool:
    """Whether the grader's decoding slopes, their gap and the speed-up at the last prefix are where the harness
    windows the grader checks put a correct cache."""
    if windows is None:
        return True
    without, cached = decode.slope_without, decode.slope_with
    return (
        all(
            window is None or window[0] <= value <= window[1]
            for value, window in ((without, windows.no_cache_slope), (cached, windows.cache_slope))
        )
        and (windows.slope_gap_min is None or without - cached >= windows.slope_gap_min)
        and (windows.speedup_last_min is None or decode.speedup_last >= windows.speedup_last_min)
    )


def measure(
    sandbox: Sandbox, rng: np.random.Generator, device: str = "cpu", reference: ReferenceLogits | None = None
) -> Measurement:
    """The grader's whole measurement on ``device``: the kernels, decoding, the student's timers.

    ``reference`` gives the reference decoder's logits (None where no reference is available)."""
    clock = Clock(sandbox)
    try:
        trip = _round_trip(clock, device)
    except _Stop as stop:
        return Measurement(device, stop.broken, stop.broken, stop.broken)
    sizes = timer_sizes(rng, device)
    kernels: Kernels | Broken
    decode: Decode | Broken
    try:
        kernels = measure_kernels(clock, rng, trip, device, sizes)
    except _Stop as stop:
        kernels = stop.broken
    # A burst of other work on a shared machine only ever adds time, and more at one size than another can bend
    # a slope out of its window: then the kernels are measured again (new inputs, every call checked) and each
    # size keeps its fastest call over the attempts. Honest kernels settle; a wrong result stays wrong.
    windows = harness_for(device).windows
    kernels = _settled(
        kernels,
        lambda: measure_kernels(clock, rng, trip, device, sizes),
        lambda found: not isinstance(found, Kernels) or bool(found.wrong) or _slopes_in_window(found, windows),
        _fastest_kernels,
    )
    try:
        decode = measure_decode(clock, rng, trip, device, reference)
    except _Stop as stop:
        decode = stop.broken
    # The same for decoding: a burst that slows the short prefixes more than the long ones flattens the slope
    # without the cache (a grade under load once gave 0.299 against a window from 0.3). Measured again with new
    # weights and tokens, each prefix length keeps its fastest token; a wrong logit stays wrong.
    decode = _settled(
        decode,
        lambda: measure_decode(clock, rng, trip, device, reference),
        lambda found: not isinstance(found, Decode) or bool(found.wrong) or _decode_in_window(found, windows),
        _fastest_decode,
    )
    measurement = _with_timers(clock, device, sizes, kernels, decode)
    # The student's timers may read a wall clock in a process that shares the machine: a burst of other work can
    # make one honest run disagree. A finding counts only when it comes back: the timers run again up to
    # TIMER_ATTEMPTS times in all, and the first run without a finding is kept (a formula, or a timer that ignores
    # n, is found every time). Before each new run the grader measures again what the findings were judged
    # against, each size keeping its fastest call: a burst during the grader's own measurement makes an honest
    # timer look too fast (under load on two cores, 3.85 ms for the naive head at n = 512 against its 0.92 ms).
    for _attempt in range(TIMER_ATTEMPTS - 1):
        if isinstance(measurement.timers, Broken):
            break
        findings = timer_findings(measurement)
        if not findings:
            break
        kernels, decode = _measured_again(
            findings,
            kernels,
            decode,
            lambda: measure_kernels(clock, rng, trip, device, sizes),
            lambda: measure_decode(clock, rng, trip, device, reference),
        )
        measurement = _with_timers(clock, device, sizes, kernels, decode)
    return measurement


def _measured_again(
    findings: list[Finding],
    kernels: Kernels | Broken,
    decode: Decode | Broken,
    kernels_again: Callable[[], Kernels],
    decode_again: Callable[[], Decode],
) -> tuple[Kernels | Broken, Decode | Broken]:
    """The grader's own measurements that ``findings`` were judged against (the kernels for the attention timers,
    decoding for the decoding timers), each measured again and merged with what was found (every size's fastest
    call, every wrong result of either). Only findings that a faster measurement of the grader's could undo count:
    a timer too fast for it or costing too little, or times that grow less than its own; not a timer that reports
    too much, nor one whose numbers are not numbers. A measurement that produces no value this time leaves the
    first."""
    judged = {finding.timer.partition("_")[0] for finding in findings if _undone_by_faster(finding)}
    try:
        if "attention" in judged and isinstance(kernels, Kernels):
            kernels = _fastest_kernels(kernels, kernels_again())
        if "decoding" in judged and isinstance(decode, Decode):
            decode = _fastest_decode(decode, decode_again())
    except _Stop:
        pass
    return kernels, decode


def _settled(
    first: Any, again: Callable[[], Any], settled: Callable[[Any], bool], merged: Callable[[Any, Any], Any]
) -> Any:
    """``first``, measured ``again`` while it is not ``settled``, up to :data:`KERNEL_ATTEMPTS` measurements in all,
    each new one ``merged`` into what was found (a measurement that produced no value ends the attempts)."""
    found = first
    for _attempt in range(KERNEL_ATTEMPTS - 1):
        if settled(found):
            break
        try:
            found = merged(found, again())
        except _Stop:
            break
    return found


def _undone_by_faster(finding: Finding) -> bool:
    """Whether ``finding`` could go away if the grader's own measurement it was judged against were faster."""
    return finding.kind in ("not_running", "ignores_n") or (finding.kind == "disagrees" and finding.got < finding.low)


def _fastest_kernels(kernels: Kernels, again: Kernels) -> Kernels:
    """Two measurements of the kernels as one: each size's fastest call, every wrong result of either."""
    return Kernels(
        kernels.ns,
        {k: tuple(map(min, kernels.seconds[k], again.seconds[k])) for k in kernels.seconds},
        kernels.wrong + again.wrong,
        {k: min(v, again.extra[k]) for k, v in kernels.extra.items()},
    )


def _fastest_decode(decode: Decode, again: Decode) -> Decode:
    """Two measurements of decoding as one: each prefix length's fastest token, every wrong logit of either."""
    return replace(
        decode,
        without_cache=tuple(map(min, decode.without_cache, again.without_cache)),
        with_cache=tuple(map(min, decode.with_cache, again.with_cache)),
        wrong=decode.wrong + again.wrong,
    )


def _with_timers(
    clock: Clock, device: str, sizes: dict[str, tuple[int, int]], kernels: Kernels | Broken, decode: Decode | Broken
) -> Measurement:
    try:
        return Measurement(device, kernels, decode, run_timers(clock, device, sizes, kernels, decode))
    except _Stop as stop:
        return Measurement(device, kernels, decode, stop.broken)


@dataclass(frozen=True)
class Finding:
    """Why a student timer's numbers are not a measurement: ``kind`` is one of :data:`FINDINGS`; the numbers."""

    kind: str
    timer: str  # the key of :func:`run_timers`
    got: float
    low: float
    high: float
    reference: float = math.nan  # the grader's own number it was held to (seconds, or a ratio for ignores_n)


FINDINGS = (
    "not_numbers",  # not a positive number (or a list of them of the right length)
    "not_running",  # the request cost less than the kernel calls it times (from outside)
    "disagrees",  # not within AGREE_FACTOR of the grader's measurement of the same kernel
    "ignores_n",  # the same time at two sizes whose kernels the grader measured as far apart
)


def _seconds(timer: Timer, tokens: bool) -> float | None:
    """The timer's number: time_attention's value, time_decoding's median of its second half; None if unusable."""
    value = timer.value
    if tokens:
        ok = isinstance(value, list) and len(value) == TIMER_TOKENS
        numbers = value if ok else []
    else:
        numbers = [value.item() if isinstance(value, np.ndarray) and value.shape == () else value]
    if not numbers or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e300 and math.isfinite(v) for v in numbers
    ):
        return None
    return float(np.median(numbers[len(numbers) // 2 :]))


def _load(timer: Timer, device: str) -> float:
    """How much longer than its CPU time the timer's request took on the grader's clock (at least 1): a timer
    reading the wall clock on a busy machine reports that much more, honestly. 1 on a GPU or where the keeper
    cannot tell."""
    if device != "cpu" or timer.cpu is None or timer.cpu <= 0:
        return 1.0
    return max(timer.wall / timer.cpu, 1.0)


def timer_findings(measurement: Measurement) -> list[Finding]:
    """What is wrong with the student's timers, judged against the grader's own measurement (empty: they measure)."""
    timers, device = measurement.timers, measurement.device
    if isinstance(timers, Broken):
        return []
    findings: list[Finding] = []
    seconds: dict[str, float] = {}
    for key, timer in timers.items():
        value = _seconds(timer, key.startswith("decoding"))
        if value is None:
            findings.append(Finding("not_numbers", key, math.nan, 0, 0))
            continue
        seconds[key] = value
        if timer.per_call is None:
            continue
        floor = timer.floor if timer.floor is not None else timer.per_call
        needed = RUN_FRACTION * timer.calls * floor
        spent = timer.cpu if device == "cpu" and timer.cpu is not None else timer.wall
        if spent < needed:
            findings.append(Finding("not_running", key, spent, needed, math.inf, floor))
            continue
        low, high = timer.per_call / AGREE_BELOW, timer.per_call * AGREE_FACTOR * _load(timer, device)
        if not low <= value <= high:
            findings.append(Finding("disagrees", key, value, low, high, timer.per_call))
    large, small = timers.get("attention"), timers.get("attention_small")
    if "attention" in seconds and "attention_small" in seconds and large.per_call and small.per_call:
        theirs = seconds["attention"] / seconds["attention_small"]
        ours = large.per_call / small.per_call
        # at least half the grader's growth on log axes, and on a CPU at least 1.5 (n^2 work doubles n's time at
        # least 1.5 times, whatever a busy moment made of the grader's own two times); a launch-bound GPU may show
        # little growth, so there only the grader's own
        low = max(ours**0.5, 1.5) if device == "cpu" or ours > 1.5 else 1.0
        # The grader saw the larger n take ``ours`` times as long. Only too little growth is a timer that ignores
        # n: each size's time is already held to the grader's above.
        if theirs < low:
            findings.append(Finding("ignores_n", "attention", theirs, low, math.inf, ours))
    return findings
