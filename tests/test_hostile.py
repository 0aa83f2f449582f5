"""Files in the submission folder cannot change the grader's verdicts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from autograder import engine
from tests import kit

HOSTILE = {
    # A conftest that would turn every failed check into a pass, if pytest ever loaded it.
    "conftest.py": (
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n"
    ),
    # Python would run this at start-up if the folder were on sys.path then.
    "sitecustomize.py": "import numpy.testing\nnumpy.testing.assert_allclose = lambda *a, **k: None\n",
    # Shadows of the grader's own libraries.
    "numpy.py": "raise SystemExit('fake numpy imported')\n",
    "pytest.py": "raise SystemExit('fake pytest imported')\n",
}
STEPS = ("softmax", "scaling", "mask")


def with_hostile_files(source: Path, into: Path) -> Path:
    folder = into / source.name
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name, text in HOSTILE.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def cli_grade(folder: Path, out: Path) -> dict:
    """Grade through the installed command, started inside the submission folder."""
    command = [shutil.which("attnlab") or "attnlab", "grade", ".", "--json", str(out), "--seed", str(kit.TEST_SEED)]
    for step in STEPS:
        command += ["--step", step]
    env = {**os.environ, "ATTNLAB_KIT": str(kit.ROOT)}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(out.read_text())


@pytest.mark.slow
def test_stubs_with_hostile_files_still_score_zero(tmp_path: Path) -> None:
    results = cli_grade(with_hostile_files(kit.STUBS, tmp_path), tmp_path / "stubs.json")
    assert results["score"] == 0
    assert all(test["score"] == 0 for test in results["tests"])


@pytest.mark.slow
def test_reference_with_hostile_files_still_scores_full(tmp_path: Path) -> None:
    results = cli_grade(with_hostile_files(kit.SOLUTIONS, tmp_path), tmp_path / "ref.json")
    assert results["score"] == results["max_score"] > 0


def test_grader_modules_from_the_submission_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started with the submission on sys.path, the grader would import its shadows; it refuses to grade."""
    folder = with_hostile_files(kit.STUBS, tmp_path)
    shadow = types.ModuleType("pytest")
    shadow.__file__ = str(folder / "pytest.py")
    monkeypatch.setitem(sys.modules, "pytest", shadow)
    with pytest.raises(engine.GradingError, match="imported from the submission folder"):
        engine._guard_imports(folder)
