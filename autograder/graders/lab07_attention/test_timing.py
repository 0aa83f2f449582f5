"""Public checks of step 12, timing attention: the report of `attnlab timing`, and a short re-measurement.

The report (``reports/timing.json``) is data: it is read here, in the grading
process, as untrusted JSON and validated strictly; nothing in it is executed.
The checks recompute what it claims from its own times, hold its numbers to
the windows a correct implementation lands in on its device class, and
re-measure the student's own functions through the sandbox. A missing,
malformed or stub report fails every check with the command to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.cases import timing as timing_cases
from autograder.checking import Got, Lab, expect_case, expect_that
from autograder.i18n import N_
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import StudentCallError
from autograder.timing import analysis, explain, report
from autograder.timing.calibration import (
    GPU_NOT_CALIBRATED,
    REMEASURE_FACTOR,
    REMEASURE_REPEATS,
    REMEASURE_TOKENS,
    SLOPE_TOLERANCE,
    device_class,
    sweep_for,
    windows_for,
)
from autograder.timing.report import ReportError, TimingReport

pytestmark = pytest.mark.step("timing")

NO_REPORT_YET = N_("no reports/timing.json yet: run `attnlab timing` in your lab folder")

MAX_SECONDS_PER_PASS = 60.0  # one forward pass or one token; more and the unit is milliseconds
MAX_REMEASURED = 1e6  # seconds; anything above is not a measurement
CACHE_UNUSED_SPEEDUP = 1.5  # below this total speed-up, the cached run is not using a cache
KIT_DECODER = {"n_tokens": 512, "d_model": 64, "n_layers": 2, "n_heads": 4}


@pytest.fixture(scope="module")
def found(lab: Lab) -> TimingReport | ReportError:
    """The submission's report, or what is wrong with it (read once per grading)."""
    try:
        return report.read(Path(lab.sandbox.submission) / report.PATH)
    except ReportError as error:
        return error


@pytest.fixture(scope="module")
def grading_device(lab: Lab, found: TimingReport | ReportError) -> dict[str, Any]:
    """For a GPU report: whether this machine's sandbox can measure on CUDA (asked once)."""
    if isinstance(found, ReportError) or device_class(found.environment.device) == "cpu":
        return {"cuda_available": False}
    try:
        value = lab.sandbox.probe("timing_environment", "timing", found.environment.device)
    except StudentCallError:
        return {"cuda_available": False}
    return value if isinstance(value, dict) else {"cuda_available": False}


def _cannot_start_cuda(outcome: outcomes.Failure) -> bool:
    """Whether the grading sandbox could not start CUDA (out of memory, or CUDA's own error), by outcome type."""
    if isinstance(outcome, outcomes.Crashed):
        return True
    return isinstance(outcome, outcomes.Raised) and (
        outcome.raised_as("MemoryError") or "cuda" in outcome.message.lower() or "memory" in outcome.message.lower()
    )


def _report(lab: Lab, found: TimingReport | ReportError) -> TimingReport:
    """The validated report; a failed check that says how to make one when there is none."""
    if isinstance(found, ReportError):
        got = explain.NO_REPORT if found.missing else explain.BAD_REPORT.format(problem=found.message)
        Got(lab.step, report.PATH, None).fail(
            explain.RUN_COMMAND, got, not_started=NO_REPORT_YET if found.missing else ""
        )
    return found


def _about(lab: Lab, what: str, value: Any = None) -> Got:
    """A number read from the report, described for messages."""
    return Got(lab.step, f"{report.PATH}: {what}", value)


def _in_window(lab: Lab, what: str, value: float, window: tuple[float, float], low_story: str, high_story: str) -> None:
    low, high = window
    story = low_story if value < low else high_story if value > high else ""
    expect_that(
        _about(lab, what, value), low <= value <= high, f"a value from {low:g} to {high:g}", f"{value:.3g}{story}"
    )


def _device_words(data: TimingReport) -> str:
    return f"{data.environment.device} ({data.environment.device_name[:60]})"


