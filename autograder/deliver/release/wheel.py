"""The public engine as a wheel: a staged copy of its files, built by pip (setuptools) like any package.

The kit's own ``pyproject.toml`` gives the name, version, dependencies and
console script; the staged project adds every staged file as package data, so
the wheel holds exactly :func:`autograder.deliver.release.contents.public_files`, and
the start-up guard's two files at its root (:mod:`autograder.deliver.release.pth`). The
build runs without network access where setuptools is installed (no build
isolation), else in pip's usual isolated build environment.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.base.kit import PACKAGE, Kit
from autograder.deliver.release import contents, pth

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = {name}
version = {version}
description = {description}
readme = "README.md"
requires-python = {python}
dependencies = {dependencies}

[project.optional-dependencies]
torch = {torch}

[project.scripts]
attnlab = "autograder.cli:main"

[tool.setuptools.packages.find]
include = ["autograder*"]

[tool.setuptools.package-data]
autograder = ["**/*"]
"""


class WheelError(RuntimeError):
    """pip could not build the wheel; the message ends with its output."""


def file_name() -> str:
    """The file name of the public wheel (``attnlab-<version>-py3-none-any.whl``)."""
    from autograder import __version__

    return f"attnlab-{__version__}-py3-none-any.whl"


def pyproject_text(kit: Kit, description: str) -> str:
    """The staged project's ``pyproject.toml``: the kit's name, version and dependencies, every file as data."""
    with (kit.root / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    return PYPROJECT.format(
        name=json.dumps(project["name"]),
        version=json.dumps(project["version"]),
        description=json.dumps(description),
        python=json.dumps(project["requires-python"]),
        dependencies=json.dumps(project["dependencies"]),
        torch=json.dumps(project["optional-dependencies"]["torch"]),  # no torch unless asked for (pip's is CUDA)
    )


def stage(kit: Kit, into: Path, readme: str, description: str) -> Path:
    """``into`` holding the public engine's files, a ``pyproject.toml`` and ``README.md``; returns ``into``."""
    for path in contents.public_files(PACKAGE):
        target = into / "autograder" / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (into / "pyproject.toml").write_text(pyproject_text(kit, description), encoding="utf-8")
    (into / "README.md").write_text(readme, encoding="utf-8")
    return into


def build(kit: Kit, out: Path, readme: str, description: str = "The attention lab's autograder (student kit)") -> Path:
    """Build the public engine's wheel into the folder ``out``; its path. :class:`WheelError` if pip fails."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="attnlab-wheel-") as work:
        staged = stage(kit, Path(work) / "attnlab", readme, description)
        isolation = [] if importlib.util.find_spec("setuptools") else None
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(staged)]
        if isolation is not None:
            command.insert(4, "--no-build-isolation")
        done = subprocess.run(command, capture_output=True, text=True, cwd=work)
        if done.returncode != 0:
            raise WheelError(f"pip wheel failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    wheels = sorted(out.glob("attnlab-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise WheelError(f"pip wheel wrote no attnlab wheel into {out}")
    return pth.add_to_wheel(wheels[-1])  # the start-up guard: the grader never imports from the hand-in
