"""The nbgrader course's parts without nbgrader runs: notebook, config, release check, course folder, grade cells."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from nbconvert.exporters import HTMLExporter  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.nbgraderformat import MetadataValidator  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, SaveCells  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from autograder import cli  # noqa: E402
from autograder.base import tasks  # noqa: E402
from autograder.deliver.nbgrader_course import cells, config, course, notebook, release, review, run  # noqa: E402
from autograder.deliver.nbgrader_course import private as private_folder  # noqa: E402
from autograder.deliver.nbgrader_course.preprocessors import (  # noqa: E402
    FeedbackClearHiddenTests,
    IsolatedKernelManager,
    OnlyKitCode,
    SaveKitAutoGrades,
)
from autograder.deliver.release import stubs  # noqa: E402
from autograder.grading.model import CheckResult, StepResult  # noqa: E402
from tests import kit  # noqa: E402


def grade_cells(book: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]


# -- the notebook ------------------------------------------------------------------------------
def test_committed_notebook_is_the_built_one() -> None:
    assert notebook.REPO_PATH.read_text(encoding="utf-8") == notebook.text(notebook.build()), (
        "run: python -m autograder.deliver.nbgrader_course.notebook"
    )


def test_one_locked_grade_cell_per_step_worth_the_registry_points() -> None:
    book = notebook.build()
    found = {c.metadata.nbgrader.grade_id: c for c in grade_cells(book)}
    assert list(found) == [notebook.GRADE_ID.format(step=s.id) for s in tasks.STEPS]
    for step in tasks.STEPS:
        cell = found[notebook.GRADE_ID.format(step=step.id)]
        points = step.points - tasks.review_points(step.id)  # the review cell holds the rest
        assert cell.metadata.nbgrader.points == points and cell.metadata.nbgrader.locked
        hidden = cell.source.index(notebook.HIDDEN_BEGIN), cell.source.index(notebook.HIDDEN_END)
        assert (
            "private = None" in cell.source[: hidden[0]] and f'grade("{step.id}", private)' in cell.source[hidden[1] :]
        )
        assert "import" not in cell.source.replace("from autograder.deliver.nbgrader_course.cells import grade", ""), (
            "a grade cell imports something else"
        )
    assert notebook.steps_of(book) == [s.id for s in tasks.STEPS]


def test_intro_per_step_links_its_handout_section() -> None:
    book = notebook.build()
    for step in tasks.STEPS:
        intro = next(c for c in book.cells if c.get("id") == f"{step.id}-intro")
        assert f"]({tasks.HANDOUT}#{step.id})" in intro.source and f"`{step.module}.py`" in intro.source
    anchors = (kit.ROOT / tasks.HANDOUT).read_text(encoding="utf-8")
    assert all(f'<a id="{step.anchor}"></a>' in anchors for step in tasks.STEPS)


def test_questions_are_manually_graded_answer_cells_after_their_step() -> None:
    book = notebook.build()
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in book.cells]
    for question in notebook.QUESTIONS:
        answer = book.cells[ids.index(f"answer_{question.id}")]
        assert answer.cell_type == "markdown" and answer.metadata.nbgrader.solution and answer.metadata.nbgrader.grade
        assert ids.index(f"answer_{question.id}") > ids.index(notebook.GRADE_ID.format(step=question.after))
    assert "timing_plots" in ids and ids.index("timing_plots") < ids.index("grade_timing")


def test_the_timing_step_has_a_manually_graded_review_cell_worth_its_device_points() -> None:
    book = notebook.build()
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in book.cells]
    cell = book.cells[ids.index("review_timing")]
    assert ids.index("review_timing") == ids.index("grade_timing") + 1
    assert cell.cell_type == "markdown" and cell.metadata.nbgrader == {
        "grade": False,
        "grade_id": "review_timing",
        "locked": True,
        "points": tasks.review_points("timing"),
        "schema_version": 3,
        "solution": False,
        "task": True,
    }
    assert tasks.review_points("timing") == 3
    MetadataValidator().validate_nb(book)  # nbgrader's own check of the cells' metadata
    graded = sum(c.metadata.nbgrader.points for c in book.cells if c.metadata.get("nbgrader", {}).get("points"))
    assert graded == tasks.total_points() + sum(q.points for q in notebook.QUESTIONS)  # no point counted twice
    assert [s for s in tasks.STEPS if review.has_review(s)] == [tasks.step("timing")]


def _check(name: str, points: float, *, passed: bool = True, message: str = "", is_review: bool = False) -> CheckResult:
    return CheckResult("timing", name, f"title of {name}", points, passed, False, message, review=is_review)


def _timing(*device: CheckResult) -> StepResult:
    """The timing step's result: every other check passed, and ``device`` for the device-specific ones."""
    return StepResult(tasks.step("timing"), (_check("test_report_schema", 9.0), *device))


