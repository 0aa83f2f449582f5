"""Public checks of step 13, timing attention: the report of `attnlab timing`, and the grader's own measurement.

The report (``reports/timing.json``) is data: it is read here, in the grading
process, as untrusted JSON and validated strictly; nothing in it is executed.
The checks recompute what it claims from its own times, hold its numbers to
the windows a correct implementation lands in on its device class, and
check it against the grader's own measurement (:mod:`autograder.judge.timing.verified`:
the student's kernels timed from outside the child, every result compared with
the reference). A report counts only when the student's timing functions measure
(checked on the grader's CPU); a report from a device this grader lacks leaves
its device-specific checks *for review* (0 points until confirmed). A missing,
malformed or stub report fails every report check with the command to run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

from autograder.i18n import N_, _, ngettext
from autograder.judge import messages
from autograder.judge.cases import timing as timing_cases
from autograder.judge.checking import Got, Lab, expect_case, expect_that
from autograder.judge.oracle import Oracle
from autograder.judge.timing import analysis, explain, report, verified
from autograder.judge.timing.calibration import (
    GPU_NOT_CALIBRATED,
    SLOPE_TOLERANCE,
    HarnessWindows,
    Windows,
    device_class,
    sweep_for,
    windows_for,
)
from autograder.judge.timing.report import ReportError, TimingReport
from autograder.sandbox.client import Sandbox, StudentCallError

pytestmark = pytest.mark.step("timing")

NO_REPORT_YET = explain.NO_REPORT_YET  # also what a timing step graded untouched says (autograder.grading.engine)

MAX_SECONDS_PER_PASS = 60.0  # one forward pass or one token; more and the unit is milliseconds
MAX_REMEASURED = 1e6  # seconds; anything above is not a measurement
CACHE_UNUSED_SPEEDUP = 1.5  # below this total speed-up, the cached run is not using a cache
KIT_DECODER = {"n_tokens": 512, "d_model": 64, "n_layers": 2, "n_heads": 4}
AT_LEAST = N_("at least {value}")
OVER = N_("{what} over {where}")  # a quantity over a range of sizes, e.g. the naive head's slope over n = 256..2048
FIT_ON = N_("{range} on {device}")
SECONDS_AT = N_("{seconds} s at n = {n}")


@pytest.fixture(scope="module")
def found(lab: Lab) -> TimingReport | ReportError:
    """The submission's report, or what is wrong with it (read once per grading)."""
    return _read_report(lab)


def _read_report(lab: Lab) -> TimingReport | ReportError:
    """The submission's report, or what is wrong with it (a function as well as the fixture: the grader's own
    measurement reads the report's device without depending on ``found``, which marks the checks that grade the
    report)."""
    left_out = [  # the report, or its folder, left out by the intake (a link, never followed; or unreadable)
        (path, kind)
        for path, kind in lab.sandbox.ignored.items()
        if path.endswith(report.FILE) or str(report.PATH).startswith(f"{path}/")
    ]
    if left_out and not (Path(lab.sandbox.submission) / report.PATH).is_file():
        return ReportError(messages.left_out(*left_out[0]))
    try:
        return report.read(Path(lab.sandbox.submission) / report.PATH)
    except ReportError as error:
        return error


@pytest.fixture(scope="module")
def gpu(lab: Lab) -> Iterator[tuple[dict[str, Any], Sandbox | None]]:
    """For a GPU report: whether this machine's sandbox can measure on CUDA (asked once, in a child with the
    limits a GPU needs), and that child when it can (the grader's measurement then runs there)."""
    found = _read_report(lab)
    if isinstance(found, ReportError) or device_class(found.environment.device) == "cpu":
        yield {"cuda_available": False}, None
        return
    step = lab.sandbox
    sandbox = Sandbox(
        step.submission,
        verified.gpu_limits(step.limits),
        step.hangs,
        step.isolation,
        ignored=step.ignored,
        torch=True,
        cpus=step.cpus,
        label="timing-gpu",
    )
    try:
        value = sandbox.probe("timing_environment", "timing", found.environment.device)
    except StudentCallError:
        value = None
    found_cuda = value if isinstance(value, dict) else {"cuda_available": False}
    try:
        yield found_cuda, sandbox if found_cuda.get("cuda_available") else None
    finally:
        sandbox.close()


