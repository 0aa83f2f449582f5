"""The grader's own measurement of a submission's kernels: timed from outside the child, every result checked.

Student code can change any clock inside its own process (``time.thread_time``,
``time.perf_counter``, the probes' own reference to a clock, memory through
ctypes), so nothing the child says about time is used. Here the grader times
each kernel call from outside: one request per call
(:mod:`autograder.sandbox.probes.timing`), bracketed by two questions to the
child's keeper (:meth:`~autograder.sandbox.client.Sandbox.child_cpu_ns`: the
CPU time of the student process, its threads and every process it started,
from the kernel's accounting), the difference bounded by the grader's own
:func:`time.perf_counter` around the request (never more than the grader saw),
an empty request's CPU time subtracted, the fastest of a few repeats
kept (another process only ever adds time). Where the keeper cannot tell (off
Linux) the wall clock alone counts. Every timed call's result is compared with
the reference on the same inputs, and each call gets inputs no earlier call
saw (``Q`` and ``V`` shifted by new constants, made before the timed request),
so a call that sleeps, returns a remembered answer or computes a formula is
found out; the inputs are new random numbers for each grading.

The student's own timing functions are then run with the kernels they time made
:data:`SLOW_FACTOR` times the work (trusted wrappers, counting their calls): a
function that measures reports about that much more time, and calls the kernel
once more than its repeats (the warm-up); one that returns a formula does not.

Only numpy here: the reference rows are computed in the grading process.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Sandbox
from autograder.timing.analysis import fit_slope
from autograder.timing.calibration import HARNESS_CPU

MODULE = "timing"
KERNELS = ("naive", "causal_naive", "sdpa")  # naive and causal_naive are the student's naive_attention
NS = (256, 512, 1024)  # the grader's sizes on a CPU (the n^2 term shows from 256 at d = 64)
D = 64
REPEATS = 3  # timed calls per kernel and size; the fastest counts
ROUND_TRIPS = 5  # empty requests; the fastest is subtracted from each timed call
CHECKED_ROWS = 8  # output rows compared with the reference per kernel and size
DECODE_AT = (32, 64, 128, 256)  # prefix lengths at which one token is timed with and without the cache
DECODE_REPEATS = 2
ATOL, RTOL = 1e-4, 1e-3  # float32 attention of unit-variance inputs, any summation order
MIN_SECONDS = 1e-6
SLOW_FACTOR = 4  # the student's timer runs with its kernel doing this many times the work ...
SLOWED_RATIO = (1.8, 12.0)  # ... and must report this many times the time (a formula: about 1; noise allowed)
TIMER_N = 1024  # time_attention's size for the comparison with the grader's measurement ...
TIMER_SMALL_N = 512  # ... and a second size: a timer that ignores n reports the same time for both
TIMER_REPEATS = 3
TIMER_TOKENS = 32  # time_decoding's tokens
KERNEL_ATTEMPTS = 3  # measurements of the kernels before a slope outside its window counts (see measure)
TIMER_ATTEMPTS = 3  # runs of the student's timers before a finding counts (see measure)
AGREE_FACTOR = 6.0  # a correct timer agrees with the grader's measurement of the same kernel within this factor
REPORT_FACTOR = 8.0  # a report (measured earlier, maybe on a quieter machine) agrees within this factor


@dataclass(frozen=True)
class Broken:
    """A call of the harness that produced no value: where (``function``, the student function reached), how."""

    function: str
    called: str  # "module.name" or "probe.name"
    outcome: outcomes.Failure


@dataclass(frozen=True)
class Wrong:
    """A timed call whose result differs from the reference: ``what`` names the kernel and its input size."""

    kernel: str
    n: int
    worst: float  # the largest absolute difference (or -1 for a token that differs)


@dataclass(frozen=True)
class Kernels:
    """The grader's fastest seconds per kernel and size, and its own fitted slopes."""

    ns: tuple[int, ...]
    seconds: dict[str, tuple[float, ...]]
    wrong: tuple[Wrong, ...]

    def slope(self, kernel: str) -> float:
        return fit_slope(np.array(self.ns), np.array(self.seconds[kernel]))

    def at(self, kernel: str, n: int) -> float:
        return self.seconds[kernel][self.ns.index(n)]