CUDA_WHY = "a report made on cuda <b>[a GPU](http://x)</b>: these points wait for an instructor (0 until then)"


def test_the_review_payload_comes_from_the_typed_result() -> None:
    step = tasks.step("timing")
    names = list(tasks.REVIEW_CHECKS["timing"])
    verified = _timing(*(_check(n, tasks.REVIEW_CHECKS["timing"][n]) for n in names))
    data = review.payload(step, verified)
    assert data["score"] == 3 and data["review"] == [] and "Nothing waits for review: 3 of 3" in data["markdown"]
    assert review.grade_cell_earned(step, verified) == 9
    waiting = _timing(*(_check(n, 1.0, passed=False, message=CUDA_WHY, is_review=True) for n in names))
    data = review.payload(step, waiting)
    assert data["score"] is None and [c["id"] for c in data["review"]] == [f"timing/{n}" for n in names]
    assert all(c["why"] == CUDA_WHY for c in data["review"])  # the check's own message, as the report holds it
    shown = data["markdown"]
    assert all(f"**title of {n}**" in shown.replace("\\_", "_") for n in names), shown
    assert "<b>" not in shown and "](" not in shown  # a report's device name adds no HTML or link
    assert review.payload(step, None)["score"] == 0.0


def _executed(payload: dict | None) -> nbformat.NotebookNode:
    """The built notebook as autograde leaves it after running: the timing grade cell displayed ``payload``."""
    book = notebook.build()
    for cell in book.cells:
        if cell.get("id") == "grade-timing" and payload is not None:
            data = {review.MIME: payload, "text/markdown": payload["markdown"]}
            cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return book


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own, see nbgrader_config.py
@pytest.mark.parametrize("case", ["review", "verified", "not_run"])
def test_autograde_fills_the_review_cell_and_scores_it_or_leaves_it_to_the_instructor(
    tmp_path: Path, case: str
) -> None:
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db_url) as gradebook:
        gradebook.update_or_create_assignment(tasks.LAB)
        gradebook.update_or_create_student("ann")
    resources = {"nbgrader": {"db_url": db_url, "assignment": tasks.LAB, "notebook": tasks.LAB}}
    SaveCells().preprocess(notebook.build(), resources)
    with Gradebook(db_url) as gradebook:
        gradebook.add_submission(tasks.LAB, "ann")
    names = list(tasks.REVIEW_CHECKS["timing"])
    result = {
        "review": _timing(*(_check(n, 1.0, passed=False, message=CUDA_WHY, is_review=True) for n in names)),
        "verified": _timing(*(_check(n, tasks.REVIEW_CHECKS["timing"][n]) for n in names)),
        "not_run": None,
    }[case]
    payload = review.payload(tasks.step("timing"), result) if result is not None else None
    graded = {"nbgrader": {**resources["nbgrader"], "student": "ann"}}
    book, _ = SaveKitAutoGrades().preprocess(_executed(payload), graded)
    cell = next(c for c in book.cells if c.get("id") == "review-timing")
    with Gradebook(db_url) as gradebook:
        grade = gradebook.find_grade("review_timing", tasks.LAB, tasks.LAB, "ann")
        auto, manual, flagged = grade.auto_score, grade.manual_score, grade.needs_manual_grade
    if case == "review":  # formgrader lists it as needing a manual grade; 0 until an instructor scores it
        assert auto is None and manual is None and flagged
        assert all(f"title of {n}" in cell.source.replace("\\_", "_") for n in names) and "0 until then" in cell.source
    elif case == "verified":
        assert auto == 3 and not flagged and "Nothing waits for review" in cell.source
    else:  # the grade cell did not run: the released text stays, 0 points
        assert auto == 0 and not flagged and cell.source == review.before_grading(tasks.step("timing"))


