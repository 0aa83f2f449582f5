"""`attnlab gradescope`: the zip's scripts grade a submission in Gradescope's layout (simulated under a temporary
root) and always leave a valid results.json: the reference, the stubs, a buggy, a hostile, a missing and a
broken submission, and one made in a notebook."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from autograder.base import tasks, versions
from autograder.deliver.gradescope import build, runner
from autograder.deliver.release import stubs
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.handin import intake, submission
from autograder.report import gradescope as results
from tests import kit

LAB = tasks.LAB
TEST = {"name", "number", "score", "max_score", "status", "output", "output_format", "tags", "visibility", "extra_data"}
NEUTRAL = TEST - {"score", "max_score", "status"}  # a check Gradescope shows as neither passed nor failed
FEW = ("softmax", "mask")  # the steps graded in every case but the reference's (a whole lab takes longer)


def assert_valid_results(document: dict) -> None:
    """Gradescope's results.json: the keys and types its specification gives."""
    assert isinstance(document["score"], float) and isinstance(document["execution_time"], float)
    assert isinstance(document["output"], str) and document["output"] and document["output_format"] == results.MARKDOWN
    assert {"seed", "kit_version", "isolation"} <= set(document["extra_data"])
    assert document["stdout_visibility"] == "hidden"
    for test in document["tests"]:
        assert set(test) in (TEST, NEUTRAL), set(test) ^ TEST
        assert test.get("status", "passed") in {"passed", "failed"} and test["output_format"] == "md"
        assert test["visibility"] in {"visible", "after_published"} and test["tags"][0] in tasks.BY_ID
        assert 0 <= test.get("score", 0) <= test.get("max_score", 0)
        assert test["extra_data"]["id"].startswith(f"{test['tags'][0]}/") and test["extra_data"]["state"]
        assert test["name"] and "/" not in test["name"].split(":")[0]  # a title, not the id
    assert document["score"] == pytest.approx(sum(t.get("score", 0) for t in document["tests"]))


# -- fast: the pieces --------------------------------------------------------------------------------------------
def test_results_of_a_report_follow_gradescopes_format(reference_report) -> None:
    document = results.results(reference_report)
    assert_valid_results(document)
    assert document["score"] == document["max_score"] == tasks.total_points()
    hidden = {t["visibility"] for t in document["tests"] if "hidden" in t["name"].lower() or t["visibility"]}
    assert hidden == {"visible", "after_published"}
    assert document["extra_data"]["seed"] == reference_report.seed and "seed" not in document["output"].lower()
    assert_valid_results(results.failure("No lab files were found."))


def test_the_top_output_is_the_summary_of_what_a_student_may_see(stubs_report) -> None:
    document = results.results(stubs_report)
    output = document["output"]
    assert output.startswith("| step | earned | points | checks passed |\n|---|---:|---:|---:|\n| Softmax | 0 | 7 |")
    assert f"| **Total** | **0** | **{tasks.total_points(public_only=True):g}** |" in output
    assert "**Not implemented yet" in output and "- **KV cache**: KVCache.\\_\\_init\\_\\_," in output
    assert "decode\\_step" in output and "crossover\\_length" in output
    hidden = tasks.total_points() - tasks.total_points(public_only=True)
    assert f"Hidden checks worth {hidden:g} more points" in output
    assert str(stubs_report.seed) not in output, "the seed stays in extra_data"
    hidden_messages = {c.message for r in stubs_report.steps for c in r.checks if c.hidden}
    assert not any(markdown in output for markdown in map(results.markdown_text, hidden_messages) if markdown)
    names = [t["name"] for t in document["tests"]]
    assert names[0] == f"Softmax: {stubs_report.steps[0].checks[0].title}"
    ids = [t["extra_data"]["id"] for t in document["tests"]]
    assert len(set(ids)) == len(ids) and ids[0] == stubs_report.steps[0].checks[0].id


def test_the_summary_shows_failures_grouped_and_how_many_more(reference_report) -> None:
    softmax = reference_report.step("softmax")
    wrong = tuple(
        replace(c, passed=False, message=f"wrong <{i}>", mistake="softmax_wrong_axis" if i < 3 else None)
        for i, c in enumerate(softmax.checks)
    )
    broken = replace(reference_report, steps=(replace(softmax, checks=wrong),))
    output = results.results(broken)["output"]
    assert "**To fix, step by step:**" in output and "**Softmax** (0/7)" in output  # its public checks only
    assert "(the same for 2 more checks" in output and "each one listed below" in output
    assert "wrong \\<0\\>" in output and "wrong <0>" not in output


def test_a_zero_point_check_to_review_is_neither_passed_nor_failed() -> None:
    step = tasks.step("timing")
    note = CheckResult("timing", "test_review", "Things to review", 0, False, False, "identical repeats")
    worth = CheckResult("timing", "test_slope", "Slope", 2, False, False, "the slope is off")
    document = results.results(GradeReport("s", (StepResult(step, (note, worth)),), False, 1))
    review, failed = document["tests"]
    assert set(review) == NEUTRAL and results.TO_REVIEW in review["tags"] and review["extra_data"]["state"] == "note"
    assert failed["status"] == "failed" and failed["max_score"] == 2
    assert_valid_results(document)
    assert set(results.FIELDS) >= {results.state(c) for c in (note, worth, replace(worth, passed=True))}


