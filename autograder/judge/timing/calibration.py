"""What the kit measures on each device class, and where a correct implementation lands.

A *device class* is ``"cpu"`` or ``"cuda"``. The CPU numbers were measured on
the kit's 2-core machine (torch 2.13 CPU, float32, d = 64, one thread); see the
design notes "Timing tasks: what a CPU shows". The CUDA windows come from runs on
an NVIDIA H200 (:data:`CUDA_CALIBRATION`, written by ``bench/gpu_windows.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from autograder.i18n import N_

Range = tuple[float, float]


@dataclass(frozen=True)
class Sweep:
    """One run of ``attnlab timing``: what is called, how often, and which sizes the fits use."""

    ns: tuple[int, ...]  # attention sizes, ascending (the order matters: allocator state)
    repeats: int  # timed repeats per time_attention call
    rounds: int  # the whole attention sweep is repeated; a size's times are pooled over rounds
    fit: tuple[int, int]  # attention slopes are fitted over fit[0] <= n <= fit[1]
    memory_ns: tuple[int, ...]
    d: int = 64
    n_tokens: int = 512
    d_model: int = 64
    decode_fit: tuple[int, int] = (33, 512)  # per-token slopes over these token positions (1-based) ...
    block: int = 16  # ... fitted to the medians of 16-token blocks; "speed-up at token 512" compares the last block
    decode_rounds: int = 3  # each decoding run is repeated; a token's latency is its minimum over the rounds


@dataclass(frozen=True)
class Windows:
    """Where a correct implementation's numbers land on one device class; None = not graded."""

    device_class: str
    calibrated: bool
    naive_slope: Range | None
    sdpa_slope: Range | None
    causal_slope: Range | None
    naive_over_sdpa_min: float | None  # at the largest n of the sweep
    no_cache_slope: Range | None
    cache_slope: Range | None
    slope_gap_min: float | None  # no-cache slope minus cache slope
    speedup_last_min: float | None
    speedup_total_min: float | None


SERIES = {"naive": ("naive", False), "sdpa": ("sdpa", False), "causal_naive": ("naive", True)}  # name: (kind, causal)
DEVICE_CLASSES = ("cpu", "cuda")

CPU_SWEEP = Sweep(
    ns=(128, 256, 512, 1024, 2048, 4096), repeats=5, rounds=3, fit=(512, 4096), memory_ns=(256, 1024, 2048, 4096)
)
CPU_QUICK = Sweep(ns=(512, 1024, 2048, 4096), repeats=5, rounds=3, fit=(512, 4096), memory_ns=(1024, 4096))
# A GPU at d = 64 is launch-bound for small n: its sweep reaches larger n before the n^2 term shows. On an NVIDIA H200
# (bench/gpu_session.sh, three runs) the naive head's slope over 4096..16384 is 1.73 to 1.79 and SDPA's 1.17 to 1.18;
# below 4096 both are flat.
CUDA_SWEEP = Sweep(
    ns=(256, 512, 1024, 2048, 4096, 8192, 16384), repeats=10, rounds=3, fit=(4096, 16384), memory_ns=(1024, 4096, 16384)
)
CUDA_QUICK = Sweep(ns=(1024, 2048, 4096, 8192, 16384), repeats=5, rounds=1, fit=(4096, 16384), memory_ns=(1024, 16384))
SWEEPS = {("cpu", False): CPU_SWEEP, ("cpu", True): CPU_QUICK, ("cuda", False): CUDA_SWEEP, ("cuda", True): CUDA_QUICK}

CPU_WINDOWS = Windows(
    device_class="cpu",
    calibrated=True,
    naive_slope=(2.0, 3.3),
    sdpa_slope=(1.7, 2.4),
    causal_slope=(1.9, 3.0),
    naive_over_sdpa_min=2.5,
    no_cache_slope=(0.9, 1.8),
    cache_slope=(
        -0.5,
        0.6,
    ),  # the issue asked -0.2; a correct cached decoder measured -0.27 on an idle CI run (see below)
    slope_gap_min=0.5,
    speedup_last_min=8.0,
    speedup_total_min=5.0,
)
# The cached per-token slope is the least robust number: a cached step takes about 0.5 ms, so a slower
# stretch of the machine early in the run tilts the fit down. Quiet runs give 0.05..0.11 (minimum of 3
# rounds), a doubled load 0.10..0.25, an idle CI run once -0.27. No known mistake makes it negative (an
# unused cache gives about 1.2, the upper bound and the gap catch it), so the lower bound only guards
# against implausible data: -0.5 (latency halving over the run twice over).
UNCALIBRATED_CUDA = Windows(
    device_class="cuda",
    calibrated=False,
    naive_slope=None,
    sdpa_slope=None,
    causal_slope=None,
    naive_over_sdpa_min=None,
    no_cache_slope=None,
    cache_slope=None,
    slope_gap_min=None,
    speedup_last_min=None,
    speedup_total_min=None,
)
# The CUDA windows come from runs on a real GPU, kept as data: ``bench/gpu_session.sh`` measures (three full reports
# of the reference and three of the grader's own timing of its kernels), ``bench/gpu_windows.py`` turns the figures
# into windows every run meets with a margin and writes this file. Without it a CUDA report is graded on
# consistency and trends only, and its device-specific points wait for review. A window left null is a quantity the
# GPU does not separate (a launch-bound GPU decodes 512 tokens about as fast with the cache as without): no check.
CUDA_CALIBRATION = "cuda_calibration.json"


def _range(value: object) -> Range | None:
    return None if value is None else (float(value[0]), float(value[1]))  # type: ignore[index]