@dataclass(frozen=True)
class Decode:
    """The grader's fastest seconds of one token at each prefix length, without and with the cache."""

    positions: tuple[int, ...]
    without_cache: tuple[float, ...]
    with_cache: tuple[float, ...]
    wrong: tuple[Wrong, ...]  # positions where gpt_forward's next token is not gpt_step's

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
    """One run of a student's timing function: what it returned and how often it called the kernel."""

    call: str  # how the call reads in messages, e.g. "time_attention(1024, d=64, ...)"
    value: Any
    calls: int
    expected_calls: int


@dataclass(frozen=True)
class Measurement:
    """Everything the grader measured; each part is :class:`Broken` when one of its calls produced no value."""

    kernels: Kernels | Broken
    decode: Decode | Broken
    timers: dict[str, Timer] | Broken

    @property
    def timers_ok(self) -> bool:
        """Whether the student's timers measure: see :func:`timer_findings` (no finding at all)."""
        return not isinstance(self.timers, Broken) and not timer_findings(self)


class _Stop(Exception):
    def __init__(self, broken: Broken) -> None:
        super().__init__(broken.called)
        self.broken = broken


@dataclass(frozen=True)
class Spent:
    """What one request cost: the grader's wall seconds around it, and the child's CPU seconds in it by its
    keeper's count (None: the keeper could not tell)."""

    wall: float
    cpu: float | None


def _request(sandbox: Sandbox, name: str, *args: Any, reaches: str = "") -> tuple[Any, float]:
    """Run probe ``name``; ``(value, seconds on the grader's clock)``; a call without a value stops the harness."""
    started = time.perf_counter()
    outcome = sandbox.run_probe(name, MODULE, *args)
    seconds = time.perf_counter() - started
    if not isinstance(outcome, outcomes.Returned):
        raise _Stop(Broken(reaches or name, f"probe.{name}", outcome))
    return outcome.value, seconds


def _timed(sandbox: Sandbox, name: str, *args: Any, reaches: str = "") -> tuple[Any, Spent]:
    """:func:`_request`, with the keeper's count of the child's CPU time before and after it."""
    before = sandbox.child_cpu_ns()
    value, wall = _request(sandbox, name, *args, reaches=reaches)
    after = sandbox.child_cpu_ns()
    cpu = None if before is None or after is None or after < before else (after - before) / 1e9
    return value, Spent(wall, cpu)


def _cpu_seconds(spent: Spent, trip: Spent) -> float:
    """The seconds of one timed request: the keeper's count of the child's CPU seconds less an empty request's,
    never more than the grader's own clock saw (its whole wall time); the wall time where the keeper cannot tell.
    What the child's probe returned is not used."""
    bound = max(spent.wall, MIN_SECONDS)  # not less the round trip: under load an empty request can take longer
    if spent.cpu is None:
        return bound
    return max(min(spent.cpu - (trip.cpu or 0.0), bound), MIN_SECONDS)


def _round_trip(sandbox: Sandbox) -> Spent:
    """The fastest of :data:`ROUND_TRIPS` empty requests, on each clock (after one that starts the child)."""
    _request(sandbox, "timing_noop")
    trips = [_timed(sandbox, "timing_noop")[1] for _ in range(ROUND_TRIPS)]
    cpus = [trip.cpu for trip in trips if trip.cpu is not None]
    return Spent(min(trip.wall for trip in trips), min(cpus) if len(cpus) == len(trips) else None)


def _shifts(rng: np.random.Generator) -> tuple[float, float]:
    """New constants for ``Q`` and ``V`` (multiples of 1/64, exact in float32 on both sides): ``Q``'s changes
    which keys each query weights, ``V``'s moves every output row by at least 1 (softmax rows sum to 1)."""
    q_steps, v_steps = rng.integers(16, 65), rng.integers(64, 257)
    signs = rng.choice((-1, 1), 2)
    return float(signs[0] * q_steps / 64), float(signs[1] * v_steps / 64)


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


