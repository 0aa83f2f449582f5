"""A burst of load cannot cost an honest decoder its point: the grader measures decoding again before a slope
outside its window counts, as it does for the kernels, and keeps each prefix's fastest token.

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