def _number(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def cuda_calibration() -> dict:
    """The calibration data of :data:`CUDA_CALIBRATION` (``{}`` where no GPU run has made it)."""
    try:
        return json.loads(resources.files("autograder.data").joinpath(CUDA_CALIBRATION).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _windows(data: dict) -> Windows:
    if not data.get("windows"):
        return UNCALIBRATED_CUDA
    fields = data["windows"]
    return Windows(
        device_class="cuda",
        calibrated=True,
        **{name: _range(fields.get(name)) for name in ("naive_slope", "sdpa_slope", "causal_slope")},
        **{name: _range(fields.get(name)) for name in ("no_cache_slope", "cache_slope")},
        **{
            name: _number(fields.get(name))
            for name in ("naive_over_sdpa_min", "slope_gap_min", "speedup_last_min", "speedup_total_min")
        },
    )


CUDA_WINDOWS = _windows(cuda_calibration())
WINDOWS = {"cpu": CPU_WINDOWS, "cuda": CUDA_WINDOWS}

SLOPE_TOLERANCE = 0.02  # a reported slope must equal the least-squares fit of the reported times this closely
GPU_NOT_CALIBRATED = N_(
    "no windows are calibrated for this device yet, so its report is graded on consistency and trends only "
    "(a GPU at d = 64 is launch-bound: its times hardly grow until n is large, so its slopes stay low)"
)


def device_class(device: str) -> str:
    """``"cpu"``, ``"cuda"`` (for ``cuda`` or ``cuda:1``), or the device string itself (a report may not hold one)."""
    return "cuda" if device == "cuda" or device.startswith("cuda:") else device


def windows_for(device: str) -> Windows:
    """The windows of ``device``'s class; a class nobody calibrated (``mps``, say) is graded on consistency and
    trends only."""
    return WINDOWS.get(device_class(device), UNCALIBRATED_CUDA)


def sweep_for(device: str, quick: bool = False) -> Sweep:
    """The sweep ``attnlab timing`` runs on ``device`` (``quick``: the reduced one, same fit range)."""
    return SWEEPS[("cuda" if device_class(device) == "cuda" else "cpu", quick)]


@dataclass(frozen=True)
class HarnessWindows:
    """Where the grader's own measurement (:mod:`autograder.judge.timing.verified`) of a correct submission lands on one
    device class: slopes of the fastest of 3 calls over the harness's sizes and of one token at prefixes 32..256
    (None: a quantity that device does not separate, not checked)."""

    naive_slope: Range | None
    causal_slope: Range | None
    naive_over_sdpa_min: float | None  # at the harness's largest n
    no_cache_slope: Range | None
    cache_slope: Range | None
    slope_gap_min: float | None
    speedup_last_min: float | None  # at a prefix of 256


@dataclass(frozen=True)
class Harness:
    """The grader's own measurement on one device class: the sizes it times and where a correct submission lands
    (None: not calibrated, so those checks leave the numbers for review)."""

    ns: tuple[int, ...]
    windows: HarnessWindows | None


# Measured on the kit's 2-core machine while it was shared (load 2-3.5): naive 1.6..2.4, causal 1.35..2.6
# (the mask's own n^2 work), naive/SDPA 1.7..6; without the cache 1.0..1.4, with it -0.1..0.1, speed-up 13..16
# at 256 (a whole-lab grade under load 10 once gave a no-cache slope below 0.6). Wide on purpose: a
# correct kernel is what is checked (its results are compared on every call); the
# windows catch a kernel that is not quadratic (one that skips work) or a cache that is not used.
HARNESS_CPU = HarnessWindows(
    naive_slope=(0.9, 3.4),  # a quiet grade of the reference gave 1.15 (n = 256..1024 on the CPU)
    causal_slope=(0.9, 3.6),
    # At n = 1024 a single-threaded CPU's flash kernel is only 1.1 to 2.4 times faster than the naive head when each
    # call is its own request (the naive head's n x n temporaries are page-faulted in again on every call): the
    # check asks only that the naive head is not faster, after up to three measurements.
    naive_over_sdpa_min=1.0,
    no_cache_slope=(0.3, 2.4),
    cache_slope=(-0.6, 0.6),
    slope_gap_min=0.25,
    speedup_last_min=2.0,
)
# A GPU at d = 64 is launch-bound for small n: the harness times it where the n^2 term shows; its windows come from
# the same GPU runs as the CUDA windows (:data:`CUDA_CALIBRATION`).


def _harness(data: dict) -> HarnessWindows | None:
    fields = data.get("harness")
    if not fields:
        return None
    return HarnessWindows(
        naive_slope=_range(fields.get("naive_slope")),
        causal_slope=_range(fields.get("causal_slope")),
        naive_over_sdpa_min=_number(fields.get("naive_over_sdpa_min")),
        no_cache_slope=_range(fields.get("no_cache_slope")),
        cache_slope=_range(fields.get("cache_slope")),
        slope_gap_min=_number(fields.get("slope_gap_min")),
        speedup_last_min=_number(fields.get("speedup_last_min")),
    )


HARNESS_CUDA = _harness(cuda_calibration())
HARNESSES = {"cpu": Harness((256, 512, 1024), HARNESS_CPU), "cuda": Harness((4096, 8192, 16384), HARNESS_CUDA)}


def harness_for(device: str) -> Harness:
    """The grader's measurement on ``device``'s class (a class nobody calibrated is measured at a GPU's sizes, with
    no windows)."""
    return HARNESSES.get(device_class(device), Harness(HARNESSES["cuda"].ns, None))
