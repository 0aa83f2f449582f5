"""Hand-ins that spend what their classmates need, graded alongside them: a thread bomb, a fork bomb, a memfd hog, a
``/dev/shm`` hog and an anonymous-memory hog in one class with honest classmates.

The class is a course folder (``private/settings.json`` holds the sandbox limits: 1.5 GiB of memory per child, so
that no hog can starve this shared machine even where a wall failed) graded with ``attnlab grade-batch -j 2`` in a
fresh process at every isolation layer this machine has, and once on a Dask ``LocalCluster``; a hand-in that tries
every hog at once is graded by the Gradescope runner and the nbgrader grade cells' request at every layer. Each
must leave the honest classmates with exactly the reference's score, give every hostile hand-in a row (or a result)
with its reason, and finish: the batch writes its CSV, no grader process is the one the kernel ends, and no cgroup
of a child is left behind.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.base import safefs, tasks
from autograder.sandbox import cgroup, isolation
from autograder.sandbox.isolation import Level
from tests import kit
from tests.attacks.test_hand_ins import layer_settings

POINTS = tasks.step("softmax").points
MEMORY = 3 << 29  # 1.5 GiB: each child's address space, and its memory wherever it lives where a cgroup counts it
HONEST = ("b-ann", "d-bob", "f-cat", "h-dan")  # between the hostile ones: -j 2 grades them side by side
HOSTILE = {
    "a-threads": """
import threading


def softmax(x, axis=-1):
    threading.stack_size(64 << 10)
    stop = threading.Event()
    for _ in range(5000):
        threading.Thread(target=stop.wait, daemon=True).start()
    return x
""",
    "c-forks": """
import os


def softmax(x, axis=-1):
    for _ in range(1000):
        if os.fork() == 0:
            os.execv("/bin/sleep", ["/bin/sleep", "30"])
    return x
""",
    "e-memfd": """
import os


def softmax(x, axis=-1):
    fd = os.memfd_create("hog")
    for _ in range(3072):
        os.write(fd, b"\\1" * (1 << 20))
    return x
""",
    "g-shm": """
import os


