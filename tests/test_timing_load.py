"""An honest submission keeps its timing points when the grading machine is busy.

The grader times the kernels by the child's CPU clock (a busy neighbour does not inflate it), holds a student
timer that reads the wall clock to its own measurement scaled by how busy the machine was during that very
request, and measures again before a slope outside its window counts. So the reference's timing step is full
under ``grade-batch -j 2`` while two busy processes per CPU compete for the machine.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.base import tasks
from tests import kit

COPIES = 3
BURNERS_PER_CPU = 2


@pytest.mark.slow
def test_the_reference_keeps_every_timing_point_on_a_loaded_machine(tmp_path: Path) -> None:
    root = tmp_path / "submitted"
    for name in (f"student{i}" for i in range(COPIES)):
        shutil.copytree(kit.SOLUTIONS, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "graded"
    command = [sys.executable, "-m", "autograder", "grade-batch", str(root), "--csv", str(out / "grades.csv"),
               "--out", str(out), "-j", "2", "--step", "timing", "--no-progress", "--deadline", "900"]  # fmt: skip
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(BURNERS_PER_CPU * (os.cpu_count() or 1))
    ]
    try:
        env = {**os.environ, "ATTNLAB_SECRET": "load", "ATTNLAB_KIT": str(kit.ROOT)}
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == COPIES
    points = tasks.step("timing").points
    assert all(float(row["timing"]) == points for row in rows), [(r["student_id"], r["timing"]) for r in rows]
