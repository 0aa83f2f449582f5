"""The kit's installs can only bring torch's CPU build, unless the user asks for another.

PyPI's Linux torch is a CUDA build of several GB. The kit's package and the student wheel depend on no torch (the
``torch`` extra asks for pip's own); the README's and the student README's commands take torch from PyTorch's CPU
index only; the course locks pin ``2.13.0+cpu`` on Linux, a version PyPI does not have. Checked with pip itself on a
stand-in "PyPI" that holds only a CUDA-like ``torch-2.13.0`` and a CPU index that cannot be reached: pip stops, it
never takes the stand-in. No network is used: both indexes are local folders (or an address nothing listens on).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from autograder.base import versions
from autograder.deliver.release import readme
from tests import kit

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:
    import tomli as tomllib

CPU_INDEX = versions.TORCH_CPU_INDEX


def fake_wheel(folder: Path, version: str) -> Path:
    """A tiny wheel named torch ``version`` (a stand-in: nothing is ever installed from it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"torch-{version}-py3-none-any.whl"
    info = f"torch-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    return path


def pip_resolves(requirements: Path, *links: Path, index: str | None = None) -> subprocess.CompletedProcess:
    """``pip install --dry-run`` of ``requirements`` from the folders ``links`` only (and ``index``), with none of
    this machine's pip settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_RETRIES": "0"}
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--quiet"]
    command += ["--index-url", index] if index else ["--no-index"]
    command += [f"--find-links={link}" for link in links] + ["-r", str(requirements)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def lock_torch_lines() -> str:
    text = kit.KIT.lock.read_text(encoding="utf-8")
    return "".join(line + "\n" for line in text.splitlines() if line.startswith("torch=="))


def test_the_kit_and_the_student_wheel_depend_on_no_torch(student_bundle) -> None:
    project = tomllib.loads((kit.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [r for r in project["dependencies"] if Requirement(r).name == "torch"]
    assert [Requirement(r).name for r in project["optional-dependencies"]["torch"]] == ["torch"]
    with zipfile.ZipFile(student_bundle.wheel) as archive:
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    torch = [Requirement(line.split(":", 1)[1]) for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    torch = [r for r in torch if r.name == "torch"]
    assert torch and all(r.marker is not None and "extra" in str(r.marker) for r in torch), torch


def test_the_lock_installs_only_the_cpu_torch(tmp_path: Path) -> None:
    requirements = tmp_path / "torch.txt"
    requirements.write_text(lock_torch_lines(), encoding="utf-8")
    pypi = tmp_path / "pypi"
    fake_wheel(pypi, versions.TESTED_TORCH)  # PyPI's Linux build: CUDA
    unreachable = "http://127.0.0.1:9/simple"  # the CPU index out of reach: nothing listens there
    done = pip_resolves(requirements, pypi, index=unreachable)
    assert done.returncode != 0, "with the CPU index out of reach, pip took the CUDA stand-in"
    assert f"torch-{versions.TESTED_TORCH}-py3" not in done.stdout
    cpu = tmp_path / "cpu-index"
    fake_wheel(cpu, f"{versions.TESTED_TORCH}+cpu")
    assert pip_resolves(requirements, pypi, cpu).returncode == 0, "the CPU build is not what the lock asks for"


def test_every_command_that_installs_torch_takes_the_cpu_build() -> None:
    pages = [kit.ROOT / "README.md", *sorted((kit.ROOT / "docs").glob("*.md"))]
    texts = {page.name: page.read_text(encoding="utf-8") for page in pages}
    texts["the student's README"] = readme.text("attnlab-0.1.0-py3-none-any.whl", inside_lab=False)
    found = 0
    for name, text in texts.items():
        for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL):
            for command in re.split(r"&&|\n", block):
                if "pip install" not in command or ("torch" not in command and "lock" not in command):
                    continue
                found += 1
                cpu_only = f"--index-url {CPU_INDEX} torch=={versions.TESTED_TORCH}" in command
                from_lock = "-r requirements/lock" in command and f"--extra-index-url {CPU_INDEX}" in command
                assert cpu_only or from_lock, f"{name}: {command.strip()} could bring PyPI's CUDA torch"
    assert found >= 3


@pytest.mark.parametrize("extra", ["", "[dev,course]"])
def test_installing_the_kit_asks_for_no_torch(extra: str) -> None:
    project = tomllib.loads((kit.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [e for e in extra.strip("[]").split(",") if e]
    wanted = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    assert "torch" not in {Requirement(r).name for r in wanted}


@pytest.mark.parametrize(
    "argv",
    [
        ["grade", str(kit.SOLUTIONS)],
        ["grade", str(kit.SOLUTIONS), "--step", "kv_cache"],
        ["timing", str(kit.SOLUTIONS)],
        ["workbench", str(kit.SOLUTIONS), "--out", "w.html"],
        ["grade-batch", "."],
    ],
)
def test_without_torch_nothing_is_graded_and_the_command_says_what_to_install(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The machine's set-up is never the student's: exit status 3 before any work, no report, no lost point."""
    from autograder import cli
    from autograder.cli import common

    monkeypatch.setattr(versions, "installed_torch", lambda: None)
    monkeypatch.setenv("ATTNLAB_EARLY", "0")
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == common.EXIT_INTERNAL
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "torch is not installed" in err and versions.install_command() in err and "no point was lost" in err
    assert list(tmp_path.iterdir()) == []


def test_without_torch_a_numpy_step_is_still_graded(monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder import cli

    monkeypatch.setattr(versions, "installed_torch", lambda: None)
    monkeypatch.setenv("ATTNLAB_EARLY", "0")
    assert versions.torch_missing(["softmax", "scaling"]) is None
    assert cli.main(["grade", str(kit.SOLUTIONS), "--step", "softmax", "--quiet"]) == 0
