"""The suite's parallel run: a session fixture built once for all xdist workers, nested pytest runs kept serial."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest, shared


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


@pytest.fixture(scope="module")
def module_value() -> int:
    return 1


def test_a_module_fixture_user_runs_with_its_module(request, module_value: int) -> None:
    assert conftest.xdist_group(request.node) == "tests/test_parallel_fixtures.py"


def test_a_test_without_module_fixtures_runs_on_any_worker(request) -> None:
    assert conftest.xdist_group(request.node) is None