@pytest.mark.points(1)
def test_report_schema(lab: Lab, found: TimingReport | ReportError) -> None:
    """reports/timing.json is a complete report of the kit's sweep, in seconds and bytes"""
    data = _report(lab, found)
    device = data.environment.device
    sweep = sweep_for(device, data.sweep == "quick")
    attention, decoding = data.attention, data.decoding
    kit_ns = [n for n in sweep.ns if sweep.fit[0] <= n <= sweep.fit[1]]
    reported = [int(n) for n in attention.ns[attention.in_fit]]
    expect_that(
        _about(lab, "attention.fit and attention.ns"),
        attention.fit == sweep.fit and reported == kit_ns and attention.d == sweep.d,
        f"the kit's sweep on {device_class(device)}: d = {sweep.d}, slopes fitted over n = "
        f"{', '.join(map(str, kit_ns))}",
        f"d = {attention.d}, fitted over n = {', '.join(map(str, reported))} (run `attnlab timing`; "
        "do not edit the sweep)",
    )
    shape = {
        "n_tokens": decoding.n_tokens,
        "d_model": decoding.d_model,
        "n_layers": decoding.n_layers,
        "n_heads": decoding.n_heads,
    }
    expect_that(
        _about(lab, "decoding"),
        shape == KIT_DECODER and decoding.fit == sweep.decode_fit and decoding.block == sweep.block,
        f"the kit's decoder and fit: {KIT_DECODER}, tokens "
        f"{sweep.decode_fit[0]}..{sweep.decode_fit[1]} in blocks of {sweep.block}",
        f"{shape}, tokens {decoding.fit[0]}..{decoding.fit[1]} in blocks of {decoding.block}",
    )
    slowest = max(float(s.maximum.max()) for s in attention.series.values())
    per_token = float(max(decoding.without_cache.seconds.max(), decoding.with_cache.seconds.max()))
    expect_that(
        _about(lab, "times"),
        slowest <= MAX_SECONDS_PER_PASS and per_token <= MAX_SECONDS_PER_PASS,
        f"seconds (at most {MAX_SECONDS_PER_PASS:g} for one forward pass or one token)",
        f"up to {slowest:.4g} per pass and {per_token:.4g} per token: are these milliseconds? "
        "time_attention and time_decoding return seconds",
    )


@pytest.mark.points(1)
def test_report_consistency(lab: Lab, found: TimingReport | ReportError) -> None:
    """The report's medians, slopes and speed-ups follow from its own times"""
    data = _report(lab, found)
    attention, decoding = data.attention, data.decoding
    fit = f"n = {attention.fit[0]}..{attention.fit[1]}"
    for name, series in attention.series.items():
        medians = np.array([np.median(t) for t in series.seconds])
        low, high = np.array([min(t) for t in series.seconds]), np.array([max(t) for t in series.seconds])
        same = (
            np.allclose(series.median, medians, rtol=1e-9, atol=0)
            and np.array_equal(series.minimum, low)
            and np.array_equal(series.maximum, high)
        )
        expect_that(
            _about(lab, f"attention.series.{name}"),
            same,
            "median, min and max of the reported repeats",
            "values that differ from the repeats' median, min or max",
        )
        fitted = analysis.attention_slope(attention, name)
        expect_that(
            _about(lab, f"the {name} slope over {fit}"),
            abs(series.slope - fitted) <= SLOPE_TOLERANCE,
            f"the least-squares slope of log t on log n of the reported medians, {fitted:.3f} (within "
            f"{SLOPE_TOLERANCE:g})",
            f"{series.slope:.3f} (the report's slopes come from your loglog_slope)",
        )
    for label, run in (("without_cache", decoding.without_cache), ("with_cache", decoding.with_cache)):
        fitted = analysis.decoding_slope(decoding, run.seconds)
        expect_that(
            _about(lab, f"decoding.{label}.slope over tokens {decoding.fit[0]}..{decoding.fit[1]}"),
            abs(run.slope - fitted) <= SLOPE_TOLERANCE,
            "the least-squares slope of the medians of the reported per-token seconds in blocks of "
            f"{decoding.block}, {fitted:.3f} (within {SLOPE_TOLERANCE:g})",
            f"{run.slope:.3f}",
        )
    last, total = analysis.speedups(decoding.without_cache.seconds, decoding.with_cache.seconds, decoding.block)
    expect_that(
        _about(lab, "decoding.speedup_last and speedup_total"),
        np.isclose(decoding.speedup_last, last, rtol=1e-6) and np.isclose(decoding.speedup_total, total, rtol=1e-6),
        f"the speed-ups of the reported latencies, {last:.4g} at the last {decoding.block} tokens "
        f"and {total:.4g} in total",
        f"{decoding.speedup_last:.4g} and {decoding.speedup_total:.4g}",
    )


