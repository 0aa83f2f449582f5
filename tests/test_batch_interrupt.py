"""An interrupted `attnlab grade-batch` (Ctrl-C, or `kill -INT` of a batch whose shell ignores SIGINT, as a
background job's does) stops its graders, writes the CSV of the students finished, says in one sentence how to
resume, exits 130 with no traceback, and leaves nothing running; the same command resumes. A batch that ends leaves
no grading server behind either. Locally and on a Dask cluster."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import kit

LAB = "lab07_attention"
SLOW_S = 300  # the slow student's softmax sleeps this long at every call
WAIT_S = 300  # for the fast student's result, on a loaded machine


SLOW = f"""

_softmax = softmax


def softmax(*args, **kwargs):
    import time

    time.sleep({SLOW_S})
    return _softmax(*args, **kwargs)
"""


def _class(root: Path) -> Path:
    """Two students: ann (the reference), and slow (whose softmax sleeps at every call: the batch's command line
    gives a call that long)."""
    shutil.copytree(kit.SOLUTIONS, root / "ann" / LAB, ignore=shutil.ignore_patterns("__pycache__"))
    slow = shutil.copytree(kit.SOLUTIONS, root / "slow" / LAB, ignore=shutil.ignore_patterns("__pycache__"))
    softmax = slow / "softmax.py"
    softmax.write_text(softmax.read_text("utf-8") + SLOW, encoding="utf-8")
    return root


def _command(root: Path, out: Path, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "autograder", "grade-batch", str(root), "--csv", str(out / "grades.csv"),
        "--step", "softmax", "-j", "2", "--timeout", str(2 * SLOW_S), "--no-progress", *more,
    ]  # fmt: skip


def _environment(tmp: Path) -> dict[str, str]:
    """The batch's environment, with a temporary folder of its own (where a warm server would leave its socket)."""
    return {**os.environ, "ATTNLAB_SECRET": "interrupt-test", "TMPDIR": str(tmp)}


def _leftovers(tmp: Path) -> list[str]:
    """The processes still running whose environment or working folder names ``tmp`` (the batch's own)."""
    marker = f"TMPDIR={tmp}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environment = (entry / "environ").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")[:200].decode(errors="replace")
        except OSError:
            continue
        if marker in environment or cwd.startswith(str(tmp)):
            found.append(f"{entry.name}: {line}")
    return found


def _none_left(tmp: Path) -> list[str]:
    """:func:`_leftovers`, once those ending have had a few seconds to end."""
    deadline = time.monotonic() + 15
    while _leftovers(tmp) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _leftovers(tmp)


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def _interrupted(command: list[str], out: Path, tmp: Path) -> subprocess.CompletedProcess:
    """Run ``command`` as a shell's background job does (SIGINT ignored), ``kill -INT`` it once ann is graded."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=out,
        env=_environment(tmp),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not (out / "graded" / "students" / "ann.json").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "ann was not graded"
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=SLOW_S)  # ignoring it, it would grade slow, exit 0
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _assert_stopped(done: subprocess.CompletedProcess, out: Path) -> None:
    assert done.returncode == 130, (done.returncode, done.stderr[-3000:])
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("attnlab grade-batch: interrupted: ") and "run the same command again" in last, last
    assert "holds the 1 of 2 students finished (1 graded)" in last, last
    table = _rows(out / "grades.csv")
    assert set(table) == {"ann"} and table["ann"]["total"] == "10"


@pytest.mark.slow
def test_an_interrupted_batch_writes_what_it_finished_and_resumes(tmp_path: Path, short_tmp: Path) -> None:
    root, out, tmp = _class(tmp_path / "submissions"), tmp_path / "out", short_tmp
    out.mkdir()
    _assert_stopped(_interrupted(_command(root, out), out, tmp), out)
    assert not _none_left(tmp), _leftovers(tmp)
    shutil.copyfile(kit.SOLUTIONS / "softmax.py", root / "slow" / LAB / "softmax.py")  # and again, as it says
    done = subprocess.run(_command(root, out), capture_output=True, text=True, timeout=600, cwd=out,
                          env=_environment(tmp))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "this run tried 1 (graded 1, not graded 0) and kept 1 graded before" in done.stdout
    assert {s: r["total"] for s, r in _rows(out / "grades.csv").items()} == {"ann": "10", "slow": "10"}
    assert not _none_left(tmp), _leftovers(tmp)  # a batch that ends stops its warm grading server


@pytest.mark.slow
def test_an_interrupted_batch_on_a_dask_cluster_stops_too(
    tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    root, out, tmp = _class(tmp_path / "submissions"), tmp_path / "out", short_tmp
    out.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the workers' too: their warm servers and graders are found by it
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as dask:
        done = _interrupted(_command(root, out, "--dask", dask.scheduler_address), out, tmp)
        graders = [p for p in _none_left(tmp) if "autograder" in p]  # the workers themselves are the test's
    assert not graders, graders
    _assert_stopped(done, out)


@pytest.mark.slow
def test_a_batch_that_ends_leaves_another_batchs_gradings_alone(tmp_path: Path) -> None:
    """Two batches share this machine's warm grading server; the one that ends stops it, and the other's gradings
    running at that moment finish on the fork server they started with, unharmed."""
    import threading

    from autograder.deliver.batch import run as batch
    from autograder.deliver.warm import client
    from autograder.deliver.warm import job as warm_job
    from autograder.sandbox.client import Limits
    from tests.test_batch import options

    slow = shutil.copytree(kit.SOLUTIONS, tmp_path / "slow" / "ann" / LAB, ignore=shutil.ignore_patterns("__pycache__"))
    (slow / "mask.py").write_text((slow / "mask.py").read_text("utf-8") + "\nimport time\n\ntime.sleep(20)\n", "utf-8")
    shutil.copytree(kit.SOLUTIONS, tmp_path / "fast" / "bo" / LAB, ignore=shutil.ignore_patterns("__pycache__"))
    limits = Limits(call_timeout_s=60, import_timeout_s=60)
    done: dict[str, batch.BatchRun] = {}
    slow_batch = options(tmp_path / "slow", tmp_path / "a", steps=("mask",), limits=limits)
    long = threading.Thread(target=lambda: done.update(slow=batch.run(slow_batch)))
    long.start()
    socket = client.socket_path(warm_job.HANDLER)
    deadline = time.monotonic() + WAIT_S
    while not socket.exists() and long.is_alive():  # the slow batch's grading has begun
        assert time.monotonic() < deadline, "the slow batch started no grading server"
        time.sleep(0.2)
    time.sleep(2)
    short = batch.run(options(tmp_path / "fast", tmp_path / "b", steps=("softmax",)))  # ends, stopping the server
    assert long.is_alive(), "the slow batch ended first: nothing was tested"
    long.join(timeout=600)
    assert _rows(short.csv)["bo"]["total"] == "10"
    assert _rows(done["slow"].csv)["ann"]["total"] == "14", _rows(done["slow"].csv)
