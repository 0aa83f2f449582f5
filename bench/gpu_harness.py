"""The grader's own timing of a submission's kernels on one device, several times: the figures its windows come from.

    python bench/gpu_harness.py [FOLDER] [--device cuda] [--runs 3] [--json OUT.json]

Runs :func:`autograder.judge.timing.verified.measure` (the measurement the timing step's grader makes: every kernel call
timed from outside the sandbox child, every result compared with the reference) on FOLDER (default: the reference
solution) ``--runs`` times, each in a fresh sandbox, and prints per run the slopes, the naive/SDPA ratio at the
largest size, the decoding slopes and speed-up, and the student timers' findings: the numbers
``HARNESS_CUDA`` / ``HARNESS_CPU`` in ``autograder/judge/timing/calibration.py`` are chosen from. Not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.base import tasks  # noqa: E402
from autograder.base.reference import Reference  # noqa: E402
from autograder.judge.oracle import InProcessOracle  # noqa: E402
from autograder.judge.timing import verified  # noqa: E402
from autograder.judge.timing.calibration import harness_for  # noqa: E402
from autograder.sandbox.client import Limits, Sandbox  # noqa: E402


def summary(measurement: verified.Measurement) -> dict:
    """The figures of one measurement the windows are about (plus its raw seconds)."""
    found: dict = {"device": measurement.device}
    kernels, decode = measurement.kernels, measurement.decode
    if isinstance(kernels, verified.Kernels):
        largest = kernels.ns[-1]
        found["kernels"] = {
            "ns": list(kernels.ns),
            "seconds": {k: list(v) for k, v in kernels.seconds.items()},
            "naive_slope": kernels.slope("naive"),
            "causal_slope": kernels.slope("causal_naive"),
            "sdpa_slope": kernels.slope("sdpa"),
            "naive_over_sdpa": kernels.at("naive", largest) / kernels.at("sdpa", largest),
            "wrong": [w.__dict__ for w in kernels.wrong],
        }
    else:
        found["kernels"] = repr(kernels)
    if isinstance(decode, verified.Decode):
        found["decode"] = {
            "positions": list(decode.positions),
            "without_cache": list(decode.without_cache),
            "with_cache": list(decode.with_cache),
            "no_cache_slope": decode.slope_without,
            "cache_slope": decode.slope_with,
            "speedup_last": decode.speedup_last,
            "against_reference": decode.against_reference,
            "wrong": [w.__dict__ for w in decode.wrong],
        }
    else:
        found["decode"] = repr(decode)
    if isinstance(measurement.timers, dict):
        found["timers"] = {
            key: {
                "value": timer.value if not isinstance(timer.value, list) else float(np.median(timer.value)),
                "cpu": timer.cpu,
                "wall": timer.wall,
                "per_call": timer.per_call,
            }
            for key, timer in measurement.timers.items()
        }
    found["findings"] = [f.__dict__ for f in verified.timer_findings(measurement)]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "solutions" / "lab07_attention"))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    folder = Path(args.folder).resolve()
    solutions = ROOT / "solutions" / "lab07_attention"
    reference = InProcessOracle(Reference(solutions, tasks.modules_present(solutions)))

    def logits(weights: dict, tokens: list[int]) -> np.ndarray:
        return np.asarray(reference.probe("oracle_gpt_logits", weights, tokens), dtype=float)

    limits = verified.gpu_limits(Limits()) if args.device != "cpu" else Limits()
    runs = []
    for run in range(args.runs):
        started = time.perf_counter()
        with Sandbox(folder, limits, torch=True) as sandbox:
            measured = verified.measure(sandbox, np.random.default_rng(run), args.device, logits)
        figures = summary(measured) | {"seconds": time.perf_counter() - started}
        runs.append(figures)
        print(json.dumps(figures, indent=None, default=str))
    print(f"windows now: {harness_for(args.device).windows}")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