@pytest.fixture(scope="module")
def grading_device(gpu: tuple[dict[str, Any], Sandbox | None]) -> dict[str, Any]:
    """For a GPU report: what this machine's sandbox found of CUDA (``cuda_available`` False: none)."""
    return gpu[0]


def _measuring_device(gpu: tuple[dict[str, Any], Sandbox | None]) -> str:
    """Where the grader measures: the report's GPU when this machine's sandbox can use it, else its CPU."""
    return str(gpu[0].get("device", "cuda")) if gpu[1] is not None else "cpu"


def _reference_logits(oracle: Oracle) -> verified.ReferenceLogits | None:
    """The reference decoder's logits on the checks' trusted side, where a reference is available."""
    if not oracle.has_reference:
        return None

    def logits(weights: dict[str, Any], tokens: list[int]) -> np.ndarray:
        return np.asarray(oracle.probe("oracle_gpt_logits", weights, tokens), dtype=float)

    return logits


@pytest.fixture(scope="module")
def measured(lab: Lab, gpu: tuple[dict[str, Any], Sandbox | None], oracle: Oracle) -> verified.Measurement:
    """The grader's own measurement of the kernels and the timing functions, on this machine (once): on the
    report's GPU where this machine's sandbox can use it, else on its CPU."""
    device = _measuring_device(gpu)
    sandbox = gpu[1] if device != "cpu" and gpu[1] is not None else lab.sandbox
    return verified.measure(sandbox, np.random.default_rng(), device, _reference_logits(oracle))


def _broken(lab: Lab, broken: verified.Broken, what: str) -> NoReturn:
    Got(lab.step, what, None).no_result(broken.outcome, broken.function, broken.called)


def _backed(lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement) -> TimingReport:
    """The report, when the student's timing functions measure (else the report's numbers are no evidence)."""
    data = _report(lab, found)
    if measured.timers_ok:
        return data
    if isinstance(measured.timers, verified.Broken):
        functions = measured.timers.function
    else:
        names = {finding.timer.partition("_")[0] for finding in verified.timer_findings(measured)}
        functions = ", ".join(f"time_{name}" for name in sorted(names))
    _about(lab, _("the report's numbers")).fail(
        _(explain.NOT_EVIDENCE_EXPECTED), _(explain.NOT_EVIDENCE).format(functions=functions)
    )


def _device_checked(
    lab: Lab, data: TimingReport, measured: verified.Measurement, grading_device: dict[str, Any]
) -> None:
    """A device-specific check: for review where this grader cannot re-measure the report's device (or has no
    calibrated windows for it); a CPU report must agree with the grader's own measurement of the same kernels."""
    device = data.environment.device
    if device_class(device) != device_class(measured.device) or not windows_for(device).calibrated:
        story = explain.CUDA_UNCALIBRATED_REVIEW if grading_device.get("cuda_available") else explain.DEVICE_REVIEW
        _about(lab, _("the times on {device}").format(device=device)).review(
            _(explain.REVIEW_EXPECTED), _(story).format(device=_device_words(data))
        )
    pairs: list[tuple[str, float, float]] = []
    attention, decoding = data.attention, data.decoding
    if isinstance(measured.kernels, verified.Kernels):
        largest = measured.kernels.ns[-1]
        for index, n in enumerate(int(n) for n in attention.ns):
            # every size of the fit range: one the grader measured as it is, a larger one scaled from the grader's
            # largest as n^2 (so no point of the fit can be made up: a size driven towards zero would bend the
            # slope); smaller sizes are the machine's overheads more than the kernel's, on either side
            if not attention.in_fit[index] or n < measured.kernels.ns[0]:
                continue
            measured_here = n in measured.kernels.ns
            if not measured_here and n < largest:
                continue
            scale = 1.0 if measured_here else (n / largest) ** 2
            for name in ("naive", "sdpa", "causal_naive"):
                where = n if measured_here else largest
                what = _("the {name} median at n = {n}").format(name=name, n=n)
                grader = measured.kernels.at(name, where) * scale
                pairs.append((what, float(attention.series[name].median[index]), grader))
    if isinstance(measured.decode, verified.Decode) and decoding.n_tokens >= measured.decode.positions[-1] + 8:
        length = measured.decode.positions[-1]
        around = slice(length - 8, length + 8)  # token ``length`` is generated from a prefix of ``length`` tokens
        for label, run, grader in (
            ("without_cache", decoding.without_cache, measured.decode.without_cache[-1]),
            ("with_cache", decoding.with_cache, measured.decode.with_cache[-1]),
        ):
            what = _("the median of decoding.{label} around token {token}").format(label=label, token=length)
            pairs.append((what, float(np.median(run.seconds[around])), grader))
    for what, reported, grader in pairs:
        ratio = reported / grader
        expect_that(
            _about(lab, what),
            1 / verified.REPORT_FACTOR <= ratio <= verified.REPORT_FACTOR,
            _(
                "within a factor of {factor} of the grader's own measurement (scaled as n^2 from its largest size "
                "for a larger one), {seconds} s"
            ).format(factor=f"{verified.REPORT_FACTOR:g}", seconds=f"{grader:.3g}"),
            _("{seconds} s, {ratio} times the grader's").format(seconds=f"{reported:.3g}", ratio=f"{ratio:.2g}")
            + _(explain.REPORT_DISAGREES),
        )


