"""The CUDA windows of the timing step, from GPU runs of the reference: every run meets them, with a margin.

    python bench/gpu_windows.py RUN.json [RUN.json ...] --harness HARNESS.json [--machine LOG] [--out FILE]

RUN.json are full ``attnlab timing --device cuda`` reports of the reference (bench/gpu_session.sh makes three);
HARNESS.json is bench/gpu_harness.py's output on the same GPU. Writes the windows, the grader's harness windows and
where they came from into FILE (default: autograder/data/cuda_calibration.json, which
``autograder/judge/timing/calibration.py`` reads). The rule, the same for every quantity:

- a slope's window spans the runs' slopes widened on each side by the larger of :data:`SLOPE_MARGIN` and their
  spread (so a quiet GPU, whose runs agree to 0.01, still gets room for another machine's noise);
- a ratio's minimum (naive/SDPA, speed-ups) is the smallest run's value over :data:`RATIO_MARGIN`; where that is at
  most :data:`SEPARATES` the device does not separate the two, and the window is left null (no check);
- the slope gap's minimum is the smallest gap less the same margin as a slope; at or below 0, null.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.judge.timing import analysis, report  # noqa: E402

SLOPE_MARGIN = 0.25
RATIO_MARGIN = 1.5
SEPARATES = 1.2
OUT = ROOT / "autograder" / "data" / "cuda_calibration.json"


def slope_window(values: list[float]) -> list[float]:
    low, high = min(values), max(values)
    margin = max(SLOPE_MARGIN, high - low)
    return [round(low - margin, 2), round(high + margin, 2)]


def ratio_minimum(values: list[float]) -> float | None:
    minimum = min(values) / RATIO_MARGIN
    return round(minimum, 2) if minimum > SEPARATES else None


def gap_minimum(values: list[float]) -> float | None:
    spread = max(values) - min(values)
    minimum = min(values) - max(SLOPE_MARGIN, spread)
    return round(minimum, 2) if minimum > 0 else None


def report_windows(reports: list[report.TimingReport]) -> dict:
    """The report windows every one of ``reports`` meets."""

    def each(quantity: Callable[[report.TimingReport], float]) -> list[float]:
        return [float(quantity(r)) for r in reports]

    no_cache = each(lambda r: r.decoding.without_cache.slope)
    cache = each(lambda r: r.decoding.with_cache.slope)
    return {
        "naive_slope": slope_window(each(lambda r: r.attention.series["naive"].slope)),
        "sdpa_slope": slope_window(each(lambda r: r.attention.series["sdpa"].slope)),
        "causal_slope": slope_window(each(lambda r: r.attention.series["causal_naive"].slope)),
        "naive_over_sdpa_min": ratio_minimum(each(lambda r: analysis.naive_over_sdpa(r.attention)[-1])),
        "no_cache_slope": slope_window(no_cache),
        "cache_slope": slope_window(cache),
        "slope_gap_min": gap_minimum([a - b for a, b in zip(no_cache, cache)]),
        "speedup_last_min": ratio_minimum(each(lambda r: r.decoding.speedup_last)),
        "speedup_total_min": ratio_minimum(each(lambda r: r.decoding.speedup_total)),
    }


def harness_windows(runs: list[dict]) -> dict:
    """The windows of the grader's own measurement every run of ``runs`` (bench/gpu_harness.py) meets."""
    kernels = [run["kernels"] for run in runs]
    decode = [run["decode"] for run in runs]
    no_cache = [d["no_cache_slope"] for d in decode]
    cache = [d["cache_slope"] for d in decode]
    return {
        "naive_slope": slope_window([k["naive_slope"] for k in kernels]),
        "causal_slope": slope_window([k["causal_slope"] for k in kernels]),
        "naive_over_sdpa_min": ratio_minimum([k["naive_over_sdpa"] for k in kernels]),
        "no_cache_slope": slope_window(no_cache),
        "cache_slope": slope_window(cache),
        "slope_gap_min": gap_minimum([a - b for a, b in zip(no_cache, cache)]),
        "speedup_last_min": ratio_minimum([d["speedup_last"] for d in decode]),
    }


def figures(reports: list[report.TimingReport], runs: list[dict]) -> dict:
    """Each run's figures, as the README records them."""
    return {
        "reports": [
            {
                "naive_slope": r.attention.series["naive"].slope,
                "sdpa_slope": r.attention.series["sdpa"].slope,
                "causal_slope": r.attention.series["causal_naive"].slope,
                "naive_over_sdpa": float(analysis.naive_over_sdpa(r.attention)[-1]),
                "no_cache_slope": r.decoding.without_cache.slope,
                "cache_slope": r.decoding.with_cache.slope,
                "speedup_last": r.decoding.speedup_last,
                "speedup_total": r.decoding.speedup_total,
            }
            for r in reports
        ],
        "harness": [
            {
                "naive_slope": run["kernels"]["naive_slope"],
                "causal_slope": run["kernels"]["causal_slope"],
                "naive_over_sdpa": run["kernels"]["naive_over_sdpa"],
                "no_cache_slope": run["decode"]["no_cache_slope"],
                "cache_slope": run["decode"]["cache_slope"],
                "speedup_last": run["decode"]["speedup_last"],
            }
            for run in runs
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--harness", type=Path, required=True)
    parser.add_argument("--machine", default="", help="the GPU, driver and torch the runs were made with")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    reports = [report.read(path) for path in args.reports]
    devices = {r.environment.device_name for r in reports}
    runs = [run for run in json.loads(args.harness.read_text(encoding="utf-8")) if isinstance(run["kernels"], dict)]
    if not runs or not all(isinstance(run["decode"], dict) for run in runs):
        print("the harness runs hold no complete measurement", file=sys.stderr)
        return 1
    data = {
        "source": {
            "machine": args.machine or ", ".join(sorted(devices)),
            "torch": sorted({r.environment.torch for r in reports}),
            "reports": len(reports),
            "harness_runs": len(runs),
        },
        "windows": report_windows(reports),
        "harness": harness_windows(runs),
        "figures": figures(reports, runs),
    }
    text = json.dumps(data, indent=1, default=lambda value: float(np.asarray(value)))
    args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
