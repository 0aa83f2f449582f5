"""The timing step: the reference's own report grades full, stubs score 0, made-up reports lose points.

One quick sweep of the reference runs per session (``attnlab timing --quick``,
the same fit ranges and windows as the full sweep). Timing on a shared machine
is noisy, so no test here asserts a wall time: they compare reports with what
the graders recompute from them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autograder import cli
from autograder.base import tasks
from autograder.grading.model import GradeReport
from autograder.judge.timing import explain, report, runner
from autograder.judge.timing.calibration import GPU_NOT_CALIBRATED
from tests import kit
from tests.kit import Variant

STEP = "timing"
TITLE = tasks.step(STEP).title
LOGS = "np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(seconds, dtype=float))"

VARIANTS = (
    Variant(
        "loglog_axes_swapped",
        STEP,
        "timing",
        "np.polyfit(log_n, log_t, 1)",
        "np.polyfit(log_t, log_n, 1)",
        "loglog_axes_swapped",
    ),
    Variant(
        "loglog_endpoints_only",
        STEP,
        "timing",
        "slope, _ = np.polyfit(log_n, log_t, 1)",
        "slope = (log_t[-1] - log_t[0]) / (log_n[-1] - log_n[0])",
        "loglog_endpoints_only",
    ),
    Variant(
        "loglog_not_logarithmic",
        STEP,
        "timing",
        LOGS,
        "np.asarray(ns, dtype=float), np.asarray(seconds, dtype=float)",
        "loglog_not_logarithmic",
    ),
    Variant(
        "loglog_mixed_bases",
        STEP,
        "timing",
        LOGS,
        "np.log(np.asarray(ns, dtype=float)), np.log10(np.asarray(seconds, dtype=float))",
        "loglog_mixed_bases",
    ),
)
CACHE_UNUSED = Variant(
    "cache_unused",
    STEP,
    "timing",
    "            if use_cache:\n",
    "            if False:  # the cache is never used\n",
    "cache_unused",
)


def measure_into(folder: Path) -> Path:
    """``attnlab timing FOLDER --quick --device cpu`` (in this process); the folder."""
    shutil.rmtree(folder / report.FOLDER, ignore_errors=True)
    assert cli.main(["timing", str(folder), "--quick", "--device", "cpu", "--no-progress"]) == 0
    return folder


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the reference with a report of its own, made now by the quick sweep."""
    folder = tmp_path_factory.mktemp("timing") / "reference"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", report.FOLDER))
    return measure_into(folder)


def grade(folder: Path) -> Any:
    return kit.grade(folder, steps=(STEP,)).step(STEP)


def failed_names(result: Any) -> set[str]:
    return {c.name for c in result.failed}


def test_quick_sweep_of_the_reference_grades_full(measured: Path) -> None:
    for name in [report.FILE, *report.PLOTS.values()]:
        assert (measured / report.FOLDER / name).stat().st_size > 1000, name
    result = grade(measured)
    assert result.earned == result.possible == tasks.step(STEP).points, [c.message for c in result.failed]
    assert not result.failed, [c.message for c in result.failed]  # the 0-point review check passes too


def test_committed_reference_report_grades_full(reference_report: GradeReport) -> None:
    """`attnlab grade solutions/lab07_attention` reads the committed report (data measured on the kit's machine)."""
    result = reference_report.step(STEP)
    assert result.earned == result.possible == tasks.step(STEP).points, [c.message for c in result.failed]
    assert not result.failed, [c.message for c in result.failed]


REPORT_CHECKS = {
    "test_report_schema",
    "test_report_consistency",
    "test_attention_slopes",
    "test_causal_and_naive_over_sdpa",
    "test_memory",
    "test_decoding_tokens",
    "test_decoding_latency",
    "test_review",
}
DEVICE_CHECKS = set(tasks.REVIEW_CHECKS["timing"])  # nbgrader scores them in their own review cell


def test_stubs_score_zero_and_are_told_the_command(stubs_report: GradeReport) -> None:
    result = stubs_report.step(STEP)
    assert result.earned == 0 and len(result.failed) == len(result.checks)
    for check in result.checks:
        assert check.message.startswith(TITLE + ":"), check.message
        assert not check.internal_error, check.message
        if check.name in REPORT_CHECKS:
            assert "attnlab timing" in check.message and explain.NO_REPORT in check.message, check.message
        else:  # the grader's own measurement of the kernels and timers: the functions still to write
            assert check.call_failure is not None and check.call_failure.not_implemented, check.message