def _report(lab: Lab, found: TimingReport | ReportError) -> TimingReport:
    """The validated report; a failed check that says how to make one when there is none."""
    if isinstance(found, ReportError):
        got = _(explain.NO_REPORT) if found.missing else _(explain.BAD_REPORT).format(problem=found.message)
        Got(lab.step, report.PATH, None).fail(
            _(explain.RUN_COMMAND), got, not_started=NO_REPORT_YET if found.missing else ""
        )
    return found


def _about(lab: Lab, what: str, value: Any = None) -> Got:
    """A number read from the report, described for messages (``what`` in the active language)."""
    return Got(lab.step, f"{report.PATH}: {what}", value)


def _in_window(
    lab: Lab,
    what: str,
    value: float,
    window: tuple[float, float] | None,
    low_story: str,
    high_story: str | None = None,
) -> None:
    """A report's number in its window (None: a quantity this device does not separate, not checked); the story
    told below it (``low_story``) or above (``high_story``, by default the same)."""
    if window is None:
        return
    low, high = window
    story = _(low_story) if value < low else _(high_story or low_story) if value > high else ""
    expect_that(
        _about(lab, what, value),
        low <= value <= high,
        _("a value from {low} to {high}").format(low=f"{low:g}", high=f"{high:g}"),
        f"{value:.3g}{story}",
    )


def _decoding_checks(
    lab: Lab,
    label: Callable[[Lab, str], Got],
    windows: Windows | HarnessWindows,
    in_window: Callable[[Lab, str, float, tuple[float, float], str], None],
    where: str,
    measured: tuple[float, float, float],
    speedup_at: str,
) -> None:
    """The decoding checks of the report and of the grader's own measurement: the per-token slopes without and
    with the cache in their windows (``in_window``), the gap between them, the speed-up at the last token.

    Args:
        label: describes a quantity for messages (:func:`_about` for the report, :func:`_measured`).
        windows: calibrated windows (their decoding fields are set).
        where: the range the slopes were fitted over, for messages.
        measured: the slope without the cache, the slope with it, the speed-up at the last token.
        speedup_at: the speed-up's description, in the active language.
    """
    without, cached, speedup = measured
    for what, value, window, story in (
        (_("the per-token slope without the cache"), without, windows.no_cache_slope, explain.NO_CACHE_OFF),
        (_("the per-token slope with the cache"), cached, windows.cache_slope, explain.CACHE_OFF),
    ):
        in_window(lab, _(OVER).format(what=what, where=where), value, window, story)
    at_least(
        label(lab, _("the slope without the cache minus the slope with it")),
        without - cached,
        windows.slope_gap_min,
        explain.CACHE_OFF,
    )
    at_least(label(lab, speedup_at), speedup, windows.speedup_last_min, explain.SPEEDUP_LOW)


def at_least(got: Got, value: float, minimum: float | None, story: str) -> None:
    """``value`` is at least ``minimum`` (None: a quantity this device does not separate, not checked)."""
    if minimum is None:
        return
    expect_that(got, value >= minimum, _(AT_LEAST).format(value=f"{minimum:g}"), f"{value:.3g}{_(story)}")


def _device_words(data: TimingReport) -> str:
    return f"{data.environment.device} ({data.environment.device_name[:60]})"


