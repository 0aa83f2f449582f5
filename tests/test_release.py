"""`attnlab release`: the student bundle holds what a student needs and nothing of the instructor's, and a
fresh install of its wheel grades the untouched stubs 0 and the reference full public marks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.base.kit import PACKAGE
from autograder.cli import INSTRUCTOR_COMMANDS, STUDENT_COMMANDS
from autograder.deliver.release import contents, leaks, stubs
from tests import kit
from tests.test_import_graph import import_graph

LAB = tasks.LAB


def test_the_bundle_is_laid_out_as_the_handout_says(student_bundle) -> None:
    lab = student_bundle.lab
    assert lab.name == LAB and (student_bundle.root / "README.md").is_file() and student_bundle.wheel.is_file()
    for module in tasks.MODULES:
        solution = (kit.SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
        assert (lab / f"{module}.py").read_text(encoding="utf-8") == stubs.make_stub(solution, module)
    assert (lab / "toy_gpt_weights.npz").read_bytes() == (kit.SOLUTIONS / "toy_gpt_weights.npz").read_bytes()
    assert (lab / tasks.HANDOUT).is_file() and (lab / "handouts" / f"{LAB}.html").is_file()
    assert sorted(p.name for p in (lab / "handouts" / "figures").iterdir()) == sorted(
        p.name for p in kit.KIT.figures.iterdir()
    )
    # "Your work goes into the lab folder `lab07_attention/` ..., with this handout in its `handouts/` folder"
    handout = " ".join((lab / tasks.HANDOUT).read_text(encoding="utf-8").split())
    assert f"Your work goes into the lab folder `{LAB}/`" in handout and "in its `handouts/` folder" in handout
    assert "assignments/" not in handout.split("## Before you start")[1].split("##")[0]
    readme = (student_bundle.root / "README.md").read_text(encoding="utf-8")
    assert f"\npython3 -m pip install {student_bundle.wheel.name}\n" in readme
    assert "\nattnlab grade\n" in readme


def test_the_student_notebook_has_no_hidden_tests_and_no_model_answers(student_bundle) -> None:
    from autograder.deliver.nbgrader_course import notebook

    text = (student_bundle.lab / notebook.NOTEBOOK).read_text(encoding="utf-8")
    for leak in ("HIDDEN TESTS", "private = r", notebook.PRIVATE_PLACEHOLDER, "Model answer"):
        assert leak not in text
    for question in notebook.QUESTIONS:
        assert question.model_answer[:40] not in text
    book = json.loads(text)
    grade_cells = [
        c for c in book["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id", "").startswith("grade_")
    ]
    assert len(grade_cells) == len(tasks.STEPS) and all("private = None" in "".join(c["source"]) for c in grade_cells)


def test_the_wheel_holds_the_public_engine_only(student_bundle) -> None:
    names = set(zipfile.ZipFile(student_bundle.wheel).namelist())
    engine = {n.removeprefix("autograder/") for n in names if n.startswith("autograder/")}
    expected = {p.relative_to(PACKAGE).as_posix() for p in contents.public_files()}
    assert engine == expected
    for left_out in (
        "deliver/release/stubs.py",
        "deliver/nbgrader_course/notebook.py",
        "cli/release.py",
        "deliver/release/leaks.py",
    ):
        assert left_out not in engine
    assert {
        f"grading/graders/{LAB}/test_softmax.py",
        "data/snapshots/core.npz",
        "deliver/gradescope/runner.py",
    } <= engine
    assert not any(n.endswith("_hidden.py") for n in engine)


def test_the_public_engine_imports_nothing_it_leaves_out() -> None:
    graph = import_graph(kit.ROOT)
    public = {name for name in graph if contents.is_public(_relative(name))}
    outside = {(name, target) for name in public for target in graph[name] if target not in public}
    assert not outside, f"public modules import instructor-only ones: {sorted(outside)}"


def _relative(module: str) -> str:
    path = PACKAGE.parent / Path(*module.split("."))
    return (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).relative_to(PACKAGE).as_posix()


def test_the_bundle_scan_is_clean_and_finds_what_is_planted(student_bundle, tmp_path: Path) -> None:
    secrets = leaks.Secrets.of(kit.KIT)
    assert leaks.scan_folder(student_bundle.root, secrets) == []
    planted = tmp_path / "planted"
    shutil.copytree(student_bundle.root, planted)
    solution = (kit.SOLUTIONS / "softmax.py").read_text(encoding="utf-8")
    line = next(line for line in stubs.solution_lines(solution) if len(line) >= leaks.MIN_LINE)
    (planted / "README.md").write_text(f"hint:\n    {line}\n", encoding="utf-8")
    (planted / LAB / "mask.py").write_text((kit.SOLUTIONS / "mask.py").read_text(encoding="utf-8"), encoding="utf-8")
    wheel = planted / student_bundle.wheel.name
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("autograder/grading/graders/extra.py", (kit.HIDDEN / "test_mask_hidden.py").read_text("utf-8"))
        region = "\n".join(next(iter(secrets.regions.values())))
        archive.writestr("autograder/helpers.py", f"def f():\n{region}\n")
    found = leaks.scan_folder(planted, secrets)
    assert any(p.startswith("README.md: holds the solution line") for p in found), found
    assert any(p.startswith(f"{LAB}/mask.py: is not the stub") for p in found), found
    assert any(p.endswith("autograder/grading/graders/extra.py: is a hidden grader") for p in found), found
    assert any("autograder/helpers.py: holds the solution region" in p for p in found), found


def test_a_leak_fails_the_release_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder.deliver.release import bundle

    secrets = leaks.Secrets.of(kit.KIT)
    monkeypatch.setattr(leaks.Secrets, "of", classmethod(lambda cls, _kit: secrets))
    real = bundle.write_lab_folder

    def leaky(kit_: object, lab: Path) -> Path:
        real(kit_, lab)
        shutil.copyfile(kit.SOLUTIONS / "softmax.py", lab / "softmax.py")
        return lab

    monkeypatch.setattr(bundle, "write_lab_folder", leaky)
    with pytest.raises(leaks.ReleaseLeak, match=r"is not the stub of softmax\.py"):
        bundle.build(kit.KIT, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".attnlab-release-*"))


# -- a student's install: a fresh virtual environment with the wheel (slow: about a minute) ---------------------
def student(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    attnlab = python.parent / "attnlab"
    environment = {k: v for k, v in os.environ.items() if k not in ("ATTNLAB_KIT", "ATTNLAB_SECRET")}
    return subprocess.run([str(attnlab), *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=environment)


@pytest.mark.slow
def test_a_students_install_is_a_students_tool(student_python: Path, tmp_path: Path) -> None:
    check = subprocess.run([str(student_python), "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr  # the wheel's dependencies are all there
    where = subprocess.run(
        [
            str(student_python),
            "-c",
            "import autograder, autograder.base.kit as k; print(autograder.__file__, k.Kit.find())",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "site-packages" in where.stdout and where.stdout.split()[-1] == "None", where.stdout + where.stderr
    shown = student(student_python, "--help", cwd=tmp_path)
    assert shown.returncode == 0
    listed = shown.stdout.split("{", 1)[1].split("}", 1)[0].split(",")
    assert set(listed) <= set(STUDENT_COMMANDS) and "grade" in listed
    for command in INSTRUCTOR_COMMANDS:
        refused = student(student_python, command, "x", cwd=tmp_path)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert refused.stderr.count("\n") == 1 and "an instructor command" in refused.stderr, refused.stderr


@pytest.mark.slow
def test_a_students_install_grades_the_stubs_zero_and_the_reference_full(
    student_python: Path, student_bundle, tmp_path: Path
) -> None:
    bundle_copy = tmp_path / "bundle"
    shutil.copytree(student_bundle.root, bundle_copy)
    stubs_run = student(student_python, "grade", "--json", str(tmp_path / "stubs.json"), cwd=bundle_copy)
    assert stubs_run.returncode == 0, stubs_run.stderr
    results = json.loads((tmp_path / "stubs.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["max_score"] == tasks.total_points(public_only=True)
    assert f"Grading {LAB} (public checks only)" in stubs_run.stdout
    for instructor_only in ("default secret", "ATTNLAB_SECRET", "Hidden inputs seed", "no hidden graders"):
        assert instructor_only not in stubs_run.stdout + stubs_run.stderr
    for path in kit.SOLUTIONS.iterdir():  # the reference placed into the lab folder (its timing report too)
        target = bundle_copy / LAB / path.name
        if path.is_dir() and path.name != "__pycache__":
            shutil.copytree(path, target, dirs_exist_ok=True)
        elif path.suffix == ".py":
            shutil.copyfile(path, target)
    reference_run = student(student_python, "grade", "--json", "reference.json", cwd=bundle_copy / LAB)
    assert reference_run.returncode == 0, reference_run.stderr
    results = json.loads(open(bundle_copy / LAB / "reference.json", encoding="utf-8").read())
    assert results["score"] == results["max_score"] == tasks.total_points(public_only=True), reference_run.stdout


# -- expected answers of the predict-first step, and the engine judged like any released text ------------------


def test_the_scan_fails_on_a_planted_answer_in_every_form(tmp_path: Path) -> None:
    import numpy as np

    from autograder.base.reference import Reference
    from autograder.judge import predictions

    secrets = leaks.Secrets.of(kit.KIT)
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    (kv,) = [q for q in predictions.load() if q.id == "kv_cache_gb"]
    value = predictions.compute(kv, ref)
    assert any(a.question == "kv_cache_gb" for a in secrets.answers)
    bytes_ = round(value * 1e9)
    for text in (
        f"the cache takes {value} GB",
        f"about {value:.3g} GB",
        f"{value:.4f}",
        f"{value:.3e}",
        f"{value:.3g}".replace(".", ","),  # the Turkish handout's decimal comma
        f"{bytes_} bytes",
        f"{bytes_:,} bytes",
        f"ANSWERS = {{'kv_cache_gb': {value:.5g}}}",
    ):
        found = leaks.scan_text("README.md", text, secrets)
        assert found == [f"README.md: holds the expected answer of prediction 'kv_cache_gb' ({found[0].split('(')[-1]}"]
        assert leaks.scan_text("autograder/x.py", text, secrets, engine=True), text
    for text in (f"{value:.2g} GB", "2.6875", f"1{value:.3g}", "version 12.684"):  # too short, or another number
        assert leaks.scan_text("README.md", text, secrets) == [], text
    planted = tmp_path / "planted"
    planted.mkdir()
    np.savez_compressed(planted / "snapshot.npz", **{"prediction_kv_cache_gb/expected": np.asarray(value)})
    np.save(planted / "answer32.npy", np.asarray([value], dtype=np.float32))
    (planted / "blob.bin").write_bytes(b"\0" * 7 + np.asarray(value).tobytes())
    with zipfile.ZipFile(planted / "attnlab-0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("autograder/data/snapshots/predictions.npz", (planted / "snapshot.npz").read_bytes())
    found = leaks.scan_folder(planted, secrets)
    for name in ("snapshot.npz!", "answer32.npy", "blob.bin", "attnlab-0-py3-none-any.whl!"):
        assert any(p.startswith(name) and "'kv_cache_gb' (as a float)" in p for p in found), (name, found)


def test_the_public_engine_holds_no_answer_and_no_three_solution_lines() -> None:
    secrets = leaks.Secrets.of(kit.KIT)
    problems = [
        problem
        for path in contents.public_files(PACKAGE)
        for problem in leaks.scan_bytes(
            "autograder/" + path.relative_to(PACKAGE).as_posix(), path.read_bytes(), secrets, engine=True
        )
    ]
    assert problems == []
    assert not (PACKAGE / "data" / "snapshots" / "predictions.npz").exists()
    # the old mistake generator of the reference check held torch_attention's kernel table and loop: a leak now
    old = """
    names = {
        SDPBackend.FLASH_ATTENTION: "flash",
        SDPBackend.EFFICIENT_ATTENTION: "efficient",
        SDPBackend.CUDNN_ATTENTION: "cudnn",
        SDPBackend.MATH: "math",
    }
    found = set()
    for backend, name in names.items():
"""
    (problem,) = leaks.scan_text("autograder/judge/diagnose/reference_check.py", old, secrets, engine=True)
    assert "holds the solution region of reference_check.torch_attention" in problem
    solution = (kit.SOLUTIONS / "softmax.py").read_text(encoding="utf-8")
    spread = [line for line in stubs.solution_lines(solution) if len(line) >= leaks.RUN_LINE]
    mixed = "\n".join([spread[0], *next(iter(secrets.regions.values()))[:1], spread[-1]])  # lines of two regions
    assert leaks.scan_text("autograder/helpers.py", mixed, secrets, engine=True)
