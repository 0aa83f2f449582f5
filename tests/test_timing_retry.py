"""A burst of load cannot cost an honest decoder its point: the grader measures decoding again before a slope
outside its window counts, as it does for the kernels, and keeps each prefix's fastest token. Nor an honest timer
its points: before a timer's finding counts, the grader measures again what it held the timer to (a burst during
its own measurement once made the reference's ``time_attention`` look four times too fast).

The measurements are stand-ins here (``measure_decode`` and the rest replaced), so the retry's rule is tested
without timing anything on this shared machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autograder.judge.timing import verified
from autograder.judge.timing.calibration import HARNESS_CPU

POSITIONS = verified.DECODE_AT


def _decode(without: tuple[float, ...], wrong: tuple[verified.Wrong, ...] = ()) -> verified.Decode:
    return verified.Decode(POSITIONS, without, (1e-3,) * len(POSITIONS), wrong, True)


HONEST = _decode(tuple(1e-3 * p / 32 for p in POSITIONS))  # slope 1 without the cache, flat with it
FLATTENED = _decode((8e-3, 8e-3, 8.2e-3, 8.4e-3))  # the short prefixes slowed by a burst: slope about 0.03
WRONG = _decode(FLATTENED.without_cache, (verified.Wrong("gpt_step", 40, 1.0),))


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``measure`` with its parts replaced; ``decodes`` is the queue of what each decoding measurement gives."""

    class Run:
        def __init__(self) -> None:
            self.decodes: list[verified.Decode] = []
            self.calls = 0

        def measure(self) -> verified.Measurement:
            return verified.measure(None, np.random.default_rng(0))  # type: ignore[arg-type]

    run = Run()

    def measure_decode(*_args: Any) -> verified.Decode:
        run.calls += 1
        return run.decodes.pop(0)

    kernels = verified.Kernels((256, 512, 1024), dict.fromkeys(verified.KERNELS, (1e-3, 4e-3, 1.6e-2)), (), {})
    monkeypatch.setattr(verified, "_round_trip", lambda *_args: verified.Spent(1e-4, 1e-4))
    monkeypatch.setattr(verified, "measure_kernels", lambda *_args: kernels)
    monkeypatch.setattr(verified, "measure_decode", measure_decode)
    monkeypatch.setattr(
        verified, "_with_timers", lambda _clock, device, _sizes, k, d: verified.Measurement(device, k, d, {})
    )
    return run


def test_the_windows_put_the_stand_ins_where_they_belong() -> None:
    assert verified._decode_in_window(HONEST, HARNESS_CPU)
    assert not verified._decode_in_window(FLATTENED, HARNESS_CPU)


def test_a_flattened_decoding_slope_is_measured_again_and_each_prefix_keeps_its_fastest(measured: Any) -> None:
    measured.decodes = [FLATTENED, HONEST]
    decode = measured.measure().decode
    assert measured.calls == 2
    assert decode.without_cache == tuple(map(min, FLATTENED.without_cache, HONEST.without_cache))
    assert verified._decode_in_window(decode, HARNESS_CPU)


def test_a_decoder_outside_its_window_every_time_still_fails_after_the_last_attempt(measured: Any) -> None:
    measured.decodes = [FLATTENED] * verified.KERNEL_ATTEMPTS
    decode = measured.measure().decode
    assert measured.calls == verified.KERNEL_ATTEMPTS
    assert not verified._decode_in_window(decode, HARNESS_CPU)


@pytest.mark.parametrize("first", [HONEST, WRONG], ids=["in-window", "wrong-logits"])
def test_no_second_measurement_when_the_first_settles_it(measured: Any, first: verified.Decode) -> None:
    measured.decodes = [first, HONEST]
    assert measured.measure().decode == first
    assert measured.calls == 1


# -- the student's timers: the grader's own measurement they are held to is measured again before a finding counts
NS = (256, 512, 1024)


