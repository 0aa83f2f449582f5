"""Attacks on the evidence a verdict rests on (issue 30), graded through the real commands: every one fails.

The hand-ins are tests/attacks/evidence.py's, one per class: swapped probes, a student's code agreeing with
itself, a fake decoder, a made-up kernel name, and the timing reward hacks the public kernel-speed leaderboards
reported (cached, lazy, stale or half-precision outputs, patched clocks, searched frames, a kernel that behaves
only when measured, work carried between calls or moved to a thread, a report bent at one size), plus forged
replies. A class of them with an honest classmate is graded by ``attnlab grade-batch -j 2`` in a fresh process;
some are graded again by ``attnlab grade``, the Gradescope runner and the nbgrader grade cells' request. Each
attack must fail the checks it targets, the honest classmate must score full, and no row may say the grader
failed.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.judge.timing import verified
from autograder.sandbox.client import Sandbox
from tests import kit
from tests.attacks import evidence

GRADERS = kit.ROOT / "autograder" / "grading" / "graders" / tasks.LAB


def _checks(student: dict) -> dict[tuple[str, str], dict]:
    """Every check of a student's ``grade-batch`` record, by (step, check name)."""
    return {(c["step"], c["name"]): c for s in student["report"]["report"]["steps"] for c in s["checks"]}


def test_every_target_is_a_real_check() -> None:
    for name, targets in evidence.MUST_FAIL.items():
        assert name in evidence.HAND_INS
        for step, check in targets:
            text = (GRADERS / f"test_{step}.py").read_text(encoding="utf-8")
            assert check in evidence.check_names(text) or step == "predictions", (name, step, check)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict], dict[str, dict], str]:
    """The class graded by ``attnlab grade-batch -j 2`` in a fresh process: (CSV rows, records, its output)."""
    place = tmp_path_factory.mktemp("evidence")
    root = place / "submitted"
    evidence.build(root)
    shutil.copytree(kit.SOLUTIONS, root / "honest", ignore=shutil.ignore_patterns("__pycache__"))
    out = place / "graded"
    command = [sys.executable, "-m", "autograder", "grade-batch", str(root), "--csv", str(out / "grades.csv"),
               "--out", str(out), "-j", "2", "--no-progress", "--deadline", "600",
               *[a for step in evidence.STEPS for a in ("--step", step)]]  # fmt: skip
    env = {**os.environ, "ATTNLAB_SECRET": "evidence", "ATTNLAB_KIT": str(kit.ROOT)}
    done = subprocess.run(command, cwd=place, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    records = {name: json.loads((out / "students" / f"{name}.json").read_text(encoding="utf-8")) for name in rows}
    return rows, records, done.stdout + done.stderr


def test_the_honest_classmate_scores_full(graded: tuple[dict, dict, str]) -> None:
    rows, records, _output = graded
    assert rows["honest"]["status"] == "graded"
    failed = [(key, c["message"]) for key, c in _checks(records["honest"]).items() if not c["passed"]]
    assert not failed, failed


@pytest.mark.parametrize("name", sorted(evidence.MUST_FAIL))
def test_the_attack_fails_what_it_targets(graded: tuple[dict, dict, str], name: str) -> None:
    rows, records, _output = graded
    assert rows[name]["status"] == "graded", rows[name]
    checks = _checks(records[name])
    for target in evidence.MUST_FAIL[name]:
        step, check = target
        found = [c for key, c in checks.items() if key[0] == step and key[1].startswith(check)]
        assert found, (name, target, sorted(checks))
        assert not any(c["passed"] for c in found), [(c["name"], c["message"]) for c in found]
    internal = [c["message"] for c in checks.values() if c.get("internal_error")]
    assert not internal, internal  # an attack costs checks, never the grader


def test_no_attack_earns_more_than_the_honest_classmate_on_a_step(graded: tuple[dict, dict, str]) -> None:
    rows, _records, _output = graded
    for name in evidence.HAND_INS:
        for step in evidence.STEPS:
            assert float(rows[name][step]) <= float(rows["honest"][step]), (name, step, rows[name][step])


def test_forged_replies_cost_the_check_with_the_grader_s_sentence(graded: tuple[dict, dict, str]) -> None:
    _rows, records, _output = graded
    appends = [c for key, c in _checks(records["forged_replies"]).items() if key == ("kv_cache", "test_appends")]
    assert appends and "cannot read" in appends[0]["message"], appends


def test_the_grader_s_clock_sees_work_moved_to_a_thread(tmp_path: Path) -> None:
    """``offloaded`` does its kernel's work in another thread: right results, and the grader's clock (the keeper's
    count of every thread of the child) still sees the work, so its measured time is not below the reference's."""
    folders = {name: evidence.HAND_INS[name](tmp_path, name) for name in ("offloaded",)}
    folders["reference"] = kit.SOLUTIONS

    def naive_at_1024(folder: Path) -> float:
        with Sandbox(folder, torch=True) as sandbox:
            measured = verified.measure(sandbox, np.random.default_rng(0), "cpu", None)
        assert isinstance(measured.kernels, verified.Kernels) and not measured.kernels.wrong
        return measured.kernels.at("naive", 1024)

    times = {name: min(naive_at_1024(folder) for _ in range(2)) for name, folder in folders.items()}
    assert times["offloaded"] >= 0.5 * times["reference"], times


@pytest.mark.parametrize("name", ["probe_swap", "fake_decoder", "kernel_name"])
def test_attnlab_grade_fails_them_too(name: str, tmp_path: Path) -> None:
    folder = evidence.HAND_INS[name](tmp_path, name)
    steps = sorted({step for step, _check in evidence.MUST_FAIL[name]})
    out = tmp_path / "results.json"
    command = [sys.executable, "-m", "autograder", "grade", str(folder), "--json", str(out)]
    done = subprocess.run(
        [*command, *[a for step in steps for a in ("--step", step)]],
        cwd=tmp_path,
        env={**os.environ, "ATTNLAB_KIT": str(kit.ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tests = json.loads(out.read_text(encoding="utf-8"))["tests"]
    for step, check in evidence.MUST_FAIL[name]:
        title = tasks.step(step).title
        targeted = [t for t in tests if t["name"].startswith(title) and t.get("status") == "failed"]
        assert targeted, (name, step, check, [t["name"] for t in tests])


GPU_ATTACKS = ("memoise", "lazy", "clocks", "detects_measured", "half_precision", "stale_buffer", "fake_decoder")


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _cuda(), reason="no CUDA device here: the GPU path of these attacks runs on a GPU machine")
@pytest.mark.parametrize("name", GPU_ATTACKS)
def test_the_timing_attacks_fail_on_the_gpu_too(name: str, tmp_path: Path) -> None:
    """With a CUDA report (the reference's, from an H200) the grader times the kernels on the GPU itself: every
    timing attack fails there as on a CPU."""
    folder = evidence.HAND_INS[name](tmp_path, name)
    shutil.rmtree(folder / "reports", ignore_errors=True)
    (folder / "reports").mkdir()
    shutil.copy(kit.ROOT / "tests" / "data" / "timing_cuda" / "run1.json", folder / "reports" / "timing.json")
    result = kit.grade(folder, steps=("timing",)).step("timing")
    failed = {check.name for check in result.failed}
    targets = {check for step, check in evidence.MUST_FAIL[name] if step == "timing"}
    assert targets <= failed, (name, sorted(failed), [c.message for c in result.failed])
    assert not any(check.internal_error for check in result.checks)
