"""The CUDA windows of the timing step are what the committed GPU runs give, and those runs meet them.

The runs (tests/data/timing_cuda: three ``attnlab timing --device cuda`` reports of the reference and three
measurements of the grader's own timing of its kernels, on an NVIDIA H200) were made with
``bench/gpu_session.sh``; ``bench/gpu_windows.py`` turned them into ``autograder/data/cuda_calibration.json``. CI has
no GPU: the grader's GPU path is checked here on its arithmetic (the CUDA clock's bounds), and graded for real only
where a GPU is present (the last test, skipped elsewhere).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.judge.timing import analysis, report, verified
from autograder.judge.timing.calibration import CUDA_CALIBRATION, CUDA_WINDOWS, HARNESS_CUDA, cuda_calibration
from tests import kit

DATA = kit.ROOT / "tests" / "data" / "timing_cuda"
REPORTS = sorted(DATA.glob("run*.json"))
HARNESS = DATA / "harness.json"


def test_the_committed_windows_are_what_the_committed_runs_give(tmp_path: Path) -> None:
    out = tmp_path / CUDA_CALIBRATION
    machine = cuda_calibration()["source"]["machine"]
    command = [sys.executable, "bench/gpu_windows.py", *map(str, REPORTS), "--harness", str(HARNESS)]
    subprocess.run([*command, "--machine", machine, "--out", str(out)], cwd=kit.ROOT, check=True, capture_output=True)
    assert json.loads(out.read_text(encoding="utf-8")) == cuda_calibration()
    assert len(REPORTS) == 3 and CUDA_WINDOWS.calibrated and HARNESS_CUDA is not None


def _inside(value: float, window: tuple[float, float] | None) -> bool:
    return window is None or window[0] <= value <= window[1]


def _at_least(value: float, minimum: float | None) -> bool:
    return minimum is None or value >= minimum


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_every_gpu_run_of_the_reference_meets_the_windows_with_room(path: Path) -> None:
    data = report.read(path)
    assert data.environment.device == "cuda" and "H200" in data.environment.device_name
    series, decoding, windows = data.attention.series, data.decoding, CUDA_WINDOWS
    for name, window in (
        ("naive", windows.naive_slope),
        ("sdpa", windows.sdpa_slope),
        ("causal_naive", windows.causal_slope),
    ):
        slope = series[name].slope
        assert window[0] + 0.2 <= slope <= window[1] - 0.2, (name, slope, window)  # at least 0.2 inside the window
    assert _inside(decoding.without_cache.slope, windows.no_cache_slope)
    assert _inside(decoding.with_cache.slope, windows.cache_slope)
    assert _at_least(float(analysis.naive_over_sdpa(data.attention)[-1]), windows.naive_over_sdpa_min)
    assert _at_least(decoding.speedup_last, windows.speedup_last_min)
    assert _at_least(decoding.speedup_total, windows.speedup_total_min)


def test_what_a_gpu_does_not_separate_is_not_checked() -> None:
    """On the H200 the toy decoder is launch-bound: 512 tokens decode as fast without the cache as with it (speed-up
    0.5 to 0.9), so no speed-up is asked of a GPU report; the naive head is only 1.3x slower than SDPA at n = 16384
    (both do the same n^2 d work there), so no ratio either."""
    runs = cuda_calibration()["figures"]["reports"]
    assert max(run["speedup_total"] for run in runs) < 1.2 and CUDA_WINDOWS.speedup_total_min is None
    assert max(run["naive_over_sdpa"] for run in runs) < 1.5 and CUDA_WINDOWS.naive_over_sdpa_min is None


def test_every_harness_run_meets_the_harness_windows() -> None:
    for run in json.loads(HARNESS.read_text(encoding="utf-8")):
        kernels, decode = run["kernels"], run["decode"]
        assert run["device"] == "cuda" and not kernels["wrong"] and not decode["wrong"] and decode["against_reference"]
        assert _inside(kernels["naive_slope"], HARNESS_CUDA.naive_slope)
        assert _inside(kernels["causal_slope"], HARNESS_CUDA.causal_slope)
        assert _inside(decode["no_cache_slope"], HARNESS_CUDA.no_cache_slope)
        assert _inside(decode["cache_slope"], HARNESS_CUDA.cache_slope)
        assert not run["findings"], run["findings"]  # the reference's timers measure on the GPU too


TRIP = verified.Spent(wall=0.2e-3, cpu=0.1e-3)
BASELINE = verified.Spent(wall=1.0e-3, cpu=0.5e-3, slowest=1.4e-3)  # the request without the kernel, 5 times


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        (3.0e-3, 3.0e-3),  # CUDA events that agree with the grader's clock count as they are
        (None, 3.2e-3),  # none: the wall time less the baseline's
        (0.1e-3, 1.4e-3),  # a claim far below what the grader's clock saw: at least half of it
        (9.0e-3, 4.0e-3),  # above the whole request less an empty one: capped
        (float("nan"), 3.2e-3),
    ],
)
def test_a_gpu_call_is_clocked_between_the_grader_s_own_bounds(events: float | None, expected: float) -> None:
    spent = verified.Spent(wall=4.2e-3, cpu=4.0e-3)
    assert verified.seconds_of(spent, TRIP, events, "cuda", BASELINE) == pytest.approx(expected)


def test_work_between_requests_is_charged_to_the_next_call() -> None:
    spent = verified.Spent(wall=4.2e-3, cpu=4.0e-3, idle=2.0e-3)
    assert verified.seconds_of(spent, TRIP, 3.0e-3, "cuda", BASELINE) == pytest.approx(5.0e-3)
    assert verified.seconds_of(spent, TRIP, None, "cpu", BASELINE) == pytest.approx(3.5e-3 + 2.0e-3)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _cuda(), reason="no CUDA device here: the GPU grading path runs only on a GPU machine")
def test_a_gpu_report_of_the_reference_is_graded_full_on_a_gpu(tmp_path: Path) -> None:
    """On a GPU machine the grader times the kernels on the GPU itself and grades a CUDA report against the CUDA
    windows: nothing waits for review."""
    folder = tmp_path / "gpu"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    (folder / report.FOLDER).mkdir()
    shutil.copy(REPORTS[0], folder / report.PATH)
    result = kit.grade(folder, steps=("timing",)).step("timing")
    assert result.earned == result.possible and not result.for_review, [c.message for c in result.failed]
    assert np.isfinite(result.earned)
