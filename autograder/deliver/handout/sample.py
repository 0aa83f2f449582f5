"""Record the sample timings the handout's log-log figure shows (run once, by hand; the result is committed).

Measurements change from run to run, so the figure never measures: it plots
``handouts/data/timing_sample.json``, which this module writes with the
reference's own ``time_attention`` and ``time_decoding`` (CPU, one thread).
Run ``python -m autograder.deliver.handout --sample-timing`` on a quiet machine.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from pathlib import Path

from autograder.base.kit import Kit
from autograder.deliver.handout.figures import TIMING_SAMPLE, reference

SIZES = (128, 256, 512, 1024, 2048, 4096)
REPEATS = 7
RUNS = 3  # the whole measurement is repeated; each number is the fastest of the runs (the least disturbed)
FIT_FROM = 512
DECODE_TOKENS = 512


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _round(seconds: float) -> float:
    return float(f"{seconds:.4g}")


def measure(kit: Kit, device: str = "cpu") -> Path:
    """Time the reference on ``device`` and write the sample file; its path."""
    import torch

    ref = reference(kit)

    def fastest(measure_once: Callable[[], list[float]]) -> list[float]:
        return [_round(min(values)) for values in zip(*(measure_once() for _ in range(RUNS)))]

    def sweep(kind: str) -> list[float]:
        return [ref.timing.time_attention(n, 64, device, REPEATS, kind=kind) for n in SIZES]

    seconds = {kind: fastest(lambda: sweep(kind)) for kind in ("naive", "sdpa")}  # noqa: B023 (called at once)
    sample = {
        "machine": f"{_cpu_name() if device == 'cpu' else torch.cuda.get_device_name()}, one thread, torch "
        f"{torch.__version__.split('+')[0]}, fastest of {RUNS} runs",
        "attention": {"n": list(SIZES), "d": 64, "fit_from": FIT_FROM, "seconds": seconds},
        "decoding": {
            "with_cache": fastest(lambda: ref.timing.time_decoding(DECODE_TOKENS, 64, True, device)),
            "without_cache": fastest(lambda: ref.timing.time_decoding(DECODE_TOKENS, 64, False, device)),
        },
    }
    path = kit.data / TIMING_SAMPLE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sample, indent=1) + "\n", encoding="utf-8")
    return path