# -- the config ----------------------------------------------------------------------------------
def load_config(tmp_path: Path, text: str):
    (tmp_path / "nbgrader_config.py").write_text(text, encoding="utf-8")
    return PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()


def test_config_fixes_each_nbgrader_trap(tmp_path: Path) -> None:
    c = load_config(tmp_path, config.config_text(deadline_s=300))
    assert c.Autograde.exclude_overwriting == {tasks.LAB: [f"{m}.py" for m in tasks.MODULES]}
    sanitizing = [p.__name__ for p in c.Autograde.sanitize_preprocessors][-3:]
    assert sanitizing == ["OnlyKitCode", "CheckCellMetadata", "SanitiseForViewers"]
    assert c.Autograde.autograde_preprocessors[0].__name__ == "GuardedExecute"
    assert c.Autograde.autograde_preprocessors[-1].__name__ == "SanitiseForViewers"
    assert any(issubclass(p, ClearHiddenTests) for p in c.GenerateFeedback.preprocessors)
    assert "--InteractiveShell.xmode=Minimal" in c.Execute.extra_arguments
    assert c.Execute.timeout == 300 + config.TIMEOUT_MARGIN_S
    assert c.GenerateAssignment.preprocessors[-1].__name__ == "StripSolutionFiles"
    assert isinstance(c.GenerateAssignment.post_convert_hook, release.ReleaseCheck)
    assert c.CourseDirectory.root == str(tmp_path)


def test_the_feedbacks_preprocessors_take_nbconverts_config_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    exporter_config = HTMLExporter().default_config  # sets NbConvertBase.display_data_priority for every preprocessor
    with caplog.at_level(logging.WARNING):
        ClearHiddenTests(config=exporter_config)
    assert "display_data_priority" in caplog.text, "nbgrader's own ClearHiddenTests warns (what the course avoids)"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        FeedbackClearHiddenTests(config=exporter_config)
    assert caplog.text == ""


def test_nbgraders_sqlalchemy_warnings_are_filtered_and_the_kernel_is_encrypted(tmp_path: Path) -> None:
    import warnings

    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_config(tmp_path, config.config_text(deadline_s=300))
        warnings.warn_explicit(
            "Object of type <SubmittedAssignment> not in session, add operation along 'Assignment.submissions' "
            "will not proceed",
            SAWarning,
            "api.py",
            1,
            module="nbgrader.api",
        )
        warnings.warn_explicit("another SQLAlchemy warning", SAWarning, "x.py", 1, module="nbgrader.api")
    assert [str(w.message) for w in caught] == ["another SQLAlchemy warning"], "only nbgrader's known one is filtered"
    zmq = pytest.importorskip("zmq")
    manager = IsolatedKernelManager(kernel_name="python3")
    if manager.has_trait("transport_encryption") and zmq.has("curve"):
        assert manager.transport_encryption == "auto"


def test_a_config_that_fails_to_load_stops_nbgrader(tmp_path: Path) -> None:
    broken = config.config_text(deadline_s=300).replace(
        "from autograder.deliver.nbgrader_course.release import", "from autograder.no_such_module import"
    )
    with pytest.raises(SystemExit, match="stopped before nbgrader falls back to its defaults"):
        load_config(tmp_path, broken)