def softmax(x, axis=-1):
    held = []
    for index in range(3072 // 16):
        path = f"/dev/shm/attnlab-hog-{os.getpid()}-{index}"
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.unlink(path)
        held.append(fd)
        for _ in range(16):
            os.write(fd, b"\\1" * (1 << 20))
    return x
""",
    "i-anon": """
import numpy as np


def softmax(x, axis=-1):
    held = [np.ones(8 << 20) for _ in range(6144 // 64)]
    return x
""",
}
# what each hostile hand-in's checks must say, by layer (the audit hook, on in every real command, refuses
# processes and writes outside the working copy before the operating system's wall is reached)
REASONS = {
    "a-threads": ("can't start new thread",),
    "c-forks": ("does not allow", "Resource temporarily unavailable"),
    "e-memfd": ("Operation not permitted",),
    "g-shm": ("No space left on device", "does not allow", "SIGKILL"),
    "i-anon": ("MemoryError",),
}
EVERY_HOG = """
import os, threading
import numpy as np


def _try(name, function, found):
    try:
        function()
        found.append(f"{name}=done")
    except BaseException as error:
        found.append(f"{name}={type(error).__name__}")


def _threads():
    threading.stack_size(64 << 10)
    stop = threading.Event()
    try:
        for _ in range(5000):
            threading.Thread(target=stop.wait, daemon=True).start()
    finally:
        stop.set()


def _memfd():
    fd = os.memfd_create("hog")
    for _ in range(3072):
        os.write(fd, b"\\1" * (1 << 20))


def _anonymous():
    held = np.empty(6 << 27)  # 6 GiB of address space in one go (no page touched: harmless where no limit holds)


def softmax(x, axis=-1):
    found = []
    for name, function in (("threads", _threads), ("memfd", _memfd), ("anonymous", _anonymous)):
        _try(name, function, found)
    raise RuntimeError("HOGS " + " ".join(found))
"""
HOGS_HELD = "HOGS threads=RuntimeError memfd=PermissionError anonymous=MemoryError"


def _hand_in(folder: Path, softmax: str | None = None) -> Path:
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    if softmax is not None:
        (folder / "softmax.py").write_text(softmax, encoding="utf-8")
    return folder


@pytest.fixture()
def course() -> Iterator[Path]:
    """A course folder whose ``submitted/`` holds the class (readable by every user: the user layer's uids must reach
    their copies) and whose ``private/settings.json`` holds the limits."""
    place = Path(tempfile.mkdtemp(prefix="attnlab-hogs-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    place.chmod(0o755)
    try:
        (place / "private").mkdir(mode=0o700)
        settings = {"limits": {"memory_bytes": MEMORY}, "deadline_s": 300}
        (place / "private" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        for name in HONEST:
            _hand_in(place / "submitted" / name)
        for name, softmax in HOSTILE.items():
            _hand_in(place / "submitted" / name, softmax)
        yield place
    finally:
        safefs.remove_tree(place)


def _cgroups() -> set[Path]:
    """The children's cgroups on this machine now."""
    return {
        folder
        for parent in cgroup.support().parents
        for folder in parent.folder.glob(f"{cgroup.PREFIX}*")
        if folder.is_dir()
    }


def _leaked(before: set[Path]) -> list[Path]:
    """Children's cgroups made since ``before`` whose grader has ended (nothing removed them)."""
    return [f for f in _cgroups() - before if not cgroup._alive(int(f.name[len(cgroup.PREFIX) :].split("-")[0]))]


def _said(out: Path, student: str) -> str:
    report = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
    return " ".join(c["message"] for s in report["report"]["report"]["steps"] for c in s["checks"])


def _assert_the_class_held(out: Path) -> None:
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {*HONEST, *HOSTILE}, rows
    for honest in HONEST:  # exactly the reference's score
        assert rows[honest]["status"] == "graded" and float(rows[honest]["total"]) == POINTS, rows[honest]
    for hostile, reasons in REASONS.items():
        assert rows[hostile]["status"] == "graded" and float(rows[hostile]["total"]) == 0, rows[hostile]
        said = _said(out, hostile)
        assert any(reason in said for reason in reasons), (hostile, said[:2000])
        assert "grader itself failed" not in said


@pytest.mark.slow
@pytest.mark.parametrize("level, python", layer_settings(), ids=lambda value: getattr(value, "label", ""))
def test_grade_batch_keeps_the_classmates_scores_against_every_hog(course: Path, level: Level, python: str) -> None:
    out = course / "graded"
    before = _cgroups()
    command = [python, "-m", "autograder", "grade-batch", str(course / "submitted"), "--csv", str(out / "grades.csv"),
               "--out", str(out), "-j", "2", "--step", "softmax", "--no-progress", "--hidden", str(kit.HIDDEN),
               "--reference", str(kit.SOLUTIONS)]  # fmt: skip
    if level == Level.USER:
        command.append("--private-copies")
    env = {**os.environ, isolation.ENV_LEVEL: level.label, "ATTNLAB_SECRET": "hogs", "ATTNLAB_KIT": str(kit.ROOT)}
    done = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert f"isolation of student code: {level.label}" in done.stderr
    _assert_the_class_held(out)
    assert _leaked(before) == []


@pytest.mark.slow
def test_dask_jobs_keep_the_classmates_scores_against_every_hog(course: Path) -> None:
    from distributed import LocalCluster

    from autograder.deliver.batch import run as batch
    from autograder.sandbox.client import Limits

    out = course / "graded"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        done = batch.run(
            batch.BatchOptions(
                submissions=course / "submitted", csv=out / "grades.csv", out=out, hidden=kit.HIDDEN,
                reference=kit.SOLUTIONS, secret="hogs", given=kit.SOLUTIONS, steps=("softmax",), deadline_s=300,
                limits=Limits(memory_bytes=MEMORY), dask=cluster.scheduler_address, progress=False,
            )
        )  # fmt: skip
    assert done.grader_failures == 0
    _assert_the_class_held(out)


GRADESCOPE = "import sys\nfrom autograder.deliver.gradescope import runner\nsys.exit(runner.main())\n"
GRADE_CELLS = """
import json, sys
from pathlib import Path
from autograder.deliver.nbgrader_course import cells

outcome = cells._grade_once(Path(sys.argv[1]), ("softmax",), None)
messages = [c.message for s in outcome.report.steps for c in s.checks]
print(json.dumps({"earned": outcome.report.step("softmax").earned, "messages": messages}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("level, python", layer_settings(), ids=lambda value: getattr(value, "label", ""))
def test_the_gradescope_runner_and_the_grade_cells_hold_against_every_hog(
    tmp_path: Path, level: Level, python: str
) -> None:
    from autograder.deliver.gradescope import runner

    tmp_path.chmod(0o755)  # the user layer's uid reaches its copy through here
    root = tmp_path / "autograder"
    shutil.copytree(kit.HIDDEN, root / "source" / runner.KIT / "hidden" / tasks.LAB)
    shutil.copytree(kit.SOLUTIONS, root / "source" / runner.KIT / "solutions" / tasks.LAB)
    settings = {"secret": "gs", "deadline_s": 300.0, "limits": {"memory_bytes": MEMORY}, "steps": ["softmax"]}
    (root / "source" / runner.SETTINGS).write_text(json.dumps(settings), encoding="utf-8")
    _hand_in(root / "submission", EVERY_HOG)
    (root / "results").mkdir()
    env = {**os.environ, isolation.ENV_LEVEL: level.label, "ATTNLAB_KIT": str(kit.ROOT), runner.ENV_ROOT: str(root)}
    done = subprocess.run([python, "-c", GRADESCOPE], env=env, cwd="/", capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert document["score"] == 0 and document["extra_data"]["isolation"] == level.label
    assert any(HOGS_HELD in t["output"].replace("\\", "") for t in document["tests"]), document["tests"][:2]

    cells = _hand_in(tmp_path / "notebook", EVERY_HOG)
    env.pop(runner.ENV_ROOT)
    done = subprocess.run([python, "-c", GRADE_CELLS, str(cells)], env=env, cwd="/", capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["earned"] == 0 and any(HOGS_HELD in m for m in found["messages"]), found