def test_timing_command_on_the_stubs_writes_no_report(tmp_path: Path) -> None:
    folder = tmp_path / "stubs"
    shutil.copytree(kit.STUBS, folder)
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "timing", str(folder), "--quick", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=kit.ROOT,
    )
    assert done.returncode == 1 and "NotImplementedError" in done.stderr and "no report written" in done.stderr
    assert not (folder / report.PATH).exists()
    assert (
        subprocess.run(
            [sys.executable, "-m", "autograder", "timing", str(tmp_path / "nowhere")],
            capture_output=True,
            timeout=60,
            cwd=kit.ROOT,
        ).returncode
        == 2
    )


def _scale_times(data: dict, factor: float) -> None:
    for series in data["attention"]["series"].values():
        series["seconds"] = [[t * factor for t in row] for row in series["seconds"]]
        for key in ("median", "min", "max"):
            series[key] = [t * factor for t in series[key]]
    for run in ("without_cache", "with_cache"):
        data["decoding"][run]["seconds"] = [t * factor for t in data["decoding"][run]["seconds"]]


def _ideal_numbers(data: dict) -> None:
    """What a report copied from the textbook looks like: t = c n^2 exactly, identical repeats, no wobble."""
    ns = data["attention"]["ns"]
    for series in data["attention"]["series"].values():
        ideal = [1e-9 * n * n for n in ns]
        series.update(
            seconds=[[t] * len(row) for t, row in zip(ideal, series["seconds"])],
            median=ideal,
            min=ideal,
            max=ideal,
            slope=2.0,
        )


def _shift_slope(data: dict) -> None:
    data["attention"]["series"]["naive"]["slope"] += 0.3


def _change_a_token(data: dict) -> None:
    tokens = data["decoding"]["with_cache"]["tokens"]
    tokens[99] = (tokens[99] + 1) % 256


def _nan(data: dict) -> None:
    data["attention"]["series"]["naive"]["median"][0] = float("nan")


FABRICATED: dict[str, tuple[Callable[[dict], None], set[str]]] = {
    # name: (edit of the measured report, checks that must fail)
    "slope_disagrees_with_times": (_shift_slope, {"test_report_consistency"}),
    "ideal_numbers": (_ideal_numbers, {"test_causal_and_naive_over_sdpa", "test_review"}),
    "tokens_mismatch": (_change_a_token, {"test_decoding_tokens"}),
    "times_10x": (lambda data: _scale_times(data, 10.0), DEVICE_CHECKS),
}


@pytest.mark.parametrize("name", list(FABRICATED))
def test_fabricated_report_loses_points(name: str, measured: Path, tmp_path: Path) -> None:
    edit, must_fail = FABRICATED[name]
    folder = tmp_path / name
    shutil.copytree(measured, folder)
    data = json.loads((folder / report.PATH).read_text(encoding="utf-8"))
    edit(data)
    (folder / report.PATH).write_text(json.dumps(data), encoding="utf-8")
    result = grade(folder)
    assert result.earned < result.possible
    assert must_fail <= failed_names(result), [c.message for c in result.failed]
    if name == "times_10x":  # only the grader's own measurement can tell
        assert failed_names(result) == must_fail, [c.message for c in result.failed]
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks if c.internal_error]


