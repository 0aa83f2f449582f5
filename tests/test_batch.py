"""`attnlab grade-batch`: every layout found, every student a row (a broken or hostile one with its reason),
resumable, a class summary; the same CSV on a Dask cluster that loses a worker mid-batch."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.base import tasks
from autograder.deliver.batch import discover, records, summary
from autograder.deliver.batch import run as batch
from autograder.deliver.batch.job import Result
from autograder.grading import serialize
from tests import kit

LAB = tasks.LAB
STEPS = ("softmax", "mask")
POINTS = sum(tasks.step(s).points for s in STEPS)
SECRET = "batch-test-secret"


# -- fast: layouts, CSV, summary ---------------------------------------------------------------------------------
def test_a_folder_per_student_nbgrader_and_a_gradescope_export_are_found(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    for student in ("bob", "alice", ".hidden", "__MACOSX"):
        (plain / student).mkdir(parents=True)
    assert [s.student for s in discover.discover(plain)] == ["alice", "bob"]

    course = tmp_path / "course"
    (course / "submitted" / "s1" / LAB).mkdir(parents=True)
    assert discover.discover(course) == discover.discover(course / "submitted")
    assert [s.folder for s in discover.discover(course)] == [course / "submitted" / "s1"]

    export = tmp_path / "export"
    for folder in ("submission_11", "submission_12", "submission_13"):
        (export / folder).mkdir(parents=True)
    (export / discover.GRADESCOPE_METADATA).write_text(
        "submission_11:\n  :submitters:\n  - :name: Ann\n    :sid: '2001'\n    :email: ann@uni.edu\n"
        "submission_12:\n  :submitters:\n  - :name: Bo\n    :email: bo@uni.edu\n  - :name: Cy\n    :sid: '2003'\n",
        encoding="utf-8",
    )
    found = {s.student: s.folder.name for s in discover.discover(export)}
    assert found == {"2001": "submission_11", "2003+bo@uni.edu": "submission_12", "submission_13": "submission_13"}


def test_the_csv_has_a_row_per_student_with_points_per_step(tmp_path: Path, stubs_report) -> None:
    graded = Result("ann", "d1", report=serialize.report_dict(stubs_report))
    failed = Result("bo, jr", "d2", reason='no lab files, "none"')
    path = records.write_csv(tmp_path / "grades.csv", [failed, graded], tuple(tasks.BY_ID), 166.0)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["student_id"] for r in rows] == ["ann", "bo, jr"]
    assert list(rows[0])[: len(tasks.STEPS) + 1] == ["student_id", *tasks.BY_ID]
    assert rows[0]["total"] == "0" and rows[0]["status"] == "graded"
    assert (
        rows[1]["status"] == "failed" and rows[1]["reason"] == 'no lab files, "none"' and rows[1]["max_score"] == "166"
    )
    assert records.file_stem("../a b/é") == "_a_b_é" and records.file_stem("...") == "_"


def test_the_class_summary_counts_lost_points_and_names_mistakes(reference_report, stubs_report, tmp_path) -> None:
    results = [
        Result("ref", "a", report=serialize.report_dict(reference_report)),
        Result("stub", "b", report=serialize.report_dict(stubs_report)),
        Result("gone", "c", reason="no lab files"),
    ]
    whole = summary.summarise(results)
    assert whole.students == 3 and whole.failed == (("gone", "no lab files"),)
    softmax = next(s for s in whole.steps if s.step.id == "softmax")
    assert (softmax.graded, softmax.lost) == (2, 1) and softmax.mean == tasks.step("softmax").points / 2
    paths = summary.write(whole, tmp_path)
    assert paths["chart"].read_bytes().startswith(b"\x89PNG")
    page = paths["page"].read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "gone" in page and "<table>" in page
    assert "| Softmax | 2 | 1 |" in paths["table"].read_text(encoding="utf-8")


# -- slow: real batches ------------------------------------------------------------------------------------------
def notebook_only(folder: Path) -> Path:
    """A student who wrote the modules in a notebook (``%%writefile`` cells)."""
    cells = [
        nbformat.v4.new_code_cell(f"%%writefile {module}.py\n" + (kit.SOLUTIONS / f"{module}.py").read_text("utf-8"))
        for module in ("softmax", "scaling", "mask")
    ]
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / "lab.ipynb")
    return folder


@pytest.fixture(scope="module")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven students: reference, stubs (nbgrader's layout), buggy, hostile, slow, no files, a notebook."""
    root = tmp_path_factory.mktemp("submissions")
    shutil.copytree(kit.SOLUTIONS, root / "ref", ignore=shutil.ignore_patterns("__pycache__", "reports"))
    shutil.copytree(kit.STUBS, root / "stub" / LAB)
    buggy = kit.Variant(
        "buggy", "softmax", "softmax", "shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x", "x"
    )
    buggy.build(root)
    hostile = root / "hostile"
    shutil.copytree(kit.STUBS, hostile)
    (hostile / "softmax.py").write_text(
        f"import os\nopen({str(root / 'ref' / 'softmax.py')!r}, 'a').write('# hacked')\nos._exit(0)\n", encoding="utf-8"
    )
    slow = root / "slow"
    shutil.copytree(kit.SOLUTIONS, slow, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    (slow / "mask.py").write_text((slow / "mask.py").read_text("utf-8") + "\nimport time\n\ntime.sleep(3)\n", "utf-8")
    (root / "empty").mkdir()
    (root / "empty" / "README.txt").write_text("forgot the files", encoding="utf-8")
    notebook_only(root / "notebook")
    return root


def options(submissions: Path, out: Path, **more: object) -> batch.BatchOptions:
    """The batch of ``submissions`` into ``out`` (CSV and pages) with this module's defaults; ``more`` adds to or
    replaces them."""
    defaults: dict[str, object] = {
        "hidden": kit.HIDDEN,
        "reference": kit.SOLUTIONS,
        "secret": SECRET,
        "given": kit.SOLUTIONS,
        "steps": STEPS,
        "workers": 2,
        "progress": False,
    }
    return batch.BatchOptions(submissions=submissions, csv=out / "grades.csv", out=out / "graded", **(defaults | more))


def rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def local_run(submissions: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("local")
    done = batch.run(options(submissions, out))
    yield out, done


@pytest.mark.slow
def test_every_student_is_a_row_and_nothing_stops_the_batch(local_run, submissions: Path) -> None:
    out, done = local_run
    table = rows(out / "grades.csv")
    assert set(table) == {"ref", "stub", "buggy", "hostile", "slow", "empty", "notebook"}
    full = {student: table[student]["total"] for student in ("ref", "slow", "notebook")}
    short = [student for student, total in full.items() if total != f"{POINTS:g}"]
    assert not short, (full, _lost(out, short))
    assert table["stub"]["total"] == "0" and table["hostile"]["softmax"] == "0"
    assert 0 < float(table["buggy"]["softmax"]) < tasks.step("softmax").points
    assert table["empty"]["status"] == "failed" and table["empty"]["reason"].startswith("No lab files")
    assert all(table[s]["status"] == "graded" for s in table if s != "empty")
    assert "# hacked" not in (submissions / "ref" / "softmax.py").read_text(encoding="utf-8")
    for student in table:
        data = json.loads(records.result_path(out / "graded", student).read_text(encoding="utf-8"))
        assert data["student"] == student
        page = records.result_path(out / "graded", student).with_suffix(".html").read_text(encoding="utf-8")
        graded = table[student]["status"] == "graded"
        assert student in page and ("<table" in page if graded else "0 points" in page)
        if student == "buggy":  # the report's heatmaps, as `attnlab grade --html` draws them
            assert "data:image/png;base64," in page
    softmax = next(s for s in done.class_summary.steps if s.step.id == "softmax")
    assert softmax.lost == 3 and dict(softmax.mistakes).get("softmax_no_max_shift") == 1  # stub, buggy, hostile
    assert all(path.is_file() for path in done.summary.values())


def _lost(out: Path, students: list[str]) -> dict[str, list[str]]:
    """The checks each of ``students`` lost, with their messages (for a failure's explanation)."""
    lost = {}
    for student in students:
        data = json.loads(records.result_path(out / "graded", student).read_text(encoding="utf-8"))
        tests = data.get("tests", [])
        lost[student] = [f"{t.get('name')}: {t.get('output', '')[:300]}" for t in tests if t["score"] < t["max_score"]]
    return lost


@pytest.mark.slow
def test_a_batch_resumes_and_force_grades_again(local_run, submissions: Path, tmp_path: Path) -> None:
    out, first = local_run
    again = batch.run(options(submissions, out))
    assert again.kept == 6 and again.tried_now == 1 and again.graded_now == 0  # the student without files, again
    assert rows(out / "grades.csv") == rows(first.csv)
    copy = tmp_path / "copy"
    shutil.copytree(submissions, copy)
    shutil.copytree(out / "graded", tmp_path / "out" / "graded")
    (copy / "stub" / LAB / "softmax.py").write_text((kit.SOLUTIONS / "softmax.py").read_text("utf-8"), "utf-8")
    changed = batch.run(options(copy, tmp_path / "out"))
    assert changed.tried_now == 2 and rows(changed.csv)["stub"]["softmax"] == f"{tasks.step('softmax').points:g}"
    forced = batch.run(options(copy, tmp_path / "out", force=True))
    assert forced.tried_now == 7 and forced.graded_now == 6 and forced.kept == 0


@pytest.mark.slow
def test_a_dask_cluster_that_loses_a_worker_gives_the_same_csv(local_run, submissions: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    _, local = local_run
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as observer,
    ):
        done: dict = {}
        thread = threading.Thread(
            target=lambda: done.update(run=batch.run(options(submissions, tmp_path, dask=cluster.scheduler_address)))
        )
        thread.start()
        # the worker given the slow student (its mask.py sleeps 3 s at each import): grading is fast enough now that
        # a worker killed at a guessed moment may have finished its jobs already (seen in a clean-clone CI)
        deadline, victim = time.monotonic() + 120, None
        while victim is None and time.monotonic() < deadline:
            time.sleep(0.05)
            slow = [worker for worker, keys in observer.processing().items() if any("-slow-" in k for k in keys)]
            victim = slow[0] if slow else None
        assert victim is not None, "no worker took the slow student"
        time.sleep(0.5)  # inside its grading
        processing, pids = observer.processing(), observer.run(os.getpid)
        os.kill(pids[victim], signal.SIGKILL)
        thread.join(timeout=600)
        stories = [observer.story(key) for key in processing[victim]]
    assert "run" in done, "the batch did not finish"
    # the scheduler's story of a job: (where, key, from, to, recommendations, stimulus, time)
    rescheduled = [
        entry
        for story in stories
        for entry in story
        if entry[0] == "scheduler" and entry[2:4] == ("processing", "released") and "worker-cleanup" in entry[5]
    ]
    assert rescheduled, "no job of the lost worker was rescheduled"
    assert rows(done["run"].csv) == rows(local.csv)
    assert summary.table(done["run"].class_summary) == summary.table(local.class_summary)


@pytest.mark.slow
def test_the_command_writes_the_csv_and_the_summary(submissions: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "autograder", "grade-batch", str(submissions), "--csv", str(tmp_path / "g.csv")]
    done = subprocess.run(
        [*command, "-j", "2", "--step", "softmax", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ATTNLAB_SECRET": SECRET},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "| Softmax | 6 | 3 |" in done.stdout and "not graded: empty: No lab files" in done.stdout
    assert len(rows(tmp_path / "g.csv")) == 7 and (tmp_path / "graded" / "summary.html").is_file()