@pytest.mark.points(1)
def test_report_schema(lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement) -> None:
    """reports/timing.json is a complete report of the kit's sweep, in seconds and bytes"""
    data = _backed(lab, found, measured)
    device = data.environment.device
    sweep = sweep_for(device, data.sweep == "quick")
    attention, decoding = data.attention, data.decoding
    kit_ns = [n for n in sweep.ns if sweep.fit[0] <= n <= sweep.fit[1]]
    reported = [int(n) for n in attention.ns[attention.in_fit]]
    expect_that(
        _about(lab, _("{first} and {second}").format(first="attention.fit", second="attention.ns")),
        attention.fit == sweep.fit and reported == kit_ns and attention.d == sweep.d,
        _("the kit's sweep on {device}: d = {d}, slopes fitted over n = {ns}").format(
            device=device_class(device), d=sweep.d, ns=", ".join(map(str, kit_ns))
        ),
        _("d = {d}, fitted over n = {ns} (run `attnlab timing`; do not edit the sweep)").format(
            d=attention.d, ns=", ".join(map(str, reported))
        ),
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
        _("the kit's decoder and fit: {decoder}, tokens {tokens} in blocks of {block}").format(
            decoder=KIT_DECODER, tokens=f"{sweep.decode_fit[0]}..{sweep.decode_fit[1]}", block=sweep.block
        ),
        _("{decoder}, tokens {tokens} in blocks of {block}").format(
            decoder=shape, tokens=f"{decoding.fit[0]}..{decoding.fit[1]}", block=decoding.block
        ),
    )
    slowest = max(float(s.maximum.max()) for s in attention.series.values())
    per_token = float(max(decoding.without_cache.seconds.max(), decoding.with_cache.seconds.max()))
    expect_that(
        _about(lab, _("times")),
        slowest <= MAX_SECONDS_PER_PASS and per_token <= MAX_SECONDS_PER_PASS,
        _("seconds (at most {limit} for one forward pass or one token)").format(limit=f"{MAX_SECONDS_PER_PASS:g}"),
        _(
            "up to {per_pass} per pass and {per_token} per token: are these milliseconds? "
            "time_attention and time_decoding return seconds"
        ).format(per_pass=f"{slowest:.4g}", per_token=f"{per_token:.4g}"),
    )


@pytest.mark.points(1)
def test_report_consistency(lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement) -> None:
    """The report's medians, slopes and speed-ups follow from its own times"""
    data = _backed(lab, found, measured)
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
            _("median, min and max of the reported repeats"),
            _("values that differ from the repeats' median, min or max"),
        )
        fitted = analysis.attention_slope(attention, name)
        expect_that(
            _about(lab, _(OVER).format(what=_("the {name} slope").format(name=name), where=fit)),
            abs(series.slope - fitted) <= SLOPE_TOLERANCE,
            _("the least-squares slope of log t on log n of the reported medians, {slope} (within {tolerance})").format(
                slope=f"{fitted:.3f}", tolerance=f"{SLOPE_TOLERANCE:g}"
            ),
            _("{slope} (the report's slopes come from your loglog_slope)").format(slope=f"{series.slope:.3f}"),
        )
    for label, run in (("without_cache", decoding.without_cache), ("with_cache", decoding.with_cache)):
        fitted = analysis.decoding_slope(decoding, run.seconds)
        expect_that(
            _about(
                lab,
                _(OVER).format(
                    what=f"decoding.{label}.slope",
                    where=_("tokens {tokens}").format(tokens=f"{decoding.fit[0]}..{decoding.fit[1]}"),
                ),
            ),
            abs(run.slope - fitted) <= SLOPE_TOLERANCE,
            _(
                "the least-squares slope of the medians of the reported per-token seconds in blocks of "
                "{block}, {slope} (within {tolerance})"
            ).format(block=decoding.block, slope=f"{fitted:.3f}", tolerance=f"{SLOPE_TOLERANCE:g}"),
            f"{run.slope:.3f}",
        )
    last, total = analysis.speedups(decoding.without_cache.seconds, decoding.with_cache.seconds, decoding.block)
    expect_that(
        _about(lab, _("{first} and {second}").format(first="decoding.speedup_last", second="speedup_total")),
        np.isclose(decoding.speedup_last, last, rtol=1e-6) and np.isclose(decoding.speedup_total, total, rtol=1e-6),
        ngettext(
            "the speed-ups of the reported latencies, {last} at the last {block} token and {total} in total",
            "the speed-ups of the reported latencies, {last} at the last {block} tokens and {total} in total",
            decoding.block,
        ).format(last=f"{last:.4g}", block=decoding.block, total=f"{total:.4g}"),
        _("{first} and {second}").format(first=f"{decoding.speedup_last:.4g}", second=f"{decoding.speedup_total:.4g}"),
    )


