"""`attnlab grade`: table, Gradescope JSON, exit codes, reproducible reports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.grading import engine
from autograder.grading.model import GradeReport
from autograder.report import gradescope
from tests import kit

CORE = ("--step", "softmax", "--step", "scaling", "--step", "mask")


def run_cli(*args: str, cwd: Path = kit.ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def test_grade_reference_prints_table_and_writes_gradescope_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = run_cli("grade", str(kit.SOLUTIONS), "--json", str(out), *CORE)
    assert done.returncode == 0, done.stderr
    assert "Total" in done.stdout and "Hidden inputs seed:" in done.stdout
    results = json.loads(out.read_text())
    assert results["score"] == results["max_score"] == sum(tasks.step(s).points for s in ("softmax", "scaling", "mask"))
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "output", "visibility"}
        assert test["visibility"] in {"visible", "after_published"}
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


def test_stubs_exit_zero_with_zero_score(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = run_cli("grade", "--json", str(out), *CORE)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["score"] == 0


def test_public_only_grades_public_checks() -> None:
    done = run_cli("grade", str(kit.SOLUTIONS), "--public-only", *CORE)
    assert done.returncode == 0
    assert "(public checks only)" in done.stdout and "Hidden inputs seed" not in done.stdout
    total = sum(tasks.step(s).public_points for s in ("softmax", "scaling", "mask"))
    assert re.search(rf"^Total\s+{total:g}\s+{total:g}\s", done.stdout, re.MULTILINE), done.stdout


@pytest.mark.parametrize("args", [("grade", "/no/such/folder"), ("grade", "--step", "nonsense"), ("frobnicate",)])
def test_usage_errors_exit_two(args: tuple[str, ...]) -> None:
    assert run_cli(*args).returncode == 2


def test_seed_depends_on_secret_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    assert engine.seed_for("s1", "alice") != engine.seed_for("s2", "alice") != engine.seed_for("s1", "bob")
    assert engine.seed_for("s1", "alice") == engine.seed_for("s1", "alice")


def test_secret_changes_hidden_inputs_and_is_not_in_report() -> None:
    first = run_cli("grade", *CORE, env={"ATTNLAB_SECRET": "course-2026"})
    second = run_cli("grade", *CORE, env={"ATTNLAB_SECRET": "another"})
    seed = lambda text: next(line for line in text.splitlines() if line.startswith("Hidden inputs seed"))  # noqa: E731
    assert seed(first.stdout) != seed(second.stdout)
    assert "course-2026" not in first.stdout
    assert engine.NOTE_DEFAULT_SECRET not in first.stdout


def test_same_folder_twice_gives_the_same_report() -> None:
    # Both grades here, under this test's environment: the shared stubs_report may have been built in another
    # worker while a test there had set ATTNLAB_SKIP_UNTOUCHED=0 (the checks run, with their own messages).
    first, again = kit.grade(kit.STUBS), kit.grade(kit.STUBS)
    assert again == first  # GradeReport.seconds is excluded from equality
    assert gradescope.results(again, execution_time=0) == gradescope.results(first, execution_time=0)


def test_seed_reproduces_hidden_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_SKIP_UNTOUCHED", "0")  # the stubs' checks run (autograder.handin.pristine)
    a = kit.grade(kit.STUBS, steps=("scaling",), seed=11)
    b = kit.grade(kit.STUBS, steps=("scaling",), seed=11)
    c = kit.grade(kit.STUBS, steps=("scaling",), seed=12)
    hidden = lambda r: [x.message for x in r.step("scaling").checks if x.hidden]  # noqa: E731
    assert hidden(a) == hidden(b) != hidden(c)


def test_registry_totals_match_markers(reference_report: GradeReport) -> None:
    for result in reference_report.steps:
        public = sum(c.points for c in result.checks if not c.hidden)
        hidden = sum(c.points for c in result.checks if c.hidden)
        assert (public, hidden) == pytest.approx((result.step.public_points, result.step.hidden_points))
    assert reference_report.possible == pytest.approx(tasks.total_points())
    assert [s.step.id for s in reference_report.steps] == list(tasks.BY_ID)


def test_kit_is_found_from_the_source_tree_and_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Kit.find() == kit.KIT
    monkeypatch.setenv("ATTNLAB_KIT", str(tmp_path))
    assert Kit.find() is None, "a folder without solutions/ and hidden/ is not a kit"
    for folder in (Kit(tmp_path).solutions, Kit(tmp_path).hidden):
        folder.mkdir(parents=True)
    assert Kit.find() == Kit(tmp_path)


def test_two_hidden_folders_in_one_process(tmp_path: Path) -> None:
    """A long-lived process (the nbgrader test, a grading service) may grade with different hidden folders."""
    import shutil

    copy = tmp_path / "hidden"
    shutil.copytree(kit.HIDDEN, copy, ignore=shutil.ignore_patterns("__pycache__"))
    first = kit.grade(kit.SOLUTIONS, steps=("softmax",))
    second = engine.grade(
        engine.GradeOptions(
            submission=kit.SOLUTIONS, hidden=copy, reference=kit.SOLUTIONS, seed=kit.TEST_SEED, steps=("softmax",)
        )
    )
    assert first.earned == second.earned == tasks.step("softmax").points


@pytest.mark.parametrize(
    "option, path, words",
    [
        ("--html", "missing/dir/r.html", "does not exist"),
        ("--json", "missing/r.json", "does not exist"),
        ("--json", ".", "is a folder"),
        ("--html", "file.txt/r.html", "is not a folder"),
        ("--json", "/proc/r.json", "is not writable"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_one_sentence_before_grading(
    tmp_path: Path, option: str, path: str, words: str
) -> None:
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    done = run_cli("grade", str(kit.STUBS), "--step", "softmax", option, path, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "", "grading started"
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr and option in done.stderr, done.stderr
    assert sorted(tmp_path.rglob("*")) == before, "a folder or file was made"


def test_the_html_report_links_the_lab_folders_handout(tmp_path: Path) -> None:
    from autograder.cli import grade
    from autograder.report import render_html

    lab = tmp_path / "lab"
    (lab / "handouts").mkdir(parents=True)
    (lab / render_html.handout_page("en")).write_text("<html></html>", encoding="utf-8")
    (tmp_path / "out").mkdir()
    assert grade.handout_href(lab, None, tmp_path / "out" / "r.html") == "../lab/handouts/lab07_attention.html"
    assert grade.handout_href(lab, None, lab / "r.html") == "handouts/lab07_attention.html"
    assert grade.handout_href(tmp_path / "elsewhere", None, lab / "r.html") is None