@pytest.mark.points(0.5)
@pytest.mark.parametrize("case", ["exact", "measured"])
def test_loglog_slope(lab: Lab, found: TimingReport | ReportError, case: str) -> None:
    """loglog_slope is the least-squares slope of log t on log n"""
    _report(lab, found)
    ns, seconds = timing_cases.EXACT if case == "exact" else timing_cases.MEASURED
    name = f"loglog_slope_{case}"
    got = lab.call("loglog_slope", ns, seconds, text=f"loglog_slope(ns, seconds) with ns {ns} and seconds {seconds}")
    slope = got.with_value(np.asarray(_number(got)))
    expect_case(slope, name)


@pytest.mark.points(2)
def test_attention_slopes(lab: Lab, found: TimingReport | ReportError) -> None:
    """The naive head and SDPA scale as a correct implementation does on this device class"""
    data = _report(lab, found)
    windows, attention = windows_for(data.environment.device), data.attention
    fit = f"n = {attention.fit[0]}..{attention.fit[1]} on {_device_words(data)}"
    if windows.calibrated:
        _in_window(
            lab,
            f"the naive head's slope over {fit}",
            attention.series["naive"].slope,
            windows.naive_slope,
            explain.NAIVE_LOW,
            explain.NAIVE_HIGH,
        )
        _in_window(
            lab,
            f"SDPA's slope over {fit}",
            attention.series["sdpa"].slope,
            windows.sdpa_slope,
            explain.SDPA_LOW,
            explain.SDPA_HIGH,
        )
        return
    for name in ("naive", "sdpa"):  # trends only until the windows are calibrated
        median = attention.series[name].median[attention.in_fit]
        expect_that(
            _about(lab, f"the {name} times over {fit}"),
            median[-1] > median[0],
            f"times that grow with n ({GPU_NOT_CALIBRATED})",
            f"{median[0]:.3g} s at n = {attention.fit[0]} and {median[-1]:.3g} s at n = {attention.fit[1]}",
        )


@pytest.mark.points(1)
def test_causal_and_naive_over_sdpa(lab: Lab, found: TimingReport | ReportError) -> None:
    """The causal naive head scales like the naive head, and falls behind SDPA at the largest n"""
    data = _report(lab, found)
    windows, attention = windows_for(data.environment.device), data.attention
    fit = f"n = {attention.fit[0]}..{attention.fit[1]} on {_device_words(data)}"
    ratio = float(analysis.naive_over_sdpa(attention)[-1])
    largest = int(attention.ns[-1])
    if windows.calibrated:
        _in_window(
            lab,
            f"the causal naive head's slope over {fit}",
            attention.series["causal_naive"].slope,
            windows.causal_slope,
            explain.CAUSAL_OFF,
            explain.CAUSAL_OFF,
        )
        minimum = windows.naive_over_sdpa_min
    else:
        minimum = 1.0  # a trend: the naive head is not faster than SDPA at the largest n
    expect_that(
        _about(lab, f"naive/SDPA at n = {largest} on {_device_words(data)}"),
        ratio >= minimum,
        f"at least {minimum:g}",
        f"{ratio:.3g}{explain.RATIO_LOW}",
    )