@pytest.mark.points(0.5)
@pytest.mark.parametrize("case", ["exact", "measured"])
def test_loglog_slope(lab: Lab, found: TimingReport | ReportError, case: str) -> None:
    """loglog_slope is the least-squares slope of log t on log n"""
    ns, seconds = timing_cases.EXACT if case == "exact" else timing_cases.MEASURED
    name = f"loglog_slope_{case}"
    got = lab.call(
        "loglog_slope",
        ns,
        seconds,
        text=_("{call} with ns {ns} and seconds {seconds}").format(
            call="loglog_slope(ns, seconds)", ns=ns, seconds=seconds
        ),
    )
    slope = got.with_value(np.asarray(_number(got)))
    expect_case(slope, name)


@pytest.mark.points(1)
def test_attention_slopes(
    lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement, grading_device: dict[str, Any]
) -> None:
    """The naive head and SDPA scale as a correct implementation does on this device class"""
    data = _backed(lab, found, measured)
    _device_checked(lab, data, measured, grading_device)
    windows, attention = windows_for(data.environment.device), data.attention
    fit = _(FIT_ON).format(range=f"n = {attention.fit[0]}..{attention.fit[1]}", device=_device_words(data))
    if windows.calibrated:
        _in_window(
            lab,
            _(OVER).format(what=_("the naive head's slope"), where=fit),
            attention.series["naive"].slope,
            windows.naive_slope,
            explain.NAIVE_LOW,
            explain.NAIVE_HIGH,
        )
        _in_window(
            lab,
            _(OVER).format(what=_("SDPA's slope"), where=fit),
            attention.series["sdpa"].slope,
            windows.sdpa_slope,
            explain.SDPA_LOW,
            explain.SDPA_HIGH,
        )
        return
    for name in ("naive", "sdpa"):  # trends only until the windows are calibrated
        median = attention.series[name].median[attention.in_fit]
        expect_that(
            _about(lab, _(OVER).format(what=_("the {name} times").format(name=name), where=fit)),
            median[-1] > median[0],
            _("times that grow with n ({note})").format(note=_(GPU_NOT_CALIBRATED)),
            _("{first} and {second}").format(
                first=_(SECONDS_AT).format(seconds=f"{median[0]:.3g}", n=attention.fit[0]),
                second=_(SECONDS_AT).format(seconds=f"{median[-1]:.3g}", n=attention.fit[1]),
            ),
        )


@pytest.mark.points(0.5)
def test_causal_and_naive_over_sdpa(
    lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement, grading_device: dict[str, Any]
) -> None:
    """The causal naive head scales like the naive head, and falls behind SDPA at the largest n"""
    data = _backed(lab, found, measured)
    _device_checked(lab, data, measured, grading_device)
    windows, attention = windows_for(data.environment.device), data.attention
    fit = _(FIT_ON).format(range=f"n = {attention.fit[0]}..{attention.fit[1]}", device=_device_words(data))
    ratio = float(analysis.naive_over_sdpa(attention)[-1])
    largest = int(attention.ns[-1])
    if windows.calibrated:
        _in_window(
            lab,
            _(OVER).format(what=_("the causal naive head's slope"), where=fit),
            attention.series["causal_naive"].slope,
            windows.causal_slope,
            explain.CAUSAL_OFF,
            explain.CAUSAL_OFF,
        )
        minimum = windows.naive_over_sdpa_min
    else:
        minimum = 1.0  # a trend: the naive head is not faster than SDPA at the largest n
    at_least(
        _about(lab, _(FIT_ON).format(range=f"naive/SDPA, n = {largest}", device=_device_words(data))),
        ratio,
        minimum,
        explain.RATIO_LOW,
    )