# -- the release -----------------------------------------------------------------------------------
def test_strip_folder_releases_the_stubs_and_leaks_nothing(tmp_path: Path) -> None:
    for module in tasks.MODULES:
        (tmp_path / f"{module}.py").write_text(
            (kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8"), encoding="utf-8"
        )
    release.strip_folder(tmp_path)
    for module in tasks.MODULES:
        assert (tmp_path / f"{module}.py").read_text(encoding="utf-8") == stubs.make_stub(
            (kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8"), module
        )
    assert release.leaks(tmp_path, kit.SOLUTIONS, tmp_path / "private") == []


def test_strip_folder_refuses_malformed_markers_and_foreign_modules(tmp_path: Path) -> None:
    (tmp_path / "softmax.py").write_text("def f():\n    # BEGIN SOLUTION\n    return 1\n", encoding="utf-8")
    with pytest.raises(stubs.MarkerError, match="never closed"):
        release.strip_folder(tmp_path)
    (tmp_path / "softmax.py").unlink()
    (tmp_path / "helpers.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(stubs.MarkerError, match="not a lab step module"):
        release.strip_folder(tmp_path)


def test_release_check_removes_a_leaking_release_and_exits(tmp_path: Path) -> None:
    source, target = tmp_path / "source" / tasks.LAB, tmp_path / "release" / tasks.LAB
    source.mkdir(parents=True)
    target.mkdir(parents=True)
    solution = (kit.SOLUTIONS / "softmax.py").read_text(encoding="utf-8")
    (source / "softmax.py").write_text(solution, encoding="utf-8")
    (target / "softmax.py").write_text(solution, encoding="utf-8")  # released verbatim, as nbgrader does by default
    (target / notebook.NOTEBOOK).write_text(
        f'{{"source": "private = r\\"{tmp_path / "private"}\\""}}', encoding="utf-8"
    )
    problems = release.leaks(target, source, tmp_path / "private")
    assert any("is not the stub" in p for p in problems) and any("names the private folder" in p for p in problems)
    assert any(stubs.BEGIN in p for p in problems)
    with pytest.raises(SystemExit) as exited:
        release.ReleaseCheck(tmp_path, tmp_path / "private")(tasks.LAB, ".", [])
    assert exited.value.code == release.EXIT_LEAK and not target.exists()


# -- the course folder --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One course (id attn101, 2 s per call, 60 s per student), written once for the module's tests."""
    root = tmp_path_factory.mktemp("written") / "course"
    options = course.CourseOptions(folder=root, kit=kit.ROOT, course_id="attn101", call_timeout_s=2, deadline_s=60)
    course.write_course(options)
    return root


def test_course_folder_layout_and_private_folder(written: Path) -> None:
    root = written
    source, private = root / "source" / tasks.LAB, root / "private"
    assert sorted(p.name for p in source.glob("*.py")) == sorted(f"{m}.py" for m in tasks.MODULES)
    assert (source / "handouts" / "lab07_attention.md").is_file()
    book = nbformat.read(source / notebook.NOTEBOOK, as_version=4)
    assert all(f'private = r"{private}"' in c.source for c in grade_cells(book))
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert sorted(p.name for p in (private / private_folder.HIDDEN).glob("*.py")) == sorted(
        p.name for p in kit.HIDDEN.glob("*.py")
    )
    assert json.loads((private / private_folder.SETTINGS).read_text()) == {
        "deadline_s": 60,
        "limits": {"call_timeout_s": 2},
        "language": "en",
    }
    secret = (private / private_folder.SECRET).read_text()
    with pytest.raises(course.CourseError, match="--force"):
        course.write_course(course.CourseOptions(folder=root, kit=kit.ROOT))
    with pytest.raises(course.CourseError, match="keeps its course id"):
        course.write_course(course.CourseOptions(folder=root, kit=kit.ROOT, course_id="other", force=True))
    options = course.CourseOptions(folder=root, kit=kit.ROOT, call_timeout_s=2, deadline_s=60, force=True)
    course.write_course(options)  # the same settings: the module's other tests see the same course
    assert (private / private_folder.SECRET).read_text() == secret, "rewriting the course changed the secret"
    assert course.Stamp.read(root) == course.Stamp("attn101", str(root / "exchange")), "--force kept the id"


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mode for p in sorted(folder.rglob("*"))}


def test_the_course_writer_refuses_a_folder_it_did_not_make_and_writes_nothing(tmp_path: Path) -> None:
    hand_ins = tmp_path / "class folder"
    (hand_ins / "ann" / tasks.LAB).mkdir(parents=True)
    (hand_ins / "ann" / tasks.LAB / "softmax.py").write_text("# ann's\n", encoding="utf-8")
    before = _listing(hand_ins)
    for force in (False, True):
        with pytest.raises(course.CourseError, match="is not empty and is not a course") as refused:
            course.write_course(course.CourseOptions(folder=hand_ins, kit=kit.ROOT, force=force))
        assert str(refused.value).count(". ") == 0, "one sentence"
        assert _listing(hand_ins) == before
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(course.CourseError, match="is not a folder"):
        course.write_course(course.CourseOptions(folder=a_file, kit=kit.ROOT))
    with pytest.raises(course.CourseError, match="cannot be an nbgrader course id"):
        course.write_course(course.CourseOptions(folder=tmp_path / "new", kit=kit.ROOT, course_id="a+b"))
    assert not (tmp_path / "new").exists()


def test_the_command_refuses_with_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hand-ins" / "bo").mkdir(parents=True)
    args = cli.parser().parse_args(["nbgrader-course", str(tmp_path / "hand-ins"), "--kit", str(kit.ROOT), "--force"])
    assert args.run(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not empty and is not a course" in err, err
    assert sorted(p.name for p in (tmp_path / "hand-ins").iterdir()) == ["bo"]


def test_an_empty_folder_becomes_a_course(tmp_path: Path) -> None:
    """An empty folder is taken, with its own exchange elsewhere: the course folder is then the instructor's only."""
    root, elsewhere = tmp_path / "empty", tmp_path / "srv" / "exchange"
    root.mkdir()
    course.write_course(course.CourseOptions(folder=root, kit=kit.ROOT, course_id="attn102", exchange=elsewhere))
    assert course.Stamp.read(root) == course.Stamp("attn102", str(elsewhere))
    assert _mode(root) == 0o700 and (elsewhere / "attn102" / "inbound").is_dir()
    assert course.unreachable(elsewhere) == [p for p in elsewhere.parents if not p.stat().st_mode & 0o001]
    c = PyFileConfigLoader(course.CONFIG, path=str(root)).load_config()
    assert c.Exchange.root == str(elsewhere)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_course_is_closed_to_others_but_its_exchange_has_nbgraders_modes(written: Path) -> None:
    root = written
    assert _mode(root) == 0o711, "students pass through to the exchange, never list the course"
    for top in ("source", "private"):
        for path in [root / top, *(root / top).rglob("*")]:
            assert _mode(path) == (0o700 if path.is_dir() else 0o600), path
    for name in (*course.PRIVATE_FOLDERS, course.GRADEBOOK, course.NBGRADER_LOG, course.CONFIG, course.STAMP):
        assert _mode(root / name) & 0o077 == 0, name
    assert _mode(root / course.STUDENTS_CONFIG) == 0o644
    exchange = root / "exchange"
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777
    modes = {name: _mode(exchange / "attn101" / name) for name in ("", "inbound", "outbound", "feedback")}
    assert modes == {"": 0o755, "inbound": 0o2733, "outbound": 0o755, "feedback": 0o711}
    with Gradebook(f"sqlite:///{root / course.GRADEBOOK}", "attn101") as gradebook:
        assert gradebook.check_course("attn101").id == "attn101"


def test_the_config_names_the_course_the_exchange_and_the_kits_export(written: Path) -> None:
    root = written
    c = PyFileConfigLoader(course.CONFIG, path=str(root)).load_config()
    assert c.CourseDirectory.course_id == "attn101" and c.Exchange.root == str(root / "exchange")
    assert c.ExportApp.plugin_class.__name__ == "KitCsvExport"
    assert c.Autograde.autograde_preprocessors[-1].__name__ == "SanitiseForViewers"
    assert c.HTMLExporter.sanitize_html is True
    students = PyFileConfigLoader(course.STUDENTS_CONFIG, path=str(root)).load_config()
    assert students.CourseDirectory.course_id == "attn101" and students.Exchange.root == str(root / "exchange")


def test_why_nbgrader_did_not_autograde_a_hand_in(tmp_path: Path) -> None:
    from autograder.deliver.nbgrader_course import export

    names = [tasks.LAB]
    assert export.why_not_autograded(tmp_path, names) == export.NO_NOTEBOOK
    (tmp_path / "my lab.ipynb").write_text("{}", encoding="utf-8")
    assert export.why_not_autograded(tmp_path, names) == export.RENAMED.format(
        names="my lab.ipynb", expected=f"{tasks.LAB}.ipynb"
    )
    (tmp_path / f"{tasks.LAB}.ipynb").write_text("{not json", encoding="utf-8")
    assert export.why_not_autograded(tmp_path, names).startswith(f"{tasks.LAB}.ipynb cannot be read as a notebook")


def test_attnlab_has_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.parser()
    args = parser.parse_args(["nbgrader-course", str(tmp_path / "c"), "--kit", str(kit.ROOT), "--timeout", "3"])
    assert args.run(args) == 0
    assert "nbgrader generate_assignment" in capsys.readouterr().out
    settings = json.loads((tmp_path / "c" / "private" / private_folder.SETTINGS).read_text())
    assert settings["limits"] == {"call_timeout_s": 3.0}
    with pytest.raises(SystemExit) as refused:  # a --kit that is no kit is refused when it is parsed
        parser.parse_args(["nbgrader-course", str(tmp_path / "d"), "--kit", str(tmp_path)])
    assert refused.value.code == 2 and "it has no solutions" in capsys.readouterr().err


def test_settings_name_only_known_limits() -> None:
    assert run.limits_from({"call_timeout_s": 1.5}).call_timeout_s == 1.5
    with pytest.raises(ValueError, match="unknown sandbox limits"):
        run.limits_from({"call_timeout": 1.5})


# -- the cells, in this process as in a kernel ---------------------------------------------------
def test_only_kit_code_runs_with_the_kits_metadata(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db_url) as gradebook:
        gradebook.update_or_create_assignment(tasks.LAB)
    resources = {"nbgrader": {"db_url": db_url, "assignment": tasks.LAB, "notebook": tasks.LAB}}
    SaveCells().preprocess(notebook.build(), resources)  # what generate_assignment records
    book = notebook.build()
    book.cells.insert(0, nbformat.v4.new_code_cell("print('```')\nimport os"))
    book.cells.insert(
        1, nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "grade_made_up", "locked": True}})
    )
    skipped = next(c for c in book.cells if c.get("id") == "grade-softmax")
    skipped.metadata["tags"] = ["skip-execution"]
    skipped.metadata["nbgrader"]["points"] = 99
    before = [c.source for c in book.cells]
    result, _ = OnlyKitCode().preprocess(book, resources)
    assert [c.cell_type for c in result.cells[:2]] == ["markdown", "markdown"]
    assert "````python\nprint('```')\nimport os\n````" in result.cells[0].source
    assert [c.source for c in result.cells[2:]] == before[2:]  # the kit's cells are untouched
    assert sum(c.cell_type == "code" for c in result.cells) == len(tasks.STEPS) + 1  # grade cells and the plots cell
    assert "tags" not in skipped.metadata and skipped.metadata.nbgrader.points == tasks.step("softmax").points


