"""The parallel run: session fixtures built once for all xdist workers, module fixtures once, nested runs serial."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder import i18n
from autograder.handin import pristine
from tests import conftest, kit, scheduling, shared


class Factory:
    """What :func:`shared.once` needs of pytest's ``tmp_path_factory``: one worker's base folder under a run's."""

    def __init__(self, run: Path, worker: str) -> None:
        self.base = run / f"popen-{worker}"
        self.base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self) -> Path:
        return self.base

    def mktemp(self, name: str) -> Path:
        folder = self.base / name
        folder.mkdir()
        return folder


def test_the_first_worker_builds_and_the_others_read_it_back(tmp_path: Path, monkeypatch) -> None:
    built: list[Path] = []

    def make(folder: Path) -> dict:
        built.append(folder)
        (folder / "made").write_text("x", encoding="utf-8")
        return {"folder": str(folder)}

    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = shared.once(Factory(tmp_path, "gw0"), "thing", make, repr, eval)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    second = shared.once(Factory(tmp_path, "gw1"), "thing", make, repr, eval)
    assert first == second and len(built) == 1 and (Path(second["folder"]) / "made").is_file()


def test_a_failed_build_is_retried_by_the_next_worker(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")

    def broken(folder: Path) -> str:
        (folder / "half").write_text("x", encoding="utf-8")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError):
        shared.once(Factory(tmp_path, "gw0"), "thing", broken, str, str)
    listing = shared.once(Factory(tmp_path, "gw1"), "thing", lambda folder: str(sorted(folder.iterdir())), str, str)
    assert listing == "[]", "the next worker builds in an empty folder"


@pytest.mark.parametrize("worker", ["gw0", None])
def test_a_shared_value_is_built_under_the_default_grading_variables(
    worker: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in shared.GRADING_VARIABLES:  # as a test of the building worker may have left them
        monkeypatch.setenv(name, "0")
    monkeypatch.setenv(i18n.ENV_LANG, "tr")
    if worker:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    else:
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)

    def make(folder: Path) -> list:
        return [pristine.enabled(), i18n.language(), sorted(set(shared.GRADING_VARIABLES) & set(os.environ))]

    with i18n.using("tr"):
        assert shared.once(Factory(tmp_path, worker or "main"), "thing", make, repr, eval) == [True, "en", []]
        assert i18n.language() == "tr"
    assert os.environ[pristine.ENV_SWITCH] == "0" and os.environ[i18n.ENV_LANG] == "tr"  # restored after the build


def test_without_xdist_each_call_builds_in_its_own_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    factory = Factory(tmp_path, "main")
    assert shared.once(factory, "a", str, str, str) != shared.once(factory, "b", str, str, str)


def test_a_pytest_run_started_inside_a_worker_runs_its_tests_itself(monkeypatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert conftest.pytest_xdist_auto_num_workers(None) == 0
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert conftest.pytest_xdist_auto_num_workers(None) == 3
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS")
    assert 1 <= conftest.pytest_xdist_auto_num_workers(None) <= conftest.MAX_WORKERS


def test_a_module_with_a_module_fixture_runs_in_one_worker() -> None:
    root = str(kit.ROOT)
    for test in ("test_every_figure_is_current", "test_generated_blocks_are_current"):
        assert scheduling.scope(f"tests/test_handout.py::{test}", root, "1") == "tests/test_handout.py"
    free = "tests/test_core_steps.py::test_softmax_worked_example"
    assert scheduling.scope(free, root, "1") == free


def test_the_users_of_the_lock_install_run_in_one_worker_in_the_second_tier() -> None:
    for path in ("tests/test_gradescope.py", "tests/test_release.py"):
        assert scheduling.scope(f"{path}::test_any", str(kit.ROOT), "2") == scheduling.INSTALL_FIXTURE