def test_markdown_output_shows_messages_literally() -> None:
    shown = results.markdown_text("got [1, 2] <b>x</b> `code` *a* _b_ # c")
    assert "\\[" in shown and "\\<b\\>" in shown and "\\`code\\`" in shown and "\\*a\\*" in shown


def test_the_lab_files_are_found_at_the_top_in_a_folder_or_in_a_notebook(tmp_path: Path) -> None:
    top = tmp_path / "top"
    shutil.copytree(kit.STUBS, top)
    assert submission.locate(top).folder == top
    nested = tmp_path / "nested"
    shutil.copytree(kit.STUBS, nested / "__MACOSX" / "junk")
    shutil.copytree(kit.STUBS, nested / "alice" / LAB)
    (nested / "notes.txt").write_text("hi", encoding="utf-8")
    assert submission.locate(nested).folder == nested / "alice" / LAB
    book = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("%%writefile softmax.py\nimport numpy as np\n"),
            nbformat.v4.new_code_cell("%%writefile notes.py\nx = 1\n"),  # not a lab module: left out
            nbformat.v4.new_code_cell("print('hi')"),
        ]
    )
    (tmp_path / "book").mkdir()
    nbformat.write(book, tmp_path / "book" / "work.ipynb")
    found = submission.locate(tmp_path / "book")
    assert found.notebook_modules == (("softmax.py", "import numpy as np\n"),)
    prepared = intake.lay_out(found, tmp_path / "prepared", submission.data_files(kit.SOLUTIONS))
    assert sorted(p.name for p in prepared.iterdir()) == ["softmax.py", "toy_gpt_weights.npz"]
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "work.ipynb").write_text("{not json", encoding="utf-8")
    assert "could not be read" in submission.locate(tmp_path / "broken").problem
    (tmp_path / "empty").mkdir()
    assert not submission.locate(tmp_path / "empty").found
    assert submission.locate(tmp_path / "empty").problem.startswith("No lab files were found")


@pytest.mark.parametrize(
    "metadata, identity",
    [
        ({"id": 7, "users": [{"id": 42}, {"id": 5}]}, "42+5"),
        ({"id": 7, "users": []}, "7"),
        (None, "anonymous"),
    ],
)
def test_the_seed_identity_is_the_submitters(tmp_path: Path, metadata: dict | None, identity: str) -> None:
    path = tmp_path / "submission_metadata.json"
    if metadata is not None:
        path.write_text(json.dumps(metadata), encoding="utf-8")
    assert runner.identity(path) == "+".join(sorted(identity.split("+")))


def test_the_zip_holds_the_scripts_the_lock_the_wheel_and_the_kit(gradescope_zip: Path) -> None:
    with zipfile.ZipFile(gradescope_zip) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        lock = archive.read("requirements.txt").decode()
        settings = json.loads(archive.read(runner.SETTINGS))
    assert {"setup.sh", "run_autograder", "requirements.txt", runner.SETTINGS} <= names
    assert all(modes[script] & stat.S_IXUSR for script in ("setup.sh", "run_autograder"))
    assert lock == kit.KIT.lock.read_text(encoding="utf-8") and build.torch_pin(lock) == versions.TESTED_TORCH
    assert stat.S_IMODE(gradescope_zip.stat().st_mode) == 0o600, "the zip holds the course secret: its owner's only"
    assert sum(n.endswith(".whl") for n in names) == 1
    assert {f"kit/hidden/{LAB}/test_softmax_hidden.py", f"kit/solutions/{LAB}/softmax.py"} <= names
    assert settings["secret"] == "test-secret" and settings["limits"] == {"call_timeout_s": 5}
    for script in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", "-c", _read(gradescope_zip, script)]).returncode == 0


def _read(archive_path: Path, name: str) -> str:
    with zipfile.ZipFile(archive_path) as archive:
        return archive.read(name).decode()


# -- slow: run_autograder in Gradescope's layout -----------------------------------------------------------------
def hostile_softmax(root: Path) -> str:
    """A softmax module that tries to read the reference and the secret and to write the results file."""
    source = root / "source"
    return f"""
import numpy as np

stolen = None
for path in ({str(source / "kit" / "solutions" / LAB / "softmax.py")!r}, {str(source / runner.SETTINGS)!r}):
    try:
        stolen = open(path).read()
    except Exception:
        pass
try:
    open({str(root / "results" / "results.json")!r}, "w").write('{{"score": 1000.0, "tests": []}}')
except Exception:
    pass


def softmax(x, axis=-1):
    if stolen is not None:
        raise SystemExit("read " + stolen[:50])
    return np.zeros_like(np.asarray(x, dtype=float))
"""


def zeros_softmax() -> str:
    return "import numpy as np\n\n\ndef softmax(x, axis=-1):\n    return np.zeros_like(np.asarray(x, dtype=float))\n"