@pytest.mark.points(1)
def test_memory(lab: Lab, found: TimingReport | ReportError) -> None:
    """The naive head's peak memory holds the n x n score matrix; SDPA's stays far below it"""
    data = _report(lab, found)
    memory = data.memory
    for index, n in enumerate(memory.ns):
        if n < 1024:  # small sizes drown in the allocator's granularity
            continue
        peak, scores = memory.allocated["naive"][index], memory.score_bytes[index]
        expect_that(
            _about(lab, f"the naive head's peak memory at n = {int(n)}"),
            peak >= scores,
            f"at least one float32 score matrix, 4 n^2 = {int(scores)} bytes",
            f"{int(peak)} bytes{explain.MEMORY_LOW}",
        )
    largest = int(np.argmax(memory.ns))
    naive, sdpa = memory.allocated["naive"][largest], memory.allocated["sdpa"][largest]
    expect_that(
        _about(lab, f"SDPA's peak memory at n = {int(memory.ns[largest])}"),
        sdpa <= naive / 2,
        f"at most half the naive head's {int(naive)} bytes",
        f"{int(sdpa)} bytes{explain.MEMORY_SDPA}",
    )


@pytest.mark.points(1)
def test_decoding_tokens(lab: Lab, found: TimingReport | ReportError) -> None:
    """Decoding with and without the KV cache generates the same tokens"""
    data = _report(lab, found)
    without, with_cache = data.decoding.without_cache.tokens, data.decoding.with_cache.tokens
    first = next((i for i, (a, b) in enumerate(zip(without, with_cache)) if a != b), None)
    expect_that(
        _about(lab, f"the {len(without)} tokens of decoding.without_cache and decoding.with_cache"),
        first is None,
        "the same tokens from both runs",
        "different tokens"
        if first is None
        else f"a first difference at token {first + 1}: {without[first]} without the cache, "
        f"{with_cache[first]} with it{explain.TOKENS_DIFFER}",
    )


@pytest.mark.points(2)
def test_decoding_latency(lab: Lab, found: TimingReport | ReportError) -> None:
    """Per-token latency grows without the cache and stays flat with it; the cache pays off at token 512"""
    data = _report(lab, found)
    windows, decoding = windows_for(data.environment.device), data.decoding
    where = f"tokens {decoding.fit[0]}..{decoding.fit[1]} on {_device_words(data)}"
    without, cached = decoding.without_cache.slope, decoding.with_cache.slope
    if not windows.calibrated:
        # consistency only until the GPU windows are calibrated (a launch-bound GPU runs both about equally fast)
        return
    if decoding.speedup_total < CACHE_UNUSED_SPEEDUP:
        _about(lab, "decoding with and without the cache").fail(
            "a run with the cache much faster than the one without",
            f"a total speed-up of {decoding.speedup_total:.2f}x and slopes {without:.2f} and {cached:.2f}",
            "cache_unused",
        )
    _in_window(
        lab,
        f"the per-token slope without the cache over {where}",
        without,
        windows.no_cache_slope,
        explain.NO_CACHE_OFF,
        explain.NO_CACHE_OFF,
    )
    _in_window(
        lab,
        f"the per-token slope with the cache over {where}",
        cached,
        windows.cache_slope,
        explain.CACHE_OFF,
        explain.CACHE_OFF,
    )
    expect_that(
        _about(lab, "the slope without the cache minus the slope with it"),
        without - cached >= windows.slope_gap_min,
        f"at least {windows.slope_gap_min:g}",
        f"{without - cached:.3g}{explain.CACHE_OFF}",
    )
    expect_that(
        _about(lab, f"the speed-up at token {decoding.n_tokens} (medians of the last {decoding.block} tokens)"),
        decoding.speedup_last >= windows.speedup_last_min,
        f"at least {windows.speedup_last_min:g}",
        f"{decoding.speedup_last:.3g}{explain.SPEEDUP_LOW}",
    )
    expect_that(
        _about(lab, f"the total speed-up over {decoding.n_tokens} tokens"),
        decoding.speedup_total >= windows.speedup_total_min,
        f"at least {windows.speedup_total_min:g}",
        f"{decoding.speedup_total:.3g}{explain.SPEEDUP_LOW}",
    )


