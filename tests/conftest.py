"""Fixtures of the kit's own tests, and its two tiers.

``python3 -m pytest`` runs the first tier: every test but those that need a
browser, nbgrader, a Dask cluster or a pip install of the course lock.
``python3 -m pytest --tier 2`` runs exactly those (``--tier all`` both);
``.ci/run`` always runs both, and ``tests/test_tiers.py`` fails when it would
not. A test file or test named on the command line runs whatever its tier.
Which tests are in the second tier is decided here only (:data:`SECOND_TIER`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.base import threads

# The tests' own grades run in this process: on one BLAS thread, as every grading process does (before NumPy loads).
threads.one_thread()

from autograder.grading import serialize  # noqa: E402
from autograder.grading.model import GradeReport  # noqa: E402
from tests import kit, shared  # noqa: E402

# What goes to the second tier, and what it needs: a test file (``tests/x.py``), one test (``tests/x.py::name``,
# every parameter of it) or every test using a fixture (``fixture:name``).
SECOND_TIER = {
    "tests/test_handout_browser.py": "a headless chromium",
    "tests/test_workbench_browser.py": "chromium through Selenium",
    "tests/test_accessibility.py": "chromium through Selenium, with axe-core",
    "tests/test_report_html.py::test_chromium_draws_every_image": "a headless chromium",
    "tests/test_nbgrader_course.py": "nbgrader runs on a course",
    "tests/test_nbgrader_kernel.py": "nbgrader's kernels",
    "tests/test_nbgrader_language.py": "nbgrader runs on a course",
    "tests/test_nbgrader_warm.py": "nbgrader runs with the warm grading server",
    "tests/test_nbgrader_exchange.py": "nbgrader's exchange with students' accounts, formgrader in chromium",
    "tests/test_batch.py::test_a_dask_cluster_that_loses_a_worker_gives_the_same_csv": "a Dask LocalCluster",
    "tests/test_batch_similarity.py::test_grade_batch_on_a_dask_cluster_flags_the_copies": "a Dask LocalCluster",
    "tests/test_batch_interrupt.py::test_an_interrupted_batch_on_a_dask_cluster_stops_too": "a Dask LocalCluster",
    "fixture:student_python": "a virtual environment installed from the course lock by the Gradescope setup.sh",
}
TIERS = ("1", "2", "all")
# pytest-xdist's workers for ``-n auto``: each imports torch and starts its own fork servers, and the suite's
# largest groups (below) bound what more workers could gain
MAX_WORKERS = 4
MARKER = "second_tier"


def second_tier_reason(nodeid: str, fixtures: tuple[str, ...] | list[str]) -> str | None:
    """Why the test ``nodeid`` (using ``fixtures``) is in the second tier, or None: it is in the first."""
    path, _, name = nodeid.partition("::")
    function = name.partition("[")[0]
    for key in (path, f"{path}::{function}", *(f"fixture:{fixture}" for fixture in fixtures)):
        if key in SECOND_TIER:
            return SECOND_TIER[key]
    return None


def selected(nodeid: str, fixtures: tuple[str, ...] | list[str], tier: str, named: bool) -> bool:
    """Whether a run of ``tier`` runs the test; ``named``: its file or id was given on the command line."""
    second = second_tier_reason(nodeid, fixtures) is not None
    return tier == "all" or (tier == "2" and second) or (tier == "1" and (not second or named))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=TIERS,
        default="1",
        help="1: the first tier (the default), 2: the tests that need a browser, nbgrader, Dask or a lock install, "
        "all: both",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: needs a browser, nbgrader, Dask or a lock install (--tier 2)")


def _named(config: pytest.Config, file: Path) -> bool:
    """Whether the command line named ``file`` (or a test in it), not only a folder holding it."""
    for argument in config.args:
        path = Path(argument.partition("::")[0])
        path = path if path.is_absolute() else Path(str(config.invocation_params.dir)) / path
        if path.suffix == ".py" and path.resolve() == file.resolve():
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The first tier does not even import a second-tier file (nbgrader, selenium): it is not collected."""
    if config.getoption("tier") != "1" or collection_path.suffix != ".py":
        return None
    try:
        relative = collection_path.resolve().relative_to(Path(str(config.rootpath)).resolve()).as_posix()
    except ValueError:  # outside the kit
        return None
    if relative in SECOND_TIER and not _named(config, collection_path):
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tier = config.getoption("tier")
    kept, dropped = [], []
    for item in items:
        fixtures = tuple(getattr(item, "fixturenames", ()))
        if second_tier_reason(item.nodeid, fixtures) is not None:
            item.add_marker(MARKER)
        (kept if selected(item.nodeid, fixtures, tier, _named(config, Path(str(item.path)))) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pytest-xdist's scheduler for the default ``--dist load``: a module's tests that share a module fixture in
    one worker (:mod:`tests.scheduling`); another ``--dist`` gets xdist's own."""
    if config.getoption("dist") != "load":
        return None
    from tests.scheduling import ModuleFixtureScheduling

    return ModuleFixtureScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """The workers of ``-n auto`` (pyproject.toml's default): one per CPU, at most :data:`MAX_WORKERS`;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides it. 0 in a pytest run a test starts (a lane test reruns itself
    in a fresh process where no other thread runs): it runs its tests itself, as it would without xdist."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 0
    asked = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if asked.isdigit():
        return int(asked)
    return max(1, min(len(os.sched_getaffinity(0)), MAX_WORKERS))


@pytest.fixture(scope="session")
def reference_report(tmp_path_factory: pytest.TempPathFactory) -> GradeReport:
    """The reference solution graded once per run, public and hidden checks."""
    return shared.once(
        tmp_path_factory, "reference-report", lambda _: kit.grade(kit.SOLUTIONS), serialize.report_json,
        serialize.report_from_json,
    )  # fmt: skip


@pytest.fixture(scope="session")
def stubs_report(tmp_path_factory: pytest.TempPathFactory) -> GradeReport:
    """The untouched stubs graded once per run."""
    return shared.once(
        tmp_path_factory, "stubs-report", lambda _: kit.grade(kit.STUBS), serialize.report_json,
        serialize.report_from_json,
    )  # fmt: skip


@pytest.fixture(scope="session")
def student_bundle(tmp_path_factory: pytest.TempPathFactory):
    """The student bundle (``attnlab release``), built once per run."""
    from autograder.deliver.release import bundle

    def dump(built: bundle.Bundle) -> str:
        return json.dumps({"root": str(built.root), "wheel": str(built.wheel)})

    def load(text: str) -> bundle.Bundle:
        paths = json.loads(text)
        return bundle.Bundle(Path(paths["root"]), Path(paths["wheel"]))

    return shared.once(tmp_path_factory, "release", lambda folder: bundle.build(kit.KIT, folder / "bundle"), dump, load)


@pytest.fixture(scope="session")
def gradescope_zip(tmp_path_factory: pytest.TempPathFactory, student_bundle) -> Path:
    """The Gradescope autograder zip, with the bundle's wheel and a fixed secret (5 s per call), built once per run."""
    from autograder.deliver.gradescope import build

    def make(folder: Path) -> Path:
        options = build.ZipOptions(
            out=folder / "autograder.zip", kit=kit.KIT, secret="test-secret", call_timeout_s=5,
            wheel=student_bundle.wheel,
        )  # fmt: skip
        return build.build(options)

    return shared.once(tmp_path_factory, "gradescope", make, str, Path)


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


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary folder with a short path, for a command's ``TMPDIR``: a warm grading server's socket lives in it,
    and a Unix socket's path holds 107 bytes, which pytest-xdist's temporary folders can exceed (the server then
    cannot listen, and the command grades without it). Removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="attnlab-test-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