def _inputs(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """The grader's ``Q``, ``K``, ``V`` (n, d) for ``seed``: what :func:`timing_prepare` makes in the child."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, 1, n, D), dtype=np.float32)[0, 0] for _ in range(3))


def _token(value: Any) -> Any:
    """The token of a decoding probe's ``(token, nanoseconds)`` (the nanoseconds are the child's: unused)."""
    return value[0] if isinstance(value, (tuple, list)) and len(value) == 2 else None


def _worst(got: Any, expected: np.ndarray) -> float | None:
    """None when ``got`` is the reference's ``expected`` within tolerance; else the largest difference (-1: not an
    array of its shape)."""
    if not isinstance(got, np.ndarray) or got.shape != expected.shape:
        return -1.0
    if np.allclose(got, expected, atol=ATOL, rtol=RTOL):
        return None
    return float(np.nanmax(np.abs(got - expected)))


def _checked_call(
    sandbox: Sandbox, rng: np.random.Generator, inputs: tuple[np.ndarray, ...], kernel: str, trip: Spent
) -> tuple[float, float | None]:
    """One call of ``kernel`` on inputs no earlier call saw: ``(its seconds, its difference from the reference)``
    (see :func:`_worst`)."""
    reaches = "naive_attention" if kernel != "sdpa" else "timing_run"
    Q, K, V = inputs
    q_shift, v_shift = _shifts(rng)
    _request(sandbox, "timing_shift", q_shift, v_shift, reaches=reaches)  # untimed: made before the timed call
    _value, spent = _timed(sandbox, "timing_run", kernel, reaches=reaches)
    n = Q.shape[0]
    rows = np.sort(rng.choice(n, CHECKED_ROWS, replace=False))
    got, _seconds = _request(sandbox, "timing_output", rows.tolist(), reaches=reaches)
    shifted_q, shifted_v = Q + np.float32(q_shift), V + np.float32(v_shift)  # float32, as the child made them
    expected = reference_rows(shifted_q, K, shifted_v, rows, kernel == "causal_naive")
    return _cpu_seconds(spent, trip), _worst(got, expected)


def measure_kernels(sandbox: Sandbox, rng: np.random.Generator, trip: Spent) -> Kernels:
    """Time every kernel at every size of :data:`NS` (a warm-up, then :data:`REPEATS` timed calls, each on new
    inputs) and compare every call's output rows with the reference."""
    seconds: dict[str, list[float]] = {k: [] for k in KERNELS}
    wrong: list[Wrong] = []
    for n in NS:
        seed = int(rng.integers(1 << 62))
        inputs = _inputs(n, seed)
        _request(sandbox, "timing_prepare", n, D, seed, reaches="naive_attention")
        for kernel in KERNELS:
            # the first call is the warm-up (allocations, kernel choice): checked, not timed
            calls = [_checked_call(sandbox, rng, inputs, kernel, trip) for _ in range(1 + REPEATS)]
            seconds[kernel].append(min(spent for spent, _worst in calls[1:]))
            worst = [w for _spent, w in calls if w is not None]
            if worst:
                wrong.append(Wrong(kernel, n, -1.0 if -1.0 in worst else max(worst)))
    return Kernels(NS, {k: tuple(v) for k, v in seconds.items()}, tuple(wrong))


def measure_decode(sandbox: Sandbox, trip: Spent) -> Decode:
    """Time one token at each prefix length of :data:`DECODE_AT`, with ``gpt_step`` and with ``gpt_forward``;
    each pair must predict the same next token. Every call is at a new position (``gpt_step`` appends its token,
    so the next ``gpt_forward`` runs over a longer prefix): none can be answered from memory."""
    _request(sandbox, "timing_decode_start", DECODE_AT[-1] + DECODE_REPEATS + 1, reaches="random_weights")
    without, cached, wrong = [], [], []
    for length in DECODE_AT:
        _request(sandbox, "timing_decode_fill", length, reaches="gpt_step")
        forward_s, step_s = [], []
        for _repeat in range(DECODE_REPEATS):
            value, spent = _timed(sandbox, "timing_decode_forward", reaches="gpt_forward")
            token = _token(value)
            forward_s.append(_cpu_seconds(spent, trip))
            value, spent = _timed(sandbox, "timing_decode_step", reaches="gpt_step")
            stepped = _token(value)
            step_s.append(_cpu_seconds(spent, trip))
            if (token is None or token != stepped) and not any(w.n == length for w in wrong):
                wrong.append(Wrong("decode", length, -1.0))
        without.append(min(forward_s))
        cached.append(min(step_s))
    return Decode(DECODE_AT, tuple(without), tuple(cached), tuple(wrong))