def _within_factor(lab: Lab, got: Got, measured: float, reported: float, what: str) -> None:
    ratio = measured / reported
    expect_that(
        got,
        1 / REMEASURE_FACTOR <= ratio <= REMEASURE_FACTOR,
        f"{what} within a factor of {REMEASURE_FACTOR:g} of the report's {reported:.3g} s",
        f"{measured:.3g} s, {ratio:.2g} times the report{explain.REMEASURE_OFF}",
    )


def _number(got: Got) -> float:
    """The returned number; an integer too large for a float fails the check instead of breaking it."""
    if isinstance(got.value, int) and not isinstance(got.value, bool) and abs(got.value) > 1e300:
        got.fail("a number", "an integer too large for a float")
    return got.number()


def _positive(got: Got) -> float:
    value = _number(got)
    expect_that(got, 0 < value < MAX_REMEASURED, "a positive number of seconds", f"{value!r}")
    return value


@pytest.mark.points(2)
def test_remeasurement(lab: Lab, found: TimingReport | ReportError, grading_device: dict[str, Any]) -> None:
    """A short re-measurement of your own functions agrees with the report"""
    data = _report(lab, found)
    device = data.environment.device
    if device_class(device) != "cpu":
        if not grading_device.get("cuda_available"):
            return  # not comparable here; the review check says so
        try:  # the grading sandbox may not be able to start CUDA (its address-space limit): then not comparable either
            lab.sandbox.call("timing", "time_attention", 256, data.attention.d, device, 1)
        except StudentCallError as error:
            if _cannot_start_cuda(error.outcome):
                grading_device["cuda_available"] = False
                return
    attention, decoding = data.attention, data.decoding
    n, largest = int(attention.ns[-1]), len(attention.ns) - 1
    for kind, name in (("naive", "naive"), ("sdpa", "sdpa")):
        text = (
            f"time_attention({n}, d={attention.d}, device={device!r}, repeats={REMEASURE_REPEATS}, "
            f"kind={kind!r}) (re-measured now)"
        )
        got = lab.call("time_attention", n, attention.d, device, REMEASURE_REPEATS, kind=kind, text=text)
        _within_factor(lab, got, _positive(got), float(attention.series[name].median[largest]), "a median")
    text = (
        f"time_decoding({REMEASURE_TOKENS}, d_model={decoding.d_model}, use_cache=False, "
        f"device={device!r}) (re-measured now, {decoding.rounds} times)"
    )
    runs = []
    for _ in range(decoding.rounds):  # the report keeps each token's fastest of its rounds; so does the re-measurement
        got = lab.call("time_decoding", REMEASURE_TOKENS, decoding.d_model, False, device, text=text)
        value = got.value.tolist() if isinstance(got.value, np.ndarray) else got.value
        ok = (
            isinstance(value, (list, tuple))
            and len(value) == REMEASURE_TOKENS
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < MAX_REMEASURED for v in value)
        )
        expect_that(got, ok, f"a list of {REMEASURE_TOKENS} positive per-token seconds", "something else")
        runs.append(value)
    half = REMEASURE_TOKENS // 2
    measured, reported = (
        float(np.median(analysis.fastest_per_token(runs)[half:])),
        float(np.median(decoding.without_cache.seconds[half:REMEASURE_TOKENS])),
    )
    _within_factor(lab, got, measured, reported, f"the median of tokens {half + 1}..{REMEASURE_TOKENS}")


@pytest.mark.points(0)
def test_review(lab: Lab, found: TimingReport | ReportError, grading_device: dict[str, Any]) -> None:
    """Nothing in the report needs a person's review (informational, 0 points)"""
    data = _report(lab, found)
    notes = [f"too clean? {flag}" for flag in analysis.review_flags(data)]
    device = data.environment.device
    if not windows_for(device).calibrated:
        notes.append(GPU_NOT_CALIBRATED)
    if device_class(device) == "cuda" and data.environment.torch.endswith("+cpu"):
        notes.append(f"the report says {device}, but its torch ({data.environment.torch}) is a CPU-only build")
    if device_class(device) != "cpu" and not grading_device.get("cuda_available"):
        notes.append(explain.NOT_MEASURED_HERE.format(device=device))
    expect_that(_about(lab, "review notes"), not notes, explain.REVIEW_EXPECTED, "; ".join(notes))
