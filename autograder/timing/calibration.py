"""What the kit measures on each device class, and where a correct implementation lands.

A *device class* is ``"cpu"`` or ``"cuda"``. The CPU numbers were measured on
the kit's 2-core machine (torch 2.13 CPU, float32, d = 64, one thread); see the
design notes "Timing tasks: what a CPU shows". The CUDA windows are not known
yet: no GPU run has calibrated them, so a CUDA report is graded on consistency
and trends only (see :data:`CUDA_WINDOWS`).
"""

from __future__ import annotations

from dataclasses import dataclass

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
# A GPU at d = 64 is launch-bound far past n = 4096: its sweep must reach larger n before the n^2 term shows.
# TODO(gpu-calibration): the fit range is a guess until real GPU runs (bench/gpu_timing.sh) calibrate it.
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
# TODO(gpu-calibration): no CUDA machine was available when these checks were written. Until windows
# are calibrated from real runs (bench/gpu_timing.sh prints a report to calibrate from), a CUDA report
# is graded on consistency and trends only: times that grow with n, naive slower than SDPA at the
# largest n, identical tokens with and without the cache. Fill these in from at least three runs.
CUDA_WINDOWS = Windows(
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
WINDOWS = {"cpu": CPU_WINDOWS, "cuda": CUDA_WINDOWS}

SLOPE_TOLERANCE = 0.02  # a reported slope must equal the least-squares fit of the reported times this closely
GPU_NOT_CALIBRATED = N_(
    "GPU windows are not calibrated yet, so this CUDA report is graded on consistency and trends only "
    "(a GPU at d = 64 is launch-bound: its times hardly grow until n is large, so its slopes stay low)"
)


def device_class(device: str) -> str:
    """``"cpu"``, ``"cuda"`` (for ``cuda`` or ``cuda:1``), or the device string itself (a report may not hold one)."""
    return "cuda" if device == "cuda" or device.startswith("cuda:") else device


def windows_for(device: str) -> Windows:
    """The windows of ``device``'s class; a class nobody calibrated is graded like an uncalibrated GPU."""
    return WINDOWS.get(device_class(device), CUDA_WINDOWS)


def sweep_for(device: str, quick: bool = False) -> Sweep:
    """The sweep ``attnlab timing`` runs on ``device`` (``quick``: the reduced one, same fit range)."""
    return SWEEPS[("cuda" if device_class(device) == "cuda" else "cpu", quick)]


@dataclass(frozen=True)
class HarnessWindows:
    """Where the grader's own measurement (:mod:`autograder.timing.verified`) of a correct submission lands on a
    CPU: slopes of the fastest of 3 calls at n = 512, 1024, 2048 and of one token at prefixes 32..256."""

    naive_slope: Range
    causal_slope: Range
    naive_over_sdpa_min: float  # at n = 2048
    no_cache_slope: Range
    cache_slope: Range
    slope_gap_min: float
    speedup_last_min: float  # at a prefix of 256


# Measured on the kit's 2-core machine while it was shared (load 2-3.5): naive 1.6..2.4, causal 1.35..2.6
# (the mask's own n^2 work), naive/SDPA 1.7..6; without the cache 1.0..1.4, with it -0.1..0.1, speed-up 13..16
# at 256 (a whole-lab grade under load 10 once gave a no-cache slope below 0.6). Wide on purpose: a
# correct kernel is what is checked (its results are compared on every call); the
# windows catch a kernel that is not quadratic (one that skips work) or a cache that is not used.
HARNESS_CPU = HarnessWindows(
    naive_slope=(0.9, 3.4),  # a quiet grade of the reference gave 1.15 (n = 256..1024 on the CPU)
    causal_slope=(0.9, 3.6),
    naive_over_sdpa_min=1.1,
    no_cache_slope=(0.3, 2.4),
    cache_slope=(-0.6, 0.6),
    slope_gap_min=0.25,
    speedup_last_min=2.0,
)
