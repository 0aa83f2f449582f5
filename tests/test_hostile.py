"""Files in the submission folder cannot change the grader's verdicts, and a hand-in's own files, shape and names cannot
hurt the grader before its code runs (the intake)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

from autograder.grading import engine
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
    env = {**os.environ, "ATTNLAB_KIT": str(kit.ROOT), "ATTNLAB_SKIP_UNTOUCHED": "0"}  # the stubs' children run
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


# -- the intake: what a hand-in's own files can do before any of its code runs ------------------------------------
def _hostile_names(folder: Path, outside: Path) -> None:
    """Every kind of name that is not a regular file or folder, where the grader looks for lab files."""
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (folder / "mask.py").unlink()
    (folder / "mask.py").symlink_to(outside / "secret.txt")  # a module that is a link to a file outside
    (folder / "dangling.py").symlink_to(outside / "created-by-the-grader")
    (folder / "toy_gpt_weights.npz").unlink()
    (folder / "toy_gpt_weights.npz").symlink_to(outside / "weights-written-through-a-link.npz")  # dangling
    (folder / "mem.py").symlink_to("/proc/self/mem")
    (folder / "zero.npz").symlink_to("/dev/zero")
    (folder / "folder_link").symlink_to(outside, target_is_directory=True)
    os.mkfifo(folder / "fifo.py")
    import socket as sockets

    with sockets.socket(sockets.AF_UNIX) as listener:
        listener.bind(str(folder / "sock"))


def test_links_and_special_files_are_never_followed_opened_or_written_through(tmp_path: Path) -> None:
    from autograder.base import safefs
    from autograder.handin import intake, submission

    folder = tmp_path / "hand-in"
    shutil.copytree(kit.STUBS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    _hostile_names(folder, tmp_path / "outside")
    before = sorted(os.listdir(tmp_path / "outside"))
    taken = intake.take_in(folder, tmp_path / "work" / "copy", given=submission.data_files(kit.SOLUTIONS))
    copied = sorted(p.relative_to(taken.folder).as_posix() for p in taken.folder.rglob("*"))
    assert "mask.py" not in copied and "fifo.py" not in copied and "folder_link" not in copied
    assert all(not p.is_symlink() and (p.is_file() or p.is_dir()) for p in taken.folder.rglob("*"))
    assert sorted(os.listdir(tmp_path / "outside")) == before, "the grader wrote through a link"
    assert (taken.folder / "toy_gpt_weights.npz").read_bytes() == (kit.SOLUTIONS / "toy_gpt_weights.npz").read_bytes()
    kinds = {item.path: item.kind for item in taken.ignored}
    assert kinds == {
        "dangling.py": safefs.LINK, "fifo.py": safefs.FIFO, "folder_link": safefs.LINK, "mask.py": safefs.LINK,
        "mem.py": safefs.LINK, "sock": safefs.SOCKET, "toy_gpt_weights.npz": safefs.LINK, "zero.npz": safefs.LINK,
    }  # fmt: skip
    assert intake.fingerprint(folder, search=False) == intake.fingerprint(folder, search=False)


def test_a_link_swapped_in_after_listing_is_refused_by_the_kernel(tmp_path: Path) -> None:
    from autograder.base import safefs

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "file").symlink_to("/etc/hostname")
    with safefs.opened(safefs.open_root(tmp_path)) as top:
        with pytest.raises(safefs.NotPlain):
            safefs.open_folder(top, "link")
        with pytest.raises(safefs.NotPlain):
            safefs.open_file(top, "file")


@pytest.mark.parametrize("shape", ["deep", "many", "large"])
def test_a_hand_in_past_a_limit_is_refused_in_one_sentence(tmp_path: Path, shape: str) -> None:
    from autograder.base import safefs
    from autograder.handin import intake
    from autograder.judge import messages

    folder = tmp_path / "hand-in"
    shutil.copytree(kit.STUBS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if shape == "deep":  # a thousand folders deep: a recursive walk raised RecursionError in the coordinator
        inner = folder
        for _ in range(1000):
            inner = inner / "d"
            inner.mkdir()
    elif shape == "many":
        (folder / "data").mkdir()
        for index in range(intake.MAX_FILES + 1):
            (folder / "data" / f"{index}.txt").touch()
    else:
        with open(folder / "big.bin", "wb") as big:
            big.truncate(intake.MAX_BYTES + 1)
    try:
        with pytest.raises(intake.HandInRefused) as refused:
            intake.take_in(folder, tmp_path / "work" / "copy")
        sentence = messages.hand_in_refused(refused.value)
        assert sentence.startswith("Your hand-in was not graded: ") and "\n" not in sentence
        assert intake.fingerprint(folder, search=True) != intake.fingerprint(kit.STUBS, search=True)  # never raises
    finally:
        safefs.remove_tree(folder)  # pytest's own clean-up of old temporary folders recurses (shutil.rmtree)


@pytest.mark.parametrize(
    "where",
    ["reports/timing.json", "timing.json", "TOP/reports/timing.json", "TOP/timing.json", "OTHER/timing.json", "cell"],
)
def test_the_timing_report_is_found_wherever_a_student_would_put_it(tmp_path: Path, where: str) -> None:
    """Gradescope uploads: loose files, the report in reports/ or beside the modules, one folder down, or in the
    notebook's own %%writefile cell (issue 20, point 2)."""
    import nbformat

    from autograder.handin import intake, submission

    upload = tmp_path / "upload"
    lab = upload / "lab07_attention"
    report = (kit.SOLUTIONS / "reports" / "timing.json").read_text(encoding="utf-8")
    if where == "cell":
        cells = [nbformat.v4.new_code_cell(f"%%writefile {m}\n" + (kit.SOLUTIONS / m).read_text("utf-8"))
                 for m in ("softmax.py", "timing.py")]  # fmt: skip
        cells.append(nbformat.v4.new_code_cell("%%writefile reports/timing.json\n" + report))
        upload.mkdir()
        nbformat.write(nbformat.v4.new_notebook(cells=cells), upload / "lab.ipynb")
    else:
        shutil.copytree(kit.STUBS, lab, ignore=shutil.ignore_patterns("__pycache__"))
        place = (upload / where.removeprefix("TOP/")) if where.startswith("TOP/") else lab / where
        place = upload / "notes" / "timing.json" if where == "OTHER/timing.json" else place
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(report, encoding="utf-8")
    taken = intake.take_in(upload, tmp_path / "work" / "copy", search=True)
    assert (taken.folder / "reports" / "timing.json").read_text(encoding="utf-8") == report
    assert "/".join(submission.REPORT) == __import__("autograder.judge.timing.report", fromlist=["PATH"]).PATH