def _timer(sandbox: Sandbox, function: str, kwargs: dict[str, Any], factor: int, expected_calls: int) -> Timer:
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    value, _seconds = _request(sandbox, "timing_student_timer", function, [], kwargs, factor, reaches=function)
    if not isinstance(value, dict):
        value = {"value": None, "calls": 0}
    calls = value.get("calls")
    return Timer(f"{function}({shown})", value.get("value"), calls if isinstance(calls, int) else 0, expected_calls)


def run_timers(sandbox: Sandbox, device: str = "cpu") -> dict[str, Timer]:
    """The student's ``time_attention`` and ``time_decoding`` on the grader's device, plain and slowed.

    Keys: ``attention`` (naive at :data:`TIMER_N`), ``attention_small`` (at :data:`TIMER_SMALL_N`),
    ``attention_slowed`` (at :data:`TIMER_SMALL_N`, the kernel :data:`SLOW_FACTOR` times the work),
    ``decoding`` (without the cache) and ``decoding_slowed`` (with the cache, slowed).
    """
    attention = {"d": D, "device": device, "repeats": TIMER_REPEATS, "kind": "naive"}
    decoding = {"n_tokens": TIMER_TOKENS, "d_model": 64, "device": device}
    calls = TIMER_REPEATS + 1  # the warm-up and the repeats
    tokens = TIMER_TOKENS + min(8, TIMER_TOKENS)  # the warm-up tokens and the timed ones
    return {
        "attention": _timer(sandbox, "time_attention", {"n": TIMER_N, **attention}, 1, calls),
        "attention_small": _timer(sandbox, "time_attention", {"n": TIMER_SMALL_N, **attention}, 1, calls),
        "attention_slowed": _timer(sandbox, "time_attention", {"n": TIMER_SMALL_N, **attention}, SLOW_FACTOR, calls),
        "decoding": _timer(sandbox, "time_decoding", {**decoding, "use_cache": False}, 1, tokens),
        "decoding_cached": _timer(sandbox, "time_decoding", {**decoding, "use_cache": True}, 1, tokens),
        "decoding_slowed": _timer(sandbox, "time_decoding", {**decoding, "use_cache": True}, SLOW_FACTOR, tokens),
    }


def _slopes_in_window(kernels: Kernels) -> bool:
    """Whether the grader's naive and causal slopes are inside the harness windows the grader checks."""
    return all(
        low <= kernels.slope(kernel) <= high
        for kernel, (low, high) in (("naive", HARNESS_CPU.naive_slope), ("causal_naive", HARNESS_CPU.causal_slope))
    )