def gradescope_run(
    python: Path,
    zip_path: Path,
    root: Path,
    files: dict[str, str | bytes | Path],
    *,
    steps=FEW,
    stdout: list[str] | None = None,
) -> dict:
    """Lay out Gradescope's folders under ``root``, run ``run_autograder`` as Gradescope does; the results."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    settings = json.loads((root / "source" / runner.SETTINGS).read_text(encoding="utf-8"))
    settings["steps"] = list(steps) if steps else None
    (root / "source" / runner.SETTINGS).write_text(json.dumps(settings), encoding="utf-8")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for name, content in files.items():
        target = root / "submission" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copytree(content, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.write_bytes(content.encode() if isinstance(content, str) else content)
    (root / "submission_metadata.json").write_text(json.dumps({"id": 1, "users": [{"id": 99}]}), encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ATTNLAB_")}
    environment |= {"ATTNLAB_GRADESCOPE_ROOT": str(root), "ATTNLAB_PYTHON": str(python)}
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")], env=environment, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    if stdout is not None:
        stdout.append(done.stdout)
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700, "the source folder is open to other users"
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert_valid_results(document)
    return document


def few_points() -> float:
    return sum(tasks.step(s).points for s in FEW)


@pytest.mark.slow
def test_the_reference_scores_full_marks(student_python: Path, gradescope_zip: Path, tmp_path: Path) -> None:
    document = gradescope_run(student_python, gradescope_zip, tmp_path, {"lab": kit.SOLUTIONS}, steps=None)
    assert document["score"] == tasks.total_points() and len(document["tests"]) > 100
    assert {t["visibility"] for t in document["tests"]} == {"visible", "after_published"}
    assert document["extra_data"]["kit_version"] and document["extra_data"]["lab_files"] == "files"


@pytest.mark.slow
def test_stubs_buggy_and_notebook_submissions(student_python: Path, gradescope_zip: Path, tmp_path: Path) -> None:
    stub_files = {f"{LAB}/{p.name}": p.read_bytes() for p in kit.STUBS.iterdir() if p.is_file()}
    printed: list[str] = []
    stubs_document = gradescope_run(student_python, gradescope_zip, tmp_path / "stubs", stub_files, stdout=printed)
    assert stubs_document["score"] == 0 and "**Not implemented yet" in stubs_document["output"]
    # run_autograder's stdout (instructors only): the terminal's summary of every check, hidden ones included
    assert "Total" in printed[0] and "Hidden inputs seed" in printed[0] and "Not implemented yet" in printed[0]

    solution = (kit.SOLUTIONS / "softmax.py").read_text(encoding="utf-8")
    buggy = solution.replace("shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x")
    assert buggy != solution
    files = {p.name: p.read_bytes() for p in kit.SOLUTIONS.glob("*.py")} | {"softmax.py": buggy}
    document = gradescope_run(student_python, gradescope_zip, tmp_path / "buggy", files)
    assert tasks.step("mask").points < document["score"] < few_points()
    assert any("softmax_no_max_shift" in t["tags"] for t in document["tests"] if t["status"] == "failed")

    modules = (*FEW, "scaling")  # mask's module imports scaling's
    cells = [
        nbformat.v4.new_code_cell(f"%%writefile {m}.py\n" + (kit.SOLUTIONS / f"{m}.py").read_text()) for m in modules
    ]
    book = nbformat.writes(nbformat.v4.new_notebook(cells=cells))
    document = gradescope_run(student_python, gradescope_zip, tmp_path / "notebook", {"my work.ipynb": book})
    assert document["score"] == few_points() and document["extra_data"]["lab_files"] == "notebook"


@pytest.mark.slow
def test_hostile_missing_and_broken_submissions_still_give_results(
    student_python: Path, gradescope_zip: Path, tmp_path: Path
) -> None:
    honest = gradescope_run(student_python, gradescope_zip, tmp_path / "zeros", {"softmax.py": zeros_softmax()})
    root = tmp_path / "hostile"
    files = {"softmax.py": hostile_softmax(root), "mask.py": "import os\nos._exit(0)\n"}
    hostile = gradescope_run(student_python, gradescope_zip, root, files)
    assert hostile["score"] <= honest["score"] and hostile["score"] != 1000.0
    assert not any("read " in t["output"] for t in hostile["tests"]), "the hostile code read the source folder"

    for name, files in (("missing", {}), ("broken", {"lab.ipynb": "{not a notebook"}), ("other", {"a.txt": "x"})):
        document = gradescope_run(student_python, gradescope_zip, tmp_path / name, files)
        assert document["score"] == 0 and document["tests"] == [] and document["output"], name
    assert "could not be read" in document["output"] or "No lab files" in document["output"]


def test_the_runner_writes_results_when_the_zip_is_broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "source").mkdir()
    (tmp_path / "submission").mkdir()
    monkeypatch.setenv(runner.ENV_ROOT, str(tmp_path))
    assert runner.main() == 0
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert_valid_results(document)
    assert document["score"] == 0 and "The grader itself failed" in document["output"]
    assert stubs.BEGIN not in document["output"]