def test_csv_cells_from_hand_ins_cannot_repaint_a_terminal_or_run_as_formulas(tmp_path: Path) -> None:
    import csv

    from autograder.deliver.batch import records
    from autograder.deliver.batch.job import Result

    rows = [Result('=HYPERLINK("http://x")', "d", reason="\x1b[2J cleared"), Result("ok", "d", reason="@SUM(1)")]
    path = records.write_csv(tmp_path / "grades.csv", rows, ("softmax",), 10.0)
    text = path.read_text(encoding="utf-8")
    assert "\x1b" not in text
    read = {row["student_id"]: row for row in csv.DictReader(text.splitlines())}
    assert set(read) == {'\'=HYPERLINK("http://x")', "ok"} and read["ok"]["reason"] == "'@SUM(1)"


@pytest.mark.slow
def test_a_symlinked_module_says_it_is_a_link(tmp_path: Path) -> None:
    """The student reads that the module is a link and links are not followed, not a bare PermissionError (issue
    20, point 10); the module's target is never read."""
    folder = tmp_path / "lab"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    (tmp_path / "elsewhere.py").write_text((folder / "softmax.py").read_text("utf-8"), encoding="utf-8")
    (folder / "softmax.py").unlink()
    (folder / "softmax.py").symlink_to(tmp_path / "elsewhere.py")
    report = kit.grade(folder, steps=("softmax",))
    step = report.step("softmax")
    assert step.earned == 0 and not report.internal_errors
    message = step.failed[0].message
    assert "softmax.py in your hand-in is a symbolic link" in message and "links are not followed" in message
    assert "PermissionError" not in message
    assert any("softmax.py was left out of your hand-in" in note for note in report.notes)
    assert [(i.path, i.kind) for i in report.ignored] == [("softmax.py", "link")]


def test_a_grader_failure_is_retried_once_and_never_the_students_points(tmp_path: Path, monkeypatch) -> None:
    """No space left, a dead fork server, an internal error: graded once more; a second failure is a row that says
    the grader failed, with no points, counted by the batch (and its exit status)."""
    from autograder.deliver.batch import job, records
    from autograder.deliver.batch import run as batch
    from autograder.deliver.batch.job import Job, Result

    calls: list[str] = []

    def flaky(each: Job) -> Result:
        calls.append(each.student)
        if each.student == "always" or calls.count(each.student) == 1:
            return Result(
                each.student, each.digest, reason="the grader itself failed (no space left)", grader_failed=True
            )
        return Result(each.student, each.digest, report=None, reason="fine")

    monkeypatch.setattr(job, "_grade_once", flaky)
    once = job.grade(Job("once", tmp_path, "d", None, None, None))
    always = job.grade(Job("always", tmp_path, "d", None, None, None))
    assert calls == ["once", "once", "always", "always"]
    assert not once.grader_failed and always.grader_failed and always.reason.endswith(job.RETRIED)
    path = records.write_csv(tmp_path / "g.csv", [always], ("softmax",), 10.0)
    row = path.read_text(encoding="utf-8").splitlines()[1].split(",")
    assert row[:3] == ["always", "", ""] and "grader failed" in row
    assert batch.BatchRun((always,), 1, 0, 1.0, path, {}, None).grader_failures == 1  # type: ignore[arg-type]


def test_doctor_warns_about_hand_ins_other_users_can_read(tmp_path: Path, capsys, monkeypatch) -> None:
    from autograder import cli
    from autograder.sandbox import isolation

    hand_ins = Path(tempfile.mkdtemp(prefix="attnlab-doctor-", dir="/var/tmp"))
    try:
        hand_ins.chmod(0o755)
        monkeypatch.setattr(isolation, "choose", lambda required=None: isolation.Level.USER)
        assert cli.main(["doctor", str(hand_ins)]) == 0
        printed = capsys.readouterr().out
        assert "readable by other users" in printed and "--private-copies" in printed
        hand_ins.chmod(0o700)
        assert cli.main(["doctor", str(hand_ins)]) == 0
        assert "is closed to other users" in capsys.readouterr().out
    finally:
        shutil.rmtree(hand_ins, ignore_errors=True)


@pytest.mark.parametrize("where", ["reports/timing.json", "timing.json"])
def test_a_timing_report_that_is_a_link_is_left_out_and_named(tmp_path: Path, where: str) -> None:
    from autograder.handin import intake

    folder = tmp_path / "lab"
    shutil.copytree(kit.STUBS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / where).parent.mkdir(parents=True, exist_ok=True)
    (folder / where).symlink_to(kit.SOLUTIONS / "reports" / "timing.json")  # someone else's report
    taken = intake.take_in(folder, tmp_path / "work" / "copy")
    assert not (taken.folder / "reports" / "timing.json").exists()
    assert [(i.path, i.kind) for i in taken.ignored] == [(where, "link")]
