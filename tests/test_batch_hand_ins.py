"""Nothing a hand-in holds stops `attnlab grade-batch`: a file or folder the grader may not read (a zip's mode-000
`reports/`, a mode-000 module, a student's folder it cannot list) is that student's row with its reason, on every
rerun, and the batch writes its CSV; a folder without hand-ins is one sentence and exit 2."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.base import safefs
from autograder.deliver.batch import discover
from autograder.deliver.batch import run as batch
from autograder.handin import intake
from tests import kit, unreadable

LAB = "lab07_attention"


def _reference(folder: Path) -> Path:
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def class_folder(tmp_path: Path):
    """Five students: one plain, and one each with an unreadable reports/, module, lab folder and own folder."""
    root = tmp_path / "submissions"
    _reference(root / "ann")
    unreadable.close(_reference(root / "bo" / LAB) / "reports")
    unreadable.close(_reference(root / "cy") / "softmax.py")
    unreadable.close(_reference(root / "di" / LAB))
    unreadable.close(_reference(root / "eve"))
    yield root
    unreadable.open_again(root)


def _grade_batch(root: Path, out: Path, tmp: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "grade-batch", str(root), "--csv", str(out / "grades.csv")]
    return subprocess.run(
        [*unreadable.prefix(), *command, "--step", "softmax", "-j", "2", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=out,
        # its own temporary folder: its own warm server, started without root's right to read mode 000 (a server
        # another test started as full root could read what this batch may not)
        env={**os.environ, "ATTNLAB_SECRET": "unreadable-test", "TMPDIR": str(tmp)},
    )


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_unreadable_files_and_folders_are_rows_with_their_reason(
    class_folder: Path, tmp_path: Path, short_tmp: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for attempt in ("first", "rerun"):
        done = _grade_batch(class_folder, out, short_tmp)
        assert done.returncode == 0, (attempt, done.stdout[-2000:], done.stderr[-3000:])
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        table = _rows(out / "grades.csv")
        assert set(table) == {"ann", "bo", "cy", "di", "eve"}, attempt
        assert table["ann"]["total"] == "10" and table["ann"]["reason"] == ""
        # the unreadable reports/ costs only what needs it (not softmax), and the row says it was left out
        assert table["bo"]["total"] == "10" and table["bo"]["status"] == "graded"
        assert table["bo"]["reason"] == "graded without what could not be taken in: reports (unreadable)"
        assert table["cy"]["softmax"] == "0" and "softmax.py (unreadable)" in table["cy"]["reason"]
        assert table["di"]["status"] == "failed" and "may not read its folder lab07_attention" in table["di"]["reason"]
        assert table["eve"]["status"] == "failed" and "could not be read (PermissionError" in table["eve"]["reason"]
        feedback = (out / "graded" / "students" / "cy.json").read_text(encoding="utf-8")
        assert "the grader may not read softmax.py in your hand-in" in feedback


def test_the_intake_leaves_out_what_it_may_not_read(class_folder: Path, tmp_path: Path) -> None:
    """In this process (root may read everything): the same hand-ins, read as the grader would, through a walk
    that meets a PermissionError at each unreadable name."""
    real = safefs.open_below

    def denying(root: int, parts: tuple[str, ...]) -> int:
        if parts and parts[-1] == "reports":
            raise PermissionError(13, "Permission denied")
        return real(root, parts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(safefs, "open_below", denying)
        taken = intake.take_in(class_folder / "bo", tmp_path / "copy", search=True)
        fingerprint = intake.fingerprint(class_folder / "bo")
    assert taken.ignored == (intake.Ignored("reports", safefs.UNREADABLE),)
    assert (taken.folder / "softmax.py").is_file() and fingerprint != intake.fingerprint(class_folder / "bo")


def test_a_folder_without_hand_ins_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "notes.txt").write_text("no folders here", encoding="utf-8")
    for folder in ("empty", "files"):
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "grade-batch", folder, "--no-progress"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            batch.NO_HAND_INS.format(folder=tmp_path / folder).join(["attnlab grade-batch: ", ""])
        ]
        assert not (tmp_path / "grades.csv").exists() and not (tmp_path / "graded").exists()


def test_a_broken_gradescope_export_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "submission_1").mkdir()
    (tmp_path / discover.GRADESCOPE_METADATA).write_text(":submitters: [unclosed", encoding="utf-8")
    with pytest.raises(batch.BatchRefused, match=r"cannot read the Gradescope export.s submission_metadata\.yml"):
        batch.found(tmp_path)


def test_a_csv_that_cannot_be_written_is_one_sentence_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autograder import cli
    from autograder.deliver.batch import records

    (tmp_path / "submissions" / "ann").mkdir(parents=True)  # no lab files: a row, without starting a grader's work

    def full(*_args: object, **_kwargs: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(records, "write_csv", full)
    monkeypatch.setenv("ATTNLAB_SECRET", "csv-test")
    monkeypatch.setenv("ATTNLAB_WARM_GRADER", "0")  # one fresh grader: no server to start for one student
    code = cli.main(["grade-batch", str(tmp_path / "submissions"), "--csv", str(tmp_path / "g.csv"), "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and lines[-1].startswith("attnlab grade-batch: the CSV ") and "No space left" in lines[-1]
    assert "Traceback" not in "\n".join(lines) and (tmp_path / "graded" / "students" / "ann.json").is_file()


@pytest.mark.slow
def test_the_gradescope_runner_grades_what_it_can_read(tmp_path: Path) -> None:
    """The Gradescope runner, in Gradescope's layout, on a hand-in with a mode-000 module and reports/ folder:
    results.json grades what it could read, and says what it could not."""
    import json

    from autograder.deliver.gradescope import runner

    root = tmp_path / "gradescope"
    for folder in ("solutions", "hidden"):
        shutil.copytree(kit.ROOT / folder / LAB, root / "source" / runner.KIT / folder / LAB,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    settings = {"secret": "gradescope-test", "steps": ["softmax", "mask"]}
    (root / "source" / runner.SETTINGS).write_text(json.dumps(settings), encoding="utf-8")
    lab = _reference(root / "submission" / LAB)
    (root / "results").mkdir()
    unreadable.close(lab / "mask.py")
    unreadable.close(lab / "reports")
    try:
        done = subprocess.run(
            [
                *unreadable.prefix(),
                sys.executable,
                "-I",
                "-c",
                "from autograder.deliver.gradescope.runner import main; main()",
            ],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, runner.ENV_ROOT: str(root)},
        )  # fmt: skip
    finally:
        unreadable.open_again(root / "submission")
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    softmax = [t for t in document["tests"] if t["name"].startswith("Softmax")]
    mask = [t for t in document["tests"] if t["name"].startswith("Causal mask")]
    assert softmax and all(t["score"] == t["max_score"] for t in softmax), softmax
    assert mask and all(t["score"] == 0 for t in mask if t["max_score"])
    said = [t["output"].replace("\\", "") for t in mask]  # Markdown, escaped
    assert any("the grader may not read mask.py in your hand-in" in text for text in said), said[0]
    assert "reports was left out of your hand-in: the grader may not read it" in document["output"].replace("\\", "")
