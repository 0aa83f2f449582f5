"""grade-batch flags hand-ins alike (a copied reports/ folder, a copied unusual prediction set) for review, in the
class summary and in each affected student's row, and flags no honest, distinct ones."""

from __future__ import annotations

import csv
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autograder.batch import records, similarity, summary
from autograder.batch import run as batch
from autograder.batch.job import Result
from autograder.warm import client
from autograder.warm import job as warm_job
from tests import kit
from tests.test_batch import options


def _options(root: Path, out: Path, **how: object) -> batch.BatchOptions:
    """The batch of ``root`` into ``out``, softmax only (``how``: the Dask scheduler, for one)."""
    return options(root, out, secret="similarity-test", steps=("softmax",), **how)


LAB = "lab07_attention"
REPORT = kit.SOLUTIONS / "reports" / "timing.json"
ANSWERS = kit.SOLUTIONS / "predictions.py"


def _jitter(value: Any, rng: random.Random) -> Any:
    """A timing report's numbers as another honest measurement gives them: each raw time a little different."""
    if isinstance(value, float) and not value.is_integer():
        return value * rng.uniform(0.9, 1.1)
    if isinstance(value, dict):
        return {k: _jitter(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_jitter(v, rng) for v in value]
    return value


def _hand_in(root: Path, student: str, seed: int | None, answers: dict[str, str] | None = None) -> Path:
    """A hand-in of the reference with its own timing report (``seed``; None: the reference's byte for byte) and
    the reference's predictions with ``answers`` written in place of some."""
    lab = root / student / "lab07_attention"
    shutil.copytree(kit.SOLUTIONS, lab, ignore=shutil.ignore_patterns("__pycache__"))
    if seed is not None:
        report = json.loads(REPORT.read_text(encoding="utf-8"))
        (lab / "reports" / "timing.json").write_text(json.dumps(_jitter(report, random.Random(seed))), "utf-8")
    text = ANSWERS.read_text(encoding="utf-8")
    for question_id, literal in (answers or {}).items():
        line = next(line for line in text.splitlines() if line.strip().startswith(f'"{question_id}":'))
        text = text.replace(line, f'    "{question_id}": {literal},  # ANSWER')
    (lab / "predictions.py").write_text(text, encoding="utf-8")
    return lab.parent


COPIED = {"kv_cache_gb": "5.37", "output_shape": "(4, 7, 3)"}  # two wrong answers a pair shares


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return similarity.reference_answers(kit.SOLUTIONS)


def test_honest_distinct_hand_ins_are_not_flagged(tmp_path: Path, reference: dict[str, Any]) -> None:
    hand_ins = [similarity.read(s, _hand_in(tmp_path, s, seed)) for s, seed in (("ann", 1), ("bo", 2), ("cy", 3))]
    assert all(len(h.times) >= similarity.MIN_TIMES and h.answers for h in hand_ins)
    # the same right answers everywhere, and one student's own wrong answers: nothing to review
    wrong = similarity.read("di", _hand_in(tmp_path, "di", 4, COPIED))
    assert similarity.compare([*hand_ins, wrong], reference) == ()


def test_a_copied_report_and_a_copied_prediction_set_are_flagged(tmp_path: Path, reference: dict[str, Any]) -> None:
    ann = _hand_in(tmp_path, "ann", 1, COPIED)
    (tmp_path / "bo").mkdir()
    shutil.copytree(ann / "lab07_attention", tmp_path / "bo" / "lab07_attention")  # the whole folder, byte for byte
    cy = _hand_in(tmp_path, "cy", 3, {"kv_cache_gb": "2.684354", "favoured_keys": "[0, 1]"})
    di = _hand_in(tmp_path, "di", 4, {"kv_cache_gb": "2.684354", "favoured_keys": "[0, 1]"})  # answers copied
    eve = _hand_in(tmp_path, "eve", 5)
    near = json.loads((ann / "lab07_attention" / "reports" / "timing.json").read_text(encoding="utf-8"))
    near["device"] = "cpu (renamed)"
    (eve / "lab07_attention" / "reports" / "timing.json").write_text(json.dumps(near, indent=1), "utf-8")
    folders = {"ann": ann, "bo": tmp_path / "bo", "cy": cy, "di": di, "eve": eve}
    flags = similarity.compare([similarity.read(s, f) for s, f in folders.items()], reference)
    assert {(f.kind, f.students) for f in flags} == {
        ("timing", ("ann", "bo", "eve")),  # eve's report is ann's with another device name: near-identical
        ("predictions", ("ann", "bo")),
        ("predictions", ("cy", "di")),
    }
    reasons = similarity.reasons(flags)
    assert reasons["eve"] == ("review: timing report identical or near-identical to ann, bo's (raw times)",)
    assert "review: prediction set identical to di's (2 unusual entries in common)" in reasons["cy"]
    results = [Result(s, "d", reason="", review=reasons.get(s, ())) for s in folders]
    whole = summary.summarise(results, flags)
    text = summary.table(whole)
    assert "For review" in text and "- ann, bo, eve: identical or near-identical timing reports" in text
    assert "- cy, di: identical prediction sets" in text
    path = records.write_csv(tmp_path / "grades.csv", results, ("softmax",), 10.0)
    with path.open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert table["bo"]["review"].startswith("review: timing report") and table["bo"]["status"] == "failed"
    records.write(tmp_path / "out", results[0])
    assert records.read(tmp_path / "out", "ann").review == results[0].review


def test_grade_batch_flags_the_copies_in_the_rows_and_the_summary(tmp_path: Path) -> None:
    root = tmp_path / "submissions"
    _hand_in(root, "ann", 1, COPIED)
    shutil.copytree(root / "ann", root / "bo")
    _hand_in(root, "cy", 3)
    out = tmp_path / "out"
    try:
        done = batch.run(_options(root, out))
    finally:
        client.stop(warm_job.HANDLER)
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert table["ann"]["review"] and table["bo"]["review"] and table["cy"]["review"] == ""
    assert table["ann"]["total"] == table["cy"]["total"] == "10"  # a review reason, not a zero
    assert {students for students, _what in done.class_summary.review} == {"ann, bo"}
    assert "For review" in (out / "graded" / "summary.md").read_text(encoding="utf-8")


UNUSUAL = {"kv_cache_gb": "2.684354", "favoured_keys": "[0, 1]"}  # over-precise and wrong: a pair shares them
FLAGGED = {
    "ann": ("review: timing report identical or near-identical to bo's (raw times)",),
    "bo": ("review: timing report identical or near-identical to ann's (raw times)",),
    "cy": ("review: prediction set identical to di's (2 unusual entries in common)",),
    "di": ("review: prediction set identical to cy's (2 unusual entries in common)",),
    "eve": (),
}


def _copies(root: Path) -> Path:
    """Five hand-ins in ``root``: ann and bo with byte-identical reports/timing.json, cy and di with the same
    unusual prediction set, eve honest."""
    _hand_in(root, "ann", 1)
    _hand_in(root, "bo", 2)
    shutil.copyfile(root / "ann" / LAB / "reports" / "timing.json", root / "bo" / LAB / "reports" / "timing.json")
    _hand_in(root, "cy", 3, UNUSUAL)
    _hand_in(root, "di", 4, UNUSUAL)
    _hand_in(root, "eve", 5)
    return root


def _assert_flagged(csv_path: Path, graded: Path) -> None:
    """Each student's review reasons in the CSV and in their result JSON, their score untouched."""
    with csv_path.open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(table) == set(FLAGGED)
    for student, reasons in FLAGGED.items():
        assert table[student]["review"] == "; ".join(reasons), (student, table[student])
        assert records.read(graded, student).review == reasons, student
        assert table[student]["total"] == "10", table[student]  # a review reason, never a changed score


@pytest.mark.slow
def test_grade_batch_on_a_dask_cluster_flags_the_copies(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    root = _copies(tmp_path / "submissions")
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as dask:
        batch.run(_options(root, out, dask=dask.scheduler_address))
    _assert_flagged(out / "grades.csv", out / "graded")


@pytest.mark.slow
def test_grade_batch_on_an_nbgrader_course_flags_the_copies(tmp_path: Path) -> None:
    """The nbgrader path: grade-batch on a course folder (its private folder's reference tells a wrong answer)."""
    from autograder.nbgrader_course import course as course_writer

    course = tmp_path / "course"
    course_writer.write_course(course_writer.CourseOptions(folder=course, kit=kit.ROOT))
    _copies(course / "submitted")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade-batch", str(course), "--csv", str(out / "grades.csv")]
    command += ["--step", "softmax", "-j", "2", "--no-progress"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=kit.ROOT)
    finally:
        client.stop(warm_job.HANDLER)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    _assert_flagged(out / "grades.csv", out / "graded")
    assert "ann, bo: identical or near-identical timing reports" in done.stdout
    assert "cy, di: identical prediction sets" in done.stdout
