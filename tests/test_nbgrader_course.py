"""End to end with real nbgrader: course, release, autograde, feedback, CSV export; no mocks.

One course is built in a temporary folder with small sandbox timeouts, and
ten students are graded in one ``nbgrader autograde`` run: the reference
(full marks), the untouched release (0), a buggy one (partial, the mistake
named in the feedback), six that try to cheat or break the grader, and one
whose timing report comes from a GPU the grader lacks (its device points wait
in the review cell). To keep CI short, the last eight keep only a few grade
cells in their notebooks; the kit then grades only those steps (a deleted
grade cell scores 0).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")
from nbgrader.api import Gradebook  # noqa: E402

from autograder.base import tasks  # noqa: E402
from autograder.deliver.nbgrader_course import cells, notebook, run  # noqa: E402
from autograder.deliver.nbgrader_course import course as course_writer  # noqa: E402
from autograder.deliver.release import stubs  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402
from autograder.grading import engine  # noqa: E402
from autograder.judge.diagnose.catalog import MISTAKES  # noqa: E402
from tests import kit  # noqa: E402
from tests.test_nbgrader_kernel import TRANSFORMER_CELL  # noqa: E402
from tests.test_step_timing import cuda_report  # noqa: E402

pytestmark = pytest.mark.slow
LAB = tasks.LAB
NBGRADER = [sys.executable, "-m", "nbgrader"]
TOTAL = tasks.total_points()
POINTS = {step.id: step.points for step in tasks.STEPS}

FAKE_CELLS = "def grade(step_id, private=None):\n    return 10.0\n"  # a fake autograder/ package in the submission
PATCH_TESTING = (
    "import numpy.testing\nnumpy.testing.assert_allclose = lambda *args, **kwargs: "
    "None\nnumpy.testing.assert_array_equal = lambda *args, **kwargs: None\n"
)


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run one nbgrader command in the course folder."""
    done = subprocess.run([*NBGRADER, *args], cwd=course, capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, (
            f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
        )
    return done


def submit(
    course: Path,
    student: str,
    *,
    modules: Path | None = None,
    steps: tuple[str, ...] | None = None,
    first_cell: str | None = None,
    tag: str | None = None,
) -> Path:
    """``submitted/<student>/<lab>``: the release, with ``modules``' files over it and a trimmed or extended
    notebook."""
    folder = course / "submitted" / student / LAB
    shutil.copytree(course / "release" / LAB, folder)
    if modules is not None:
        for path in modules.iterdir():
            target = folder / path.name
            if path.is_dir() and path.name != "__pycache__":
                shutil.copytree(path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            elif path.suffix == ".py":
                shutil.copyfile(path, target)
    book = nbformat.read(folder / notebook.NOTEBOOK, as_version=4)
    if steps is not None:
        keep = {notebook.GRADE_ID.format(step=s) for s in steps}
        book.cells = [
            c
            for c in book.cells
            if not c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("grade_")
            or c.metadata["nbgrader"]["grade_id"] in keep
        ]
    if first_cell is not None:
        book.cells.insert(0, nbformat.v4.new_code_cell(first_cell))
    for cell in book.cells if tag else ():
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata["tags"] = [tag]
    nbformat.write(book, folder / notebook.NOTEBOOK)
    return folder


def tamper_with_grade_cell(folder: Path, step: str) -> None:
    """The student's notebook with the grade cell of ``step`` rewritten to return full points."""
    book = nbformat.read(folder / notebook.NOTEBOOK, as_version=4)
    for cell in book.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == notebook.GRADE_ID.format(step=step):
            cell.source = f"{POINTS[step]:g}.0"
    nbformat.write(book, folder / notebook.NOTEBOOK)


def variant(tmp: Path, name: str, module: str, edit: Callable[[str], str]) -> Path:
    """A copy of the reference (without its timing report) with ``module``.py rewritten by ``edit``."""
    folder = tmp / name
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    path = folder / f"{module}.py"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def hang_in_rope(text: str) -> str:
    """positions.py whose ``rope`` loops forever (the other functions still work)."""
    begin = text.index(stubs.BEGIN, text.index("def rope("))
    return text[:begin] + "while True:  # hangs\n        pass\n    " + text[begin:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The course after generate_assignment, autograde of every student, generate_feedback and export."""
    tmp = tmp_path_factory.mktemp("nbgrader")
    root = tmp / "course"
    course_writer.write_course(
        course_writer.CourseOptions(
            folder=root, kit=kit.ROOT, call_timeout_s=5.0, import_timeout_s=30.0, deadline_s=400.0
        )
    )
    logs = [nbgrader(root, "generate_assignment", LAB)]

    buggy = kit.Variant(
        "softmax_no_shift",
        "softmax",
        "softmax",
        "shifted = x - np.max(x, axis=axis, keepdims=True)",
        "shifted = x",
        "softmax_no_max_shift",
    ).build(tmp)
    stub_patch = tmp / "patch"
    stub_patch.mkdir()
    (stub_patch / "softmax.py").write_text(
        PATCH_TESTING + (kit.STUBS / "softmax.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    exits = variant(tmp, "exits", "costs", lambda text: text + "\nimport os\n\nos._exit(0)  # at import\n")
    hangs = variant(tmp, "hangs", "positions", hang_in_rope)
    fake_kit = tmp / "fake_kit"
    (fake_kit / "autograder" / "deliver" / "nbgrader_course").mkdir(parents=True)
    for name in ("__init__.py", "deliver/__init__.py", "deliver/nbgrader_course/__init__.py"):
        (fake_kit / "autograder" / name).write_text("", encoding="utf-8")
    (fake_kit / "autograder" / "deliver" / "nbgrader_course" / "cells.py").write_text(FAKE_CELLS, encoding="utf-8")
    submit(root, "reference", modules=kit.SOLUTIONS)
    submit(root, "release")
    submit(root, "buggy", modules=buggy, steps=("softmax", "costs"))
    submit(root, "patches_testing", modules=stub_patch, steps=("softmax",))
    transformer = submit(root, "transformer", steps=("softmax", "mask"), first_cell=TRANSFORMER_CELL)
    tamper_with_grade_cell(transformer, "mask")
    submit(root, "exits", modules=exits, steps=("costs", "softmax"))
    submit(root, "hangs", modules=hangs, steps=("positions", "softmax"))
    submit(root, "shadows_kit", modules=fake_kit, steps=("softmax",))
    submit(root, "skips", steps=("softmax",), tag="skip-execution")
    gpu = submit(root, "gpu_report", modules=kit.SOLUTIONS, steps=("timing",))
    data = json.loads((gpu / "reports" / "timing.json").read_text(encoding="utf-8"))
    cuda_report(data)  # measured on a GPU this grader lacks: its device points wait for review
    (gpu / "reports" / "timing.json").write_text(json.dumps(data), encoding="utf-8")

    autograde = nbgrader(root, "autograde", LAB)
    logs += [autograde, nbgrader(root, "generate_feedback", LAB), nbgrader(root, "export")]
    with open(root / "grades.csv", newline="", encoding="utf-8") as handle:
        scores = {row["student_id"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(handle)}
    yield {
        "root": root,
        "scores": scores,
        "autograde_log": autograde.stdout + autograde.stderr,
        "log": "\n".join(done.stdout + done.stderr for done in logs),
    }
    client.stop(cells.HANDLER, root / "private")  # else it stops itself when idle


def feedback(graded: dict, student: str) -> str:
    """The student's feedback page as plain text (tags dropped, whitespace collapsed)."""
    html = (graded["root"] / "feedback" / student / LAB / f"{LAB}.html").read_text(encoding="utf-8")
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def cell_outputs(graded: dict, student: str) -> dict[str, list]:
    book = nbformat.read(graded["root"] / "autograded" / student / LAB / notebook.NOTEBOOK, as_version=4)
    return {c.metadata.get("nbgrader", {}).get("grade_id", ""): c.get("outputs", []) for c in book.cells}


def test_release_holds_no_solution_and_no_hidden_test(graded: dict) -> None:
    release = graded["root"] / "release" / LAB
    for module in tasks.MODULES:
        solution = (kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
        released = (release / f"{module}.py").read_text(encoding="utf-8")
        assert released == stubs.make_stub(solution, module), f"{module}.py is not released as its stub"
        assert not set(stubs.solution_lines(solution)) & {line.strip() for line in released.splitlines()}
    text = (release / notebook.NOTEBOOK).read_text(encoding="utf-8")
    for leak in ("HIDDEN TESTS", "private = r", str(graded["root"] / "private"), "Model answer"):
        assert leak not in text, f"the released notebook holds {leak!r}"
    for question in notebook.QUESTIONS:
        assert question.model_answer[:40] not in text
    assert not (release.parent / "private").exists() and not (release / "private").exists()


def attnlab_grade(graded: dict, student: str, steps: tuple[str, ...]) -> float:
    """The kit's own score of a submitted folder, as the grade cells' grader process computes it."""
    request = {
        "folder": str(graded["root"] / "submitted" / student / LAB),
        "steps": list(steps),
        "private": str(graded["root"] / "private"),
        "student": student,
    }
    return engine.grade(run.options(request)).earned


def test_every_students_exported_score(graded: dict) -> None:
    manual = sum(q.points for q in notebook.QUESTIONS)
    expected = {
        "reference": TOTAL,
        "release": 0.0,
        "patches_testing": 0.0,  # stubs: patching numpy.testing in the sandbox changes nothing
        "transformer": 0.0,  # stubs: the added cell never runs
        "shadows_kit": 0.0,  # stubs: its own autograder/ package is not on the kernel's path
        "skips": 0.0,  # stubs: nbclient would skip a grade cell tagged skip-execution (no output: full points)
        "exits": POINTS["softmax"],  # costs.py exits at import: costs scores 0, softmax is untouched
        "gpu_report": POINTS["timing"] - tasks.review_points("timing"),  # review: 0 until an instructor scores it
    }
    for student, steps in (("buggy", ("softmax", "costs")), ("hangs", ("positions", "softmax"))):
        expected[student] = attnlab_grade(
            graded, student, steps
        )  # the same submission, seed and limits without nbgrader
    assert POINTS["costs"] < expected["buggy"] < POINTS["costs"] + POINTS["softmax"]  # softmax: partial
    assert POINTS["softmax"] < expected["hangs"] < POINTS["softmax"] + POINTS["positions"]  # rope's checks only
    scores = graded["scores"]
    assert set(scores) == set(expected)
    for student, score in expected.items():
        assert scores[student] == (score, TOTAL + manual), student


def review_cell(graded: dict, student: str) -> tuple[str, float | None, bool]:
    """The autograded review cell of the timing step: its text (sanitised HTML, as every viewer gets it), its
    automatic score, whether it needs a manual grade."""
    book = nbformat.read(graded["root"] / "autograded" / student / LAB / notebook.NOTEBOOK, as_version=4)
    cell = next(c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "review_timing")
    with Gradebook(f"sqlite:///{graded['root'] / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("review_timing", LAB, LAB, student)
        return cell.source, grade.auto_score, grade.needs_manual_grade


def test_device_points_wait_in_a_manually_graded_cell_that_names_each_check_and_why(graded: dict) -> None:
    """A CUDA report on a CPU grader: formgrader lists the review cell as needing a manual grade (0 until then),
    and the cell names each device-specific check with the grader's reason; a verified report scores it."""
    source, auto, manual = review_cell(graded, "gpu_report")
    assert auto is None and manual, (auto, manual)
    listed = re.findall(r"<li>(.*?)</li>", source)  # the cell as viewers get it: its markdown as sanitised HTML
    assert len(listed) == len(tasks.REVIEW_CHECKS["timing"]), source
    assert all("cuda" in line and "0 until then" in line for line in listed), source
    assert "For review" in source and "For review" in feedback(graded, "gpu_report")
    source, auto, manual = review_cell(graded, "reference")
    assert auto == tasks.review_points("timing") and not manual and "Nothing waits for review" in source


def test_only_a_changed_grade_cell_is_reported_as_changed(graded: dict) -> None:
    """No "checksum has changed" for the 14 grade cells released without their hidden tests, per student; the one
    grade cell a student rewrote is still reported (and restored: it scores 0, see the exported scores)."""
    warnings = [line for line in graded["autograde_log"].splitlines() if "Attribute 'checksum'" in line]
    assert len(warnings) == 1 and notebook.GRADE_ID.format(step="mask") in warnings[0], warnings


def printed_and_value(outputs: list) -> tuple[str, str]:
    """A grade cell's outputs: what it printed (its stdout, however many chunks the kernel sent it in) and the
    value it ended with. Nothing may come on stderr (nbgrader scores a cell with stderr output 0)."""
    kinds = [o.output_type for o in outputs]
    assert kinds[-1:] == ["execute_result"] and set(kinds[:-1]) <= {"stream", "display_data"}, kinds
    streams = [o for o in outputs[:-1] if o.output_type == "stream"]  # display_data: pictures, the review payload
    assert all(o.name == "stdout" for o in streams), [o.name for o in streams]
    return "".join(o.text for o in streams), outputs[-1].data["text/plain"]


def test_a_grade_cells_stdout_is_read_whole_in_however_many_chunks() -> None:
    chunks = [nbformat.v4.new_output("stream", name="stdout", text=part) for part in ("Softmax: 10 of", " 10 points\n")]
    result = nbformat.v4.new_output("execute_result", data={"text/plain": "10.0"}, execution_count=1)
    assert printed_and_value([*chunks, result]) == ("Softmax: 10 of 10 points\n", "10.0")
    with pytest.raises(AssertionError):
        printed_and_value([nbformat.v4.new_output("stream", name="stderr", text="oops"), result])


def test_grade_cells_print_to_stdout_and_end_with_a_float(graded: dict) -> None:
    for step in tasks.STEPS:
        outputs = cell_outputs(graded, "reference")[notebook.GRADE_ID.format(step=step.id)]
        printed, value = printed_and_value(outputs)
        points = step.points - tasks.review_points(step.id)  # the timing step's device points: its review cell
        assert printed.startswith(f"{step.title}: {points:g} of {points:g} points"), printed
        assert value == repr(float(points))


# What nbgrader may warn about in this course, each caused by a student's own doing: the added code cell that is
# not run, and the grade cell a student rewrote (restored, and reported as changed).
EXPECTED_WARNINGS = ("a code cell added by the student", "Attribute 'checksum'")


def test_nbgrader_warns_only_about_what_students_did(graded: dict) -> None:
    """No warning of the kit's or of nbgrader's own making in any command of a course of ten students (nbgrader
    0.9 with SQLAlchemy 2 printed 7 for two students: its SAWarnings, ``display_data_priority`` not recognised by
    ClearHiddenTests, images without alternative text in the feedback, an unencrypted kernel channel)."""
    lines = graded["log"].splitlines()
    warnings = [line for line in lines if re.search(r"WARNING|Warning\b|warn\(", line)]
    unexpected = [line for line in warnings if not any(expected in line for expected in EXPECTED_WARNINGS)]
    assert not unexpected, "\n".join(unexpected)
    assert len(warnings) == len(EXPECTED_WARNINGS), warnings


def test_the_release_holds_every_handout_page_and_is_readable_by_everyone(graded: dict) -> None:
    release = graded["root"] / "release" / LAB
    handouts = {p.name for p in (release / "handouts").iterdir()}
    for page in kit.KIT.handout.parent.glob(f"{LAB}*.md"):
        assert {page.name, page.name.removesuffix(".md") + ".html"} <= handouts, handouts
    assert (graded["root"] / "source" / LAB / "handouts" / f"{LAB}.html").is_file()
    assert f"handouts/{LAB}.html" in (release / "README.md").read_text(encoding="utf-8")
    for path in [release, *release.rglob("*")]:
        assert path.stat().st_mode & 0o004, f"{path} is not readable by every user"
        if path.is_dir():
            assert path.stat().st_mode & 0o001, f"{path} cannot be entered by every user"


def test_feedback_names_the_mistake_and_never_shows_hidden_tests(graded: dict) -> None:
    private = str(graded["root"] / "private")
    for page in sorted((graded["root"] / "feedback").rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in html and private not in html and "private = r" not in html, page
    assert MISTAKES["softmax_no_max_shift"].text in feedback(graded, "buggy")


def test_added_code_cell_never_ran(graded: dict) -> None:
    text = feedback(graded, "transformer")
    assert "not run while grading" in text and "input_transformers_post" in text
    for step in ("softmax", "mask"):
        outputs = cell_outputs(graded, "transformer")[notebook.GRADE_ID.format(step=step)]
        assert outputs[-1].data["text/plain"] == "0.0"


def test_faults_are_explicit_zeros_with_reasons(graded: dict) -> None:
    assert "ended the grading process with exit code 0" in feedback(graded, "exits")
    assert "did not return within 5 s" in feedback(graded, "hangs")
    assert "numpy.testing" not in json.dumps(
        cell_outputs(graded, "patches_testing")
    )  # nothing of the patch reached the kernel


def test_malformed_marker_or_leak_fails_the_release_loudly(tmp_path: Path) -> None:
    root = tmp_path / "course"
    course_writer.write_course(course_writer.CourseOptions(folder=root, kit=kit.ROOT))
    source = root / "source" / LAB / "mask.py"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("# END SOLUTION", "# END SOLUTON", 1), encoding="utf-8")
    done = nbgrader(root, "generate_assignment", LAB, check=False)
    assert done.returncode != 0 and "malformed marker" in done.stdout + done.stderr
    assert not (root / "release" / LAB / "mask.py").exists()

    source.write_text(text, encoding="utf-8")
    handout = root / "source" / LAB / "handouts" / "lab07_attention.md"
    handout.write_text(handout.read_text(encoding="utf-8") + "\n### BEGIN HIDDEN TESTS\n", encoding="utf-8")
    done = nbgrader(root, "generate_assignment", LAB, "--force", check=False)
    assert done.returncode == 1 and "the release leaks" in done.stderr  # nbgrader would have swallowed an exception
    assert not (root / "release" / LAB).exists()