def _naive_seconds(n: int, d: int) -> float:
    """The stand-in naive head's true seconds at ``(n, d)``: quadratic in n, linear in d."""
    return 1e-3 * (n / NS[0]) ** 2 * d / verified.D


def _kernels(sizes: dict[str, tuple[int, int]], burst_at: int | None = None) -> verified.Kernels:
    """The grader's measurement of the stand-in kernels; ``burst_at``: the size a burst of load made 5 times slower."""
    seconds = tuple(_naive_seconds(n, verified.D) * (5.0 if n == burst_at else 1.0) for n in NS)
    extra = {("naive", n, d): _naive_seconds(n, d) for n, d in sizes.values() if d != verified.D or n not in NS}
    return verified.Kernels(NS, dict.fromkeys(verified.KERNELS, seconds), (), extra)


@pytest.fixture
def timed(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``measure`` with the student's attention timers as stand-ins (``report(n, d)`` is what each returns, its
    request costing what its calls do); ``kernels`` is the queue of the grader's kernel measurements."""

    class Run:
        def __init__(self) -> None:
            self.kernels: list[Any] = []
            self.calls = 0
            self.report = _naive_seconds

        def measure(self) -> verified.Measurement:
            return verified.measure(None, np.random.default_rng(0))  # type: ignore[arg-type]

    run = Run()

    def measure_kernels(_clock: Any, _rng: Any, _trip: Any, _device: str, sizes: dict) -> verified.Kernels:
        run.calls += 1
        burst_at = run.kernels.pop(0)
        return _kernels(sizes, burst_at)

    def run_timers(_clock: Any, _device: str, sizes: dict, kernels: Any, _decode: Any) -> dict:
        timers = {}
        for key, (n, d) in sizes.items():
            calls, cost = verified.TIMER_REPEATS + 1, _naive_seconds(n, d)
            timers[key] = verified.Timer(
                f"time_attention({n}, {d})", run.report(n, d), calls * cost, calls * cost, calls,
                ("naive", n, d), kernels.at("naive", n, d),
            )  # fmt: skip
        return timers

    monkeypatch.setattr(verified, "_round_trip", lambda *_args: verified.Spent(1e-4, 1e-4))
    monkeypatch.setattr(verified, "measure_kernels", measure_kernels)
    monkeypatch.setattr(verified, "measure_decode", lambda *_args: HONEST)
    monkeypatch.setattr(verified, "run_timers", run_timers)
    return run


def test_an_honest_timer_judged_against_a_burst_in_the_graders_own_measurement_keeps_its_point(timed: Any) -> None:
    timed.kernels = [512, None]  # the grader's first measurement at n = 512 was slowed 5 times; its second not
    measurement = timed.measure()
    assert timed.calls == 2
    assert measurement.timers_ok, verified.timer_findings(measurement)
    assert measurement.kernels.at("naive", 512) == _naive_seconds(512, verified.D)


def test_a_timer_that_reports_too_little_still_fails_after_the_grader_measured_again(timed: Any) -> None:
    timed.kernels = [None] * verified.TIMER_ATTEMPTS
    timed.report = lambda n, d: 1e-6  # a constant, not a measurement
    measurement = timed.measure()
    assert timed.calls == verified.TIMER_ATTEMPTS
    assert {finding.kind for finding in verified.timer_findings(measurement)} == {"disagrees", "ignores_n"}


@pytest.mark.parametrize(
    ("report", "kind"),
    [(lambda n, d: "fast", "not_numbers"), (lambda n, d: 100 * _naive_seconds(n, d), "disagrees")],
    ids=["not-numbers", "too-slow"],
)
def test_findings_a_faster_measurement_cannot_undo_are_no_reason_to_measure_again(
    timed: Any, report: Any, kind: str
) -> None:
    timed.kernels = [None] * verified.TIMER_ATTEMPTS
    timed.report = report
    measurement = timed.measure()
    assert timed.calls == 1
    assert {finding.kind for finding in verified.timer_findings(measurement)} == {kind}