def test_public_grade_returns_a_float_and_prints_to_stdout_only(capsys: pytest.CaptureFixture[str]) -> None:
    score = cells.grade("softmax", folder=kit.SOLUTIONS)
    out, err = capsys.readouterr()
    step = tasks.step("softmax")
    assert type(score) is float and score == step.public_points
    assert err == "" and out.startswith(
        f"Softmax: {step.public_points:g} of {step.public_points:g} points (public checks)"
    )
    assert cells.HIDDEN_LATER[1].format(points=step.hidden_points) in out


IMPORT_MARK = 61.25  # an import timeout nobody else uses: it finds this test's sandbox children


def test_a_run_past_its_deadline_scores_zero_and_leaves_no_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    submission = tmp_path / "slow"
    submission.mkdir()
    (submission / "softmax.py").write_text("while True:\n    pass\n", encoding="utf-8")
    course.write_course(
        course.CourseOptions(folder=tmp_path / "course", kit=kit.ROOT, import_timeout_s=IMPORT_MARK, deadline_s=6)
    )
    private = tmp_path / "course" / "private"
    score = cells.grade("softmax", str(private), folder=submission)
    assert score == 0.0 and cells.NOT_FINISHED.format(seconds=6) in capsys.readouterr().out
    assert not _sandbox_children(f'"import_timeout_s": {IMPORT_MARK}'), "a sandbox child outlived its grader"


