"""The grader never imports from the hand-in: `python -m autograder`, `python -m autograder.<module>` and `attnlab`
refuse to start, with one sentence, in a folder whose `autograder` package (or module) Python would import instead
of the kit; a folder holding `numpy.py`, `torch.py`, `pytest.py`, `tests/` or `conftest.py` does not change the
grader. For the editable install (this environment), a wheel of the kit, and the student wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from autograder import startup
from autograder.base import tasks
from autograder.deliver.release import pth
from tests import kit

MARK = "hostile code ran"
HOSTILE = f"import pathlib\npathlib.Path({{marker!r}}).write_text({MARK!r})\n"
REFUSED = "attnlab: refused to start: Python would import the grader from "


def _guarded() -> Path:
    """This environment's guard module; fails (never skips) when the kit was installed without it."""
    module = Path(sysconfig.get_paths()["purelib"]) / f"{pth.MODULE}.py"
    assert module.is_file() and (module.parent / pth.PTH).is_file(), (
        f"no {pth.PTH} in {module.parent}: install the kit again (pip install -e .) so its build backend adds it"
    )
    return module


def _hostile_package(folder: Path, marker: Path, *, namespace: bool = False) -> Path:
    """``folder/autograder``: a package (without ``__init__.py``: a namespace package) whose every module, imported
    or run, writes ``marker``."""
    code = HOSTILE.format(marker=str(marker))
    for module in ("__main__.py", "cli/__init__.py", "cli/__main__.py", "cli/grade.py", "deliver/gradescope/runner.py"):
        path = folder / "autograder" / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    if not namespace:
        (folder / "autograder" / "__init__.py").write_text(code, encoding="utf-8")
    return folder


def _run(command: list[str], cwd: Path, **environment: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNLAB_LANG")} | environment
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _assert_refused(done: subprocess.CompletedProcess, marker: Path, found: Path) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-1000:], done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(REFUSED + str(found)), done.stderr
    assert not marker.exists(), "the hand-in's code ran"