@pytest.mark.points(0.5)
def test_memory(
    lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement, grading_device: dict[str, Any]
) -> None:
    """The naive head's peak memory holds the n x n score matrix; SDPA's stays far below it"""
    data = _backed(lab, found, measured)
    _device_checked(lab, data, measured, grading_device)
    memory = data.memory
    for index, n in enumerate(memory.ns):
        if n < 1024:  # small sizes drown in the allocator's granularity
            continue
        peak, scores = memory.allocated["naive"][index], memory.score_bytes[index]
        expect_that(
            _about(lab, _("the naive head's peak memory at n = {n}").format(n=int(n))),
            peak >= scores,
            ngettext(
                "at least one float32 score matrix, 4 n^2 = {bytes} byte",
                "at least one float32 score matrix, 4 n^2 = {bytes} bytes",
                int(scores),
            ).format(bytes=int(scores)),
            ngettext("{bytes} byte", "{bytes} bytes", int(peak)).format(bytes=int(peak)) + _(explain.MEMORY_LOW),
        )
    largest = int(np.argmax(memory.ns))
    naive, sdpa = memory.allocated["naive"][largest], memory.allocated["sdpa"][largest]
    expect_that(
        _about(lab, _("SDPA's peak memory at n = {n}").format(n=int(memory.ns[largest]))),
        sdpa <= naive / 2,
        ngettext(
            "at most half the naive head's {bytes} byte", "at most half the naive head's {bytes} bytes", int(naive)
        ).format(bytes=int(naive)),
        ngettext("{bytes} byte", "{bytes} bytes", int(sdpa)).format(bytes=int(sdpa)) + _(explain.MEMORY_SDPA),
    )


@pytest.mark.points(1)
def test_decoding_tokens(lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement) -> None:
    """Decoding with and without the KV cache generates the same tokens"""
    data = _backed(lab, found, measured)
    without, with_cache = data.decoding.without_cache.tokens, data.decoding.with_cache.tokens
    first = next((i for i, (a, b) in enumerate(zip(without, with_cache)) if a != b), None)
    expect_that(
        _about(
            lab,
            ngettext(
                "the {count} token of {first} and {second}", "the {count} tokens of {first} and {second}", len(without)
            ).format(count=len(without), first="decoding.without_cache", second="decoding.with_cache"),
        ),
        first is None,
        _("the same tokens from both runs"),
        _("different tokens")
        if first is None
        else _("a first difference at token {token}: {without} without the cache, {with_cache} with it").format(
            token=first + 1, without=without[first], with_cache=with_cache[first]
        )
        + _(explain.TOKENS_DIFFER),
    )


@pytest.mark.points(1)
def test_decoding_latency(
    lab: Lab, found: TimingReport | ReportError, measured: verified.Measurement, grading_device: dict[str, Any]
) -> None:
    """Per-token latency grows without the cache and stays flat with it; the cache pays off at token 512"""
    data = _backed(lab, found, measured)
    _device_checked(lab, data, measured, grading_device)
    windows, decoding = windows_for(data.environment.device), data.decoding
    where = _(FIT_ON).format(
        range=_("tokens {tokens}").format(tokens=f"{decoding.fit[0]}..{decoding.fit[1]}"), device=_device_words(data)
    )
    without, cached = decoding.without_cache.slope, decoding.with_cache.slope
    if not windows.calibrated:
        # consistency only until the GPU windows are calibrated (a launch-bound GPU runs both about equally fast)
        return
    separated = windows.speedup_total_min is not None and windows.speedup_total_min >= CACHE_UNUSED_SPEEDUP
    if separated and decoding.speedup_total < CACHE_UNUSED_SPEEDUP:
        _about(lab, _("decoding with and without the cache")).fail(
            _("a run with the cache much faster than the one without"),
            _("a total speed-up of {speedup} and slopes {without} and {cached}").format(
                speedup=f"{decoding.speedup_total:.2f}x", without=f"{without:.2f}", cached=f"{cached:.2f}"
            ),
            "cache_unused",
        )
    speedup_at = ngettext(
        "the speed-up at token {token} (median of the last {block} token)",
        "the speed-up at token {token} (medians of the last {block} tokens)",
        decoding.block,
    ).format(token=decoding.n_tokens, block=decoding.block)
    _decoding_checks(lab, _about, windows, _in_window, where, (without, cached, decoding.speedup_last), speedup_at)
    at_least(
        _about(
            lab,
            ngettext(
                "the total speed-up over {count} token", "the total speed-up over {count} tokens", decoding.n_tokens
            ).format(count=decoding.n_tokens),
        ),
        decoding.speedup_total,
        windows.speedup_total_min,
        explain.SPEEDUP_LOW,
    )