def test_a_missing_private_folder_is_an_error_that_does_not_name_it(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as raised:
        cells.grade("softmax", str(tmp_path / "nowhere"), folder=kit.STUBS)
    assert str(tmp_path) not in str(raised.value) and "attnlab nbgrader-course" in str(raised.value)


def _sandbox_children(mark: str) -> set[int]:
    """Running sandbox children whose command line (the child module and its limits) holds ``mark``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
                if b"autograder.sandbox.child" in command and mark.encode() in command:
                    found.add(int(entry.name))
            except OSError:
                pass
    return found


# -- what students see -------------------------------------------------------------------------
SEED = 918273645


def test_no_student_facing_rendering_shows_the_hidden_inputs_seed() -> None:
    """The seed of the hidden inputs is a grader internal: the instructor's terminal shows it, no page, cell output
    or Gradescope field a student sees does (nbgrader's feedback, grade-batch's feedback page, Gradescope)."""
    from autograder.grading.model import GradeReport
    from autograder.report import gradescope as results
    from autograder.report import render_html, render_terminal

    step = tasks.step("softmax")
    result = StepResult(step, (CheckResult("softmax", "test_rows", "rows sum to 1", step.points, False, True, "no"),))
    report = GradeReport(submission="ann", steps=(result,), public_only=False, seed=SEED)
    assert str(SEED) in render_terminal.text(report), "the instructor's terminal shows it (the test can fail)"
    grade_cell = cells._feedback(step, report, result, 0.0, "", public_only=False)
    document = results.results(report)
    student_visible = [json.dumps({k: v for k, v in document.items() if k != "extra_data"})]
    assert document["extra_data"]["seed"] == SEED  # Gradescope shows extra_data to no student
    for shown in (grade_cell, render_html.page(report), *student_visible):
        assert str(SEED) not in shown and "seed" not in shown.lower(), shown[:2000]


def test_collect_and_autograde_refuse_a_student_id_that_is_not_plain(tmp_path: Path) -> None:
    """``nbgrader submit --student ID`` lets a student choose the id, and formgrader writes it into its page
    unescaped: collect leaves such a submission in the exchange, autograde refuses it."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.deliver.nbgrader_course.exchange import KitCollect

    inbound = tmp_path / "exchange" / "attn101" / "inbound"
    for student in ("ann", '"><img src=x onerror=alert(1)>'):
        (inbound / f"{student}+{tasks.LAB}+2026-12-01 10:00:00.000000 UTC+abc").mkdir(parents=True)
    coursedir = CourseDirectory(root=str(tmp_path), course_id="attn101", assignment_id=tasks.LAB)
    collect = KitCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(tmp_path / "exchange"))
    collect.init_src()
    assert [record["username"] for record in collect.src_records] == ["ann"]
    with pytest.raises(ValueError, match="not a plain id"):
        OnlyKitCode().preprocess(nbformat.v4.new_notebook(), {"nbgrader": {"student": "<b>x</b>"}})


def test_a_grader_failure_in_a_grade_cell_does_not_name_the_private_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autograder.deliver.warm import client

    private = tmp_path / "course" / "private"
    private.mkdir(parents=True)
    (private / private_folder.SETTINGS).write_text("{}", encoding="utf-8")
    failed = client.GraderFailed(f"FileNotFoundError: {private}/hidden/test_softmax.py")
    monkeypatch.setattr(cells.client, "grade", lambda *args, **kwargs: failed)
    assert cells.grade("softmax", str(private), folder=tmp_path) == 0.0
    shown = capsys.readouterr().out
    assert "grader itself failed" in shown and str(private) not in shown and "test_softmax.py" in shown