ENTRIES = {  # how a grader is started, as a command line after the Python
    "python -m autograder": ["-m", "autograder", "grade", "."],
    "python -m autograder.cli": ["-m", "autograder.cli", "grade", "."],
    "python -m autograder.deliver.gradescope.runner": ["-m", "autograder.deliver.gradescope.runner"],
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("form", ["package", "namespace package", "module"])
def test_a_folder_that_shadows_the_kit_is_refused(tmp_path: Path, entry: str, form: str) -> None:
    _guarded()
    hand_in, marker = tmp_path / "hand_in", tmp_path / "marker"
    if form == "module":
        hand_in.mkdir()
        (hand_in / "autograder.py").write_text(HOSTILE.format(marker=str(marker)), encoding="utf-8")
        found = hand_in / "autograder.py"
    else:
        found = _hostile_package(hand_in, marker, namespace=form == "namespace package") / "autograder"
    _assert_refused(_run([sys.executable, *ENTRIES[entry]], hand_in), marker, found)


def test_attnlab_with_the_folder_on_its_path_is_refused(tmp_path: Path) -> None:
    _guarded()
    hand_in, marker = _hostile_package(tmp_path / "hand_in", tmp_path / "marker"), tmp_path / "marker"
    attnlab = Path(sys.executable).parent / "attnlab"
    for path in (".", str(hand_in)):
        _assert_refused(_run([str(attnlab), "grade", "."], hand_in, PYTHONPATH=path), marker, hand_in / "autograder")
    plain = _run([str(attnlab), "grade", "."], hand_in)  # the script's own folder comes first: the kit's grader
    assert plain.returncode == 2 and "holds none of the lab's files" in plain.stderr and not marker.exists()


def test_the_refusal_is_in_the_students_language(tmp_path: Path) -> None:
    _guarded()
    hand_in, marker = _hostile_package(tmp_path / "hand_in", tmp_path / "marker"), tmp_path / "marker"
    done = _run([sys.executable, "-m", "autograder", "grade", "."], hand_in, ATTNLAB_LANG="tr")
    assert done.returncode == 2 and not marker.exists()
    assert done.stderr.startswith("attnlab: ") and str(hand_in / "autograder") in done.stderr
    assert "refused to start" not in done.stderr, done.stderr  # the Turkish sentence


SHADOWS = ("numpy", "torch", "pytest", "_pytest", "conftest", "csv", "argparse", "tqdm", "json")


def test_modules_beside_the_hand_in_do_not_change_the_grader(tmp_path: Path) -> None:
    """The reference's softmax with every module name the grader imports written beside it (and a tests/ package
    with a conftest.py): graded full, none of them ever imported."""
    _guarded()
    hand_in, marker = tmp_path / "hand_in", tmp_path / "marker"
    hand_in.mkdir()
    (hand_in / "softmax.py").write_text((kit.SOLUTIONS / "softmax.py").read_text("utf-8"), encoding="utf-8")
    code = HOSTILE.format(marker=str(marker))
    for name in SHADOWS:
        (hand_in / f"{name}.py").write_text(code, encoding="utf-8")
    (hand_in / "tests").mkdir()
    (hand_in / "tests" / "__init__.py").write_text(code, encoding="utf-8")
    (hand_in / "tests" / "conftest.py").write_text(code, encoding="utf-8")
    report = tmp_path / "report.json"
    for command in (
        [sys.executable, "-m", "autograder", "grade", ".", "--step", "softmax", "--json", str(report)],
        [str(Path(sys.executable).parent / "attnlab"), "grade", ".", "--step", "softmax", "--json", str(report)],
    ):
        for environment in ({}, {"PYTHONPATH": "."}):
            done = _run(command, hand_in, **environment)
            assert done.returncode == 0, done.stderr[-3000:]
            assert not marker.exists(), (command, environment)
            results = json.loads(report.read_text(encoding="utf-8"))
            assert results["score"] == results["max_score"] == tasks.step("softmax").points


def test_the_kits_own_children_and_checkout_are_not_refused(tmp_path: Path) -> None:
    """``python -I`` (the sandbox's and the warm grader's start) and the instructor in the kit's own checkout."""
    _guarded()
    in_kit = _run([sys.executable, "-m", "autograder", "doctor"], kit.ROOT)
    assert in_kit.returncode == 0 and REFUSED not in in_kit.stderr, in_kit.stderr
    hand_in = _hostile_package(tmp_path / "hand_in", tmp_path / "marker")
    isolated = _run([sys.executable, "-I", "-c", "import autograder; print(autograder.__file__)"], hand_in)
    assert isolated.returncode == 0 and isolated.stdout.strip() == str(kit.ROOT / "autograder" / "__init__.py")


def test_the_guard_adds_itself_to_a_wheel_with_its_record(tmp_path: Path) -> None:
    """The kit's wheel built by its own backend (``pip wheel .``) holds the guard for the package beside it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        cwd=kit.ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = tmp_path.glob("attnlab-*.whl")
    _assert_wheel_guarded(wheel, kit_folder=None)


def _assert_wheel_guarded(wheel: Path, kit_folder: str | None) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record = archive.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        module = archive.read(f"{pth.MODULE}.py").decode()
        assert archive.read(pth.PTH) == f"import {pth.MODULE}\n".encode()
    assert {f"{pth.MODULE}.py", pth.PTH} <= set(names)
    assert f"\n{pth.MODULE}.py,sha256=" in record and f"\n{pth.PTH},sha256=" in record
    assert module.endswith(f"install({kit_folder!r})\n") and "class Guard" in module


@pytest.mark.slow
def test_the_student_wheel_installs_the_guard(student_bundle, tmp_path: Path) -> None:
    """The student wheel, installed (without its dependencies: refusing needs none) into a fresh environment."""
    _assert_wheel_guarded(student_bundle.wheel, kit_folder=None)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    done = subprocess.run([*install, str(student_bundle.wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    hand_in, marker = _hostile_package(tmp_path / "hand_in", tmp_path / "marker"), tmp_path / "marker"
    for entry in ENTRIES.values():
        _assert_refused(_run([str(python), *entry], hand_in), marker, hand_in / "autograder")
    _assert_refused(_run([str(venv / "bin" / "attnlab"), "grade"], hand_in, PYTHONPATH="."), marker,
                    hand_in / "autograder")  # fmt: skip
    where = _run([str(python), "-c", "import autograder; print(autograder.__file__)"], tmp_path)
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr


def test_the_guard_only_looks_at_the_kits_package(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = startup.Guard(str(kit.ROOT / "autograder"))
    assert guard.find_spec("numpy") is None and guard.find_spec("autograder.cli") is None
    monkeypatch.setattr(sys, "argv", ["python"])
    assert guard.find_spec("autograder") is None  # the kit itself: nothing to say