def measure(sandbox: Sandbox, rng: np.random.Generator) -> Measurement:
    """The grader's whole measurement on its own device (the CPU): the kernels, decoding, the student's timers."""
    try:
        trip = _round_trip(sandbox)
    except _Stop as stop:
        return Measurement(stop.broken, stop.broken, stop.broken)
    parts: list[Any] = []
    for part in (
        lambda: measure_kernels(sandbox, rng, trip),
        lambda: measure_decode(sandbox, trip),
        lambda: run_timers(sandbox),
    ):
        try:
            parts.append(part())
        except _Stop as stop:
            parts.append(stop.broken)
    kernels = parts[0]
    # A burst of other work on a shared machine only ever adds time, and more at one size than another can bend
    # a slope out of its window: then the kernels are measured again (new inputs, every call checked) and each
    # size keeps its fastest call over the attempts. Honest kernels settle; a wrong result stays wrong.
    for _attempt in range(KERNEL_ATTEMPTS - 1):
        if not isinstance(kernels, Kernels) or kernels.wrong or _slopes_in_window(kernels):
            break
        try:
            again = measure_kernels(sandbox, rng, trip)
        except _Stop:
            break
        kernels = Kernels(
            kernels.ns,
            {k: tuple(map(min, kernels.seconds[k], again.seconds[k])) for k in kernels.seconds},
            kernels.wrong + again.wrong,
        )
    measurement = Measurement(kernels, *parts[1:])
    # The student's timers read a wall clock in a process that shares the machine: a burst of other work can
    # make one honest run disagree. A finding counts only when it comes back: the timers run again up to
    # TIMER_ATTEMPTS times in all, and the first run without a finding is kept (a formula or a timer that
    # ignores n is found every time).
    for _attempt in range(TIMER_ATTEMPTS - 1):
        if isinstance(measurement.timers, Broken) or not timer_findings(measurement):
            break
        try:
            measurement = Measurement(measurement.kernels, measurement.decode, run_timers(sandbox))
        except _Stop as stop:
            measurement = Measurement(measurement.kernels, measurement.decode, stop.broken)
    return measurement


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
    "calls",  # the kernel was not called warm-up + repeats times
    "not_slowed",  # the kernel did SLOW_FACTOR times the work, the reported time did not follow
    "disagrees",  # not within AGREE_FACTOR of the grader's measurement of the same kernel
    "ignores_n",  # the same time at two sizes whose kernels the grader measured as far apart
)


def _seconds(timer: Timer, tokens: bool) -> float | None:
    """The timer's number: time_attention's median, time_decoding's median of its second half; None if unusable."""
    value = timer.value
    if tokens:
        ok = isinstance(value, list) and len(value) == TIMER_TOKENS
        numbers = value if ok else []
    else:
        numbers = [value]
    if not numbers or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e300 and math.isfinite(v) for v in numbers
    ):
        return None
    return float(np.median(numbers[len(numbers) // 2 :]))


def timer_findings(measurement: Measurement) -> list[Finding]:
    """What is wrong with the student's timers, judged against the grader's own measurement (empty: they measure)."""
    timers = measurement.timers
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
        if timer.calls != timer.expected_calls:
            findings.append(Finding("calls", key, timer.calls, timer.expected_calls, timer.expected_calls))
    for slowed, plain in (("attention_slowed", "attention_small"), ("decoding_slowed", "decoding_cached")):
        if slowed in seconds and plain in seconds:
            ratio = seconds[slowed] / seconds[plain]
            if not SLOWED_RATIO[0] <= ratio <= SLOWED_RATIO[1]:
                findings.append(Finding("not_slowed", slowed, ratio, *SLOWED_RATIO))
    grader: dict[str, float] = {}
    if isinstance(measurement.kernels, Kernels):
        grader |= {
            "attention": measurement.kernels.at("naive", TIMER_N),
            "attention_small": measurement.kernels.at("naive", TIMER_SMALL_N),
        }
    for key, reference in grader.items():
        if key in seconds:
            ratio = seconds[key] / reference
            if not 1 / AGREE_FACTOR <= ratio <= AGREE_FACTOR:
                low, high = reference / AGREE_FACTOR, reference * AGREE_FACTOR
                findings.append(Finding("disagrees", key, seconds[key], low, high, reference))
    if "attention" in seconds and "attention_small" in seconds and len(grader) == 2:
        theirs = seconds["attention"] / seconds["attention_small"]
        ours = grader["attention"] / grader["attention_small"]
        low = max(ours**0.5, 1.5)  # at least half the grader's growth on log axes: a timer that ignores n gives 1
        # The grader saw the larger n take ``ours`` times as long. Only too little growth is a timer that ignores
        # n: more growth than the grader's was seen from the reference's own timer (25x against 2.2x, reproduced
        # over three attempts on a loaded 2-core machine), and each size's time is already held to the grader's
        # within AGREE_FACTOR above.
        if theirs < low:
            findings.append(Finding("ignores_n", "attention", theirs, low, math.inf, ours))
    return findings
