"""Fixtures of the kit's own tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.report.model import GradeReport
from tests import kit


@pytest.fixture(scope="session")
def reference_report() -> GradeReport:
    """The reference solution graded once, public and hidden checks."""
    return kit.grade(kit.SOLUTIONS)


@pytest.fixture(scope="session")
def stubs_report() -> GradeReport:
    """The untouched stubs graded once."""
    return kit.grade(kit.STUBS)


@pytest.fixture(scope="session")
def student_bundle(tmp_path_factory: pytest.TempPathFactory):
    """The student bundle (``attnlab release``), built once."""
    from autograder.release import bundle

    return bundle.build(kit.KIT, tmp_path_factory.mktemp("release") / "bundle")


@pytest.fixture(scope="session")
def gradescope_zip(tmp_path_factory: pytest.TempPathFactory, student_bundle) -> Path:
    """The Gradescope autograder zip, with the bundle's wheel and a fixed secret (5 s per call)."""
    from autograder.gradescope import build

    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    options = build.ZipOptions(out=out, kit=kit.KIT, secret="test-secret", call_timeout_s=5, wheel=student_bundle.wheel)
    return build.build(options)


@pytest.fixture(scope="session")
def student_python(gradescope_zip: Path) -> Iterator[Path]:
    """The Python of a fresh virtual environment set up by the zip's ``setup.sh`` (the course lock, then the
    public wheel): what Gradescope's image and a student's install hold. torch comes from pip's usual index here
    (no network to PyTorch's); about 40 s. It lives where every user may read it (pytest's own temporary folders
    are closed), as a system Python is: the sandbox's user layer runs student code as another uid. And not under
    /tmp: the namespaces layer gives student code a private, empty /tmp, which would hide the installation."""
    root = Path(tempfile.mkdtemp(prefix="attnlab-student-env-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    root.chmod(0o755)
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=300)
    python = root / "venv" / "bin" / "python"
    with zipfile.ZipFile(gradescope_zip) as archive:
        archive.extractall(root / "setup")
    done = subprocess.run(
        ["bash", str(root / "setup" / "setup.sh")],
        env={
            **os.environ,
            "ATTNLAB_PYTHON": str(python),
            "ATTNLAB_TORCH_INDEX": "",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        },
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, f"setup.sh failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    yield python
    shutil.rmtree(root, ignore_errors=True)