def test_hostile_report_scores_zero_without_breaking_the_grader(measured: Path, tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    shutil.copytree(measured, folder)
    data = json.loads((folder / report.PATH).read_text(encoding="utf-8"))
    _nan(data)
    (folder / report.PATH).write_text(json.dumps(data), encoding="utf-8")  # json.dumps writes NaN
    result = grade(folder)
    reading = [c for c in result.checks if c.name in REPORT_CHECKS]  # the grader's own measurement still counts
    assert sum(c.earned for c in reading) == 0 and not any(c.internal_error for c in result.checks)
    assert all("cannot be graded" in c.message and "attnlab timing" in c.message for c in reading), [
        c.message for c in reading
    ]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    """loglog_slope is checked directly; the report these variants carry is the reference's."""
    kit.assert_diagnosed(kit.grade(variant.build(tmp_path), steps=(STEP,)), variant)


@pytest.mark.slow
def test_unused_cache_is_diagnosed_from_its_own_report(tmp_path: Path) -> None:
    folder = measure_into(CACHE_UNUSED.build(tmp_path))
    kit.assert_diagnosed(kit.grade(folder, steps=(STEP,)), CACHE_UNUSED)


def test_runner_limits_lift_the_address_space_limit_for_a_gpu_only() -> None:
    import resource

    assert runner.limits_for("cuda").memory_bytes == resource.RLIM_INFINITY
    assert runner.limits_for("cpu").memory_bytes > 4 << 30 and runner.limits_for("cpu").call_timeout_s >= 60


CUDA_REPORTS = sorted((kit.ROOT / "tests" / "data" / "timing_cuda").glob("run*.json"))  # the reference on an H200


def cuda_report(data: dict) -> None:
    """Replace ``data`` with a real GPU report of the reference: ``attnlab timing --device cuda`` on an NVIDIA H200
    (tests/data/timing_cuda/run1.json, one of the three runs the CUDA windows were calibrated from)."""
    data.clear()
    data.update(json.loads(CUDA_REPORTS[0].read_text(encoding="utf-8")))


def test_cuda_report_on_a_cpu_grader_leaves_its_device_points_for_review(measured: Path, tmp_path: Path) -> None:
    """A CUDA report on a grader without CUDA: the points the CPU can verify count (kernels, analysis, the report's
    consistency), the device-specific ones are *for review* (0 until confirmed), and the review note says why."""
    folder = tmp_path / "gpu"
    shutil.copytree(measured, folder)
    data = json.loads((folder / report.PATH).read_text(encoding="utf-8"))
    cuda_report(data)
    (folder / report.PATH).write_text(json.dumps(data), encoding="utf-8")
    result = grade(folder)
    review = {c.name for c in result.for_review}
    assert review == DEVICE_CHECKS, [c.message for c in result.failed]
    assert {c.name: c.points for c in result.for_review} == tasks.REVIEW_CHECKS["timing"]  # the graders' marks
    assert all(c.status == "review" and c.earned == 0 for c in result.for_review)
    assert "cuda" in result.for_review[0].message and "0 until then" in result.for_review[0].message
    device_points = sum(c.points for c in result.for_review)
    assert result.earned == result.possible - device_points, [c.message for c in result.failed]
    assert failed_names(result) - review == {"test_review"}
    message = next(c.message for c in result.failed if c.name == "test_review")
    assert GPU_NOT_CALIBRATED not in message and "could not be re-measured" in message  # its windows are calibrated


MEDIAN_RETURN = "return seconds if return_times else statistics.median(seconds)"


BAD_RETURNS = {"nan": "float('nan')", "huge_integer": "10**400", "string": "'fast'"}


@pytest.mark.parametrize("name", list(BAD_RETURNS))
def test_bad_remeasured_values_fail_the_check_cleanly(name: str, tmp_path: Path) -> None:
    variant = Variant(
        f"returns_{name}", STEP, "timing", MEDIAN_RETURN, f"return seconds if return_times else {BAD_RETURNS[name]}", ""
    )
    result = grade(variant.build(tmp_path))
    failed = failed_names(result)  # the timers do not measure, so the report's numbers count for nothing either
    assert "test_timing_functions" in failed and failed <= REPORT_CHECKS | {"test_timing_functions"}, failed
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks]


@pytest.mark.slow
def test_gpu_check_script_runs_its_cpu_path() -> None:
    """bench/gpu_timing.sh is the one-command GPU check; its CPU path (the same commands) measures, grades and prints
    both.

    Whether a fresh measurement grades full is test_quick_sweep_of_the_reference_grades_full's job.
    """
    done = subprocess.run(
        ["bash", str(kit.ROOT / "bench" / "gpu_timing.sh"), "cpu", "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=kit.ROOT,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "CUDA available" in done.stdout and "measured in" in done.stdout
    assert re.search(rf"^{TITLE}\s+[\d.]+\s+12\s+\d+/\d+\s*$", done.stdout, re.MULTILINE), done.stdout[-2000:]