def _number(got: Got) -> float:
    """The returned number; an integer too large for a float fails the check instead of breaking it."""
    if isinstance(got.value, int) and not isinstance(got.value, bool) and abs(got.value) > 1e300:
        got.fail(_(messages.A_NUMBER), _("an integer too large for a float"))
    return got.number()


def _positive(got: Got) -> float:
    value = _number(got)
    expect_that(got, 0 < value < MAX_REMEASURED, _("a positive number of seconds"), f"{value!r}")
    return value


@pytest.mark.points(0)
def test_review(lab: Lab, found: TimingReport | ReportError, grading_device: dict[str, Any]) -> None:
    """Nothing in the report needs a person's review (informational, 0 points)"""
    data = _report(lab, found)
    notes = [_("too clean? {flag}").format(flag=flag) for flag in analysis.review_flags(data)]
    device = data.environment.device
    if not windows_for(device).calibrated:
        notes.append(_(GPU_NOT_CALIBRATED))
    if device_class(device) == "cuda" and data.environment.torch.endswith("+cpu"):
        notes.append(
            _("the report says {device}, but its torch ({torch}) is a CPU-only build").format(
                device=device, torch=data.environment.torch
            )
        )
    if device_class(device) != "cpu" and not grading_device.get("cuda_available"):
        notes.append(_(explain.NOT_MEASURED_HERE).format(device=device))
    expect_that(_about(lab, _("review notes")), not notes, _(explain.NOTHING_TO_REVIEW), "; ".join(notes))


# -- the grader's own measurement: earned on the grader's device, whatever device the report is from ----------
MEASURED_BY_GRADER = N_("the grader's measurement of {what}")
TIMED_CALL = N_("{kernel} on the grader's inputs at n = {n} (timed by the grader)")
TIMED_TOKEN = N_("{kernel} on the grader's weights and tokens at position {n} (timed by the grader)")


def _measured(lab: Lab, what: str) -> Got:
    return Got(lab.step, _(MEASURED_BY_GRADER).format(what=what), None)


def _harness_windows(lab: Lab, measured: verified.Measurement) -> HarnessWindows:
    """The windows of the grader's own measurement on its device; uncalibrated ones leave the check for review."""
    windows = measured.windows
    if windows is None:
        _measured(lab, measured.device).review(
            _(explain.REVIEW_EXPECTED), _(explain.HARNESS_UNCALIBRATED).format(device=measured.device)
        )
    return windows


@pytest.mark.points(1)
def test_kernels_verified(lab: Lab, measured: verified.Measurement) -> None:
    """Every call the grader timed returned the reference's result: your naive head, plain and causal, and your
    decoder with and without the cache"""
    for part, what in ((measured.kernels, "naive_attention"), (measured.decode, "toy_gpt")):
        if isinstance(part, verified.Broken):
            _broken(lab, part, _(MEASURED_BY_GRADER).format(what=what))
    for wrong in measured.decode.wrong:
        what = _("the reference's logits at that position") if measured.decode.against_reference else None
        Got(lab.step, _(TIMED_TOKEN).format(kernel=wrong.kernel, n=wrong.n), None).fail(
            what or _("the logits of gpt_forward over the same prefix"),
            (
                _("logits of another shape")
                if wrong.worst < 0
                else _("values off by up to {worst}").format(worst=f"{wrong.worst:.3g}")
            )
            + _(explain.WRONG_LOGITS),
        )
    for wrong in measured.kernels.wrong:
        kernel = "scaled_dot_product_attention" if wrong.kernel == "sdpa" else "naive_attention"
        if wrong.kernel == "causal_naive":
            kernel += "(causal=True)"
        Got(lab.step, _(TIMED_CALL).format(kernel=kernel, n=wrong.n), None).fail(
            _("the reference's output (within {atol} + {rtol} of its size)").format(
                atol=f"{verified.ATOL:g}", rtol=f"{verified.RTOL:g}"
            ),
            (
                _("output of another shape")
                if wrong.worst < 0
                else _("values off by up to {worst}").format(worst=f"{wrong.worst:.3g}")
            )
            + _(explain.WRONG_RESULT),
        )


def _in_harness_window(lab: Lab, what: str, value: float, window: tuple[float, float] | None, story: str) -> None:
    if window is None:
        return
    low, high = window
    expect_that(
        _measured(lab, what),
        low <= value <= high,
        _("a value from {low} to {high}").format(low=f"{low:g}", high=f"{high:g}"),
        f"{value:.3g}{_(story)}",
    )


@pytest.mark.points(1)
def test_grader_attention_slopes(lab: Lab, measured: verified.Measurement) -> None:
    """Timed by the grader on its own device, your naive head scales as n^2, causal or not, and is slower than SDPA"""
    kernels = measured.kernels
    if isinstance(kernels, verified.Broken):
        _broken(lab, kernels, _(MEASURED_BY_GRADER).format(what="naive_attention"))
    windows = _harness_windows(lab, measured)
    where = f"n = {kernels.ns[0]}..{kernels.ns[-1]}"
    for kernel, window, low, high in (
        ("naive", windows.naive_slope, explain.NAIVE_LOW, explain.NAIVE_HIGH),
        ("causal_naive", windows.causal_slope, explain.CAUSAL_OFF, explain.CAUSAL_OFF),
    ):
        value = kernels.slope(kernel)
        story = low if window is not None and value < window[0] else high
        _in_harness_window(
            lab, _(OVER).format(what=_("the {name} slope").format(name=kernel), where=where), value, window, story
        )
    largest = kernels.ns[-1]
    ratio = kernels.at("naive", largest) / kernels.at("sdpa", largest)
    at_least(_measured(lab, f"naive/SDPA, n = {largest}"), ratio, windows.naive_over_sdpa_min, explain.RATIO_LOW)


@pytest.mark.points(1)
def test_grader_decoding(lab: Lab, measured: verified.Measurement) -> None:
    """Timed by the grader on its own device, a token's latency grows with the prefix without the cache and stays
    flat with it"""
    decode = measured.decode
    if isinstance(decode, verified.Broken):
        _broken(lab, decode, _(MEASURED_BY_GRADER).format(what="toy_gpt"))
    windows = _harness_windows(lab, measured)
    where = _("prefixes of {tokens} tokens").format(tokens=", ".join(map(str, decode.positions)))
    without, cached = decode.slope_without, decode.slope_with
    speedup_at = _("the speed-up at token {token}").format(token=decode.positions[-1])
    _decoding_checks(
        lab, _measured, windows, _in_harness_window, where, (without, cached, decode.speedup_last), speedup_at
    )


def _finding_text(finding: verified.Finding) -> str:
    """What the timer gave, for the message of ``finding``."""
    reference = finding.reference
    if finding.kind == "not_numbers":
        return _("something else")
    if finding.kind == "not_running":
        return _("{seconds} s of CPU for work the grader measured at {grader} s a call").format(
            seconds=f"{finding.got:.3g}", grader=f"{reference:.3g}"
        )
    if finding.kind == "disagrees":
        return _("{seconds} s, where the grader measured {grader} s").format(
            seconds=f"{finding.got:.3g}", grader=f"{reference:.3g}"
        )
    return _("{ratio} times the time at the smaller n, where the grader measured {grader} times").format(
        ratio=f"{finding.got:.2g}", grader=f"{reference:.2g}"
    )


@pytest.mark.points(2)
def test_timing_functions(lab: Lab, measured: verified.Measurement) -> None:
    """Your time_attention and time_decoding measure: they run the kernel they time, and report times near the
    grader's own measurement of it at sizes the grader chose"""
    timers = measured.timers
    if isinstance(timers, verified.Broken):
        _broken(lab, timers, timers.function)
    for finding in verified.timer_findings(measured):
        timer = timers[finding.timer]
        Got(lab.step, timer.call, timer.value).fail(
            _(explain.NOT_MEASURING[finding.kind]).format(
                factor=f"{verified.AGREE_FACTOR:g}",
                below=f"{verified.AGREE_BELOW:g}",
                share=f"{verified.RUN_FRACTION:.0%}",
            ),
            _finding_text(finding),
        )
