"""Benchmark: how `attnlab grade-batch` grows with the class, on this machine, measured rather than assumed.

Makes a class of submissions (a mix: the reference, the untouched release, partial ones with the first steps done,
buggy ones with a known mistake; the same mix at every size) and grades it with ``-j 1``, ``-j 2`` and a Dask
``LocalCluster`` of two single-threaded worker processes on loopback (``--dask``), each from a cold start (its
warm server stopped first). For each it prints the students per minute, the CPU seconds per student of every
process the run started (where a cpuacct cgroup can be made: Linux, as root), the peak memory of all of them
together (the memory cgroup's high-water mark) and the peak of the largest single process (each process's
``VmHWM``, sampled every 0.2 s: a warm worker, a fork server, a Dask worker), so an instructor can read how the
cost grows and that a worker's memory stays flat as the class grows. Not a test: shared machines are noisy; the
load average is printed.

    python bench/batch_scaling.py [--students 300] [--sizes 50,300] [--runs j1,j2,dask]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hand_ins  # noqa: E402  (bench/ is this script's own folder on the path)

from autograder.base import tasks  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402
from autograder.deliver.warm import job as warm_job  # noqa: E402

LAB = tasks.LAB
RELEASE = ROOT / "assignments" / LAB
CGROUPS = Path("/sys/fs/cgroup")
SAMPLE_S = 0.2
CLUSTER = (  # a LocalCluster of two single-threaded worker processes on loopback; its address on stdout
    "import sys\n"
    "from distributed import LocalCluster\n"
    "cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host='127.0.0.1',"
    " dashboard_address=None)\n"
    "print(cluster.scheduler_address, flush=True)\n"
    "sys.stdin.read()\n"
    "cluster.close()\n"
)


def kind_of(number: int) -> str:
    """The mix, the same at every class size: 4 in 10 the reference, 2 the release, 2 partial, 2 buggy."""
    return ("reference", "release", "partial", "buggy", "reference")[number % 5]


def make_class(root: Path, students: int) -> dict[str, str]:
    """``root/s001/<lab>/...``: ``students`` hand-ins of the mix; student id -> kind."""
    kinds = {}
    for number in range(1, students + 1):
        kind = kinds[f"s{number:03d}"] = kind_of(number)
        folder = root / f"s{number:03d}" / LAB
        shutil.copytree(RELEASE, folder, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
        hand_ins.fill(folder, kind, number)
    return kinds


class Group:
    """A cpuacct and a memory cgroup (v1) that a command and everything it starts run in; inert where none can be
    made."""

    def __init__(self) -> None:
        name = f"attnlab-scaling-{os.getpid()}-{time.monotonic_ns()}"
        self.folders = []
        for controller in ("cpuacct", "memory"):
            folder = CGROUPS / controller / name
            with contextlib.suppress(OSError):
                folder.mkdir()
                self.folders.append(folder)

    def enter(self) -> None:
        """Move the calling process in (a ``preexec_fn``)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def _read(self, controller: str, name: str) -> int | None:
        for folder in self.folders:
            if folder.parent.name == controller:
                with contextlib.suppress(OSError, ValueError):
                    return int((folder / name).read_text())
        return None

    def cpu_s(self) -> float | None:
        usage = self._read("cpuacct", "cpuacct.usage")
        return None if usage is None else usage / 1e9

    def peak_bytes(self) -> int | None:
        return self._read("memory", "memory.max_usage_in_bytes")

    def pids(self) -> list[int]:
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        return []

    def remove(self) -> None:
        for folder in self.folders:
            for _ in range(50):  # the servers' last processes leave the group
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.2)


def _hwm_bytes(pid: int) -> int:
    """The peak resident memory of process ``pid`` (``VmHWM``), 0 if it is gone."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _command(pid: int) -> str:
    """What process ``pid`` runs, in a few words (its command line's first 80 characters)."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80].strip()
    return "?"


@contextlib.contextmanager
def largest_process(group: Group) -> Iterator[list[Any]]:
    """The peak resident memory of the largest single process of ``group`` while the block runs (sampled), and
    what that process runs: ``[bytes, command]``."""
    peak: list[Any] = [0, ""]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            for pid in group.pids():
                size = _hwm_bytes(pid)
                if size > peak[0]:
                    peak[:] = [size, _command(pid)]

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join()


def run(name: str, submitted: Path, out: Path) -> dict[str, float | None]:
    """One cold grade-batch run of the class; its wall and CPU seconds and peak memories."""
    client.stop(warm_job.HANDLER)
    group = Group()
    command = [sys.executable, "-m", "autograder", "grade-batch", str(submitted), "--csv", str(out / "grades.csv")]
    command += ["--no-progress"]
    cluster = None
    if name == "dask":
        cluster = subprocess.Popen(
            [sys.executable, "-c", CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            preexec_fn=group.enter, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        command += ["--dask", cluster.stdout.readline().strip()]
    else:
        command += ["-j", name.removeprefix("j")]
    with largest_process(group) as largest:
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       preexec_fn=group.enter)  # fmt: skip
        seconds = time.perf_counter() - started
        client.stop(warm_job.HANDLER)
        if cluster is not None:
            cluster.communicate("", timeout=60)
    figures = {"wall_s": seconds, "cpu_s": group.cpu_s(), "peak": group.peak_bytes(), "largest": largest[0] or None,
               "largest_command": largest[1]}  # fmt: skip
    group.remove()
    return figures


def _mib(value: float | None) -> str:
    return "?" if value is None else f"{value / 2**20:.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,300", help="class sizes, comma separated")
    parser.add_argument("--runs", default="j1,j2,dask", help="j1, j2 (grade-batch -j N) and dask, comma separated")
    args = parser.parse_args()
    runs = args.runs.split(",")
    seen: dict[str, list[tuple[int, float | None, float]]] = {name: [] for name in runs}  # (students, CPU, wall)
    for students in (int(size) for size in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="attnlab-scaling-") as work:
            kinds = make_class(Path(work) / "class", students)
            mix = {kind: list(kinds.values()).count(kind) for kind in dict.fromkeys(kinds.values())}
            print(f"{students} students ({', '.join(f'{k} {v}' for k, v in mix.items())})", flush=True)
            for name in runs:
                f = run(name, Path(work) / "class", Path(work) / f"out-{name}")
                seen[name].append((students, f["cpu_s"], f["wall_s"]))
                cpu = "?" if f["cpu_s"] is None else f"{f['cpu_s'] / students:.2f} s"
                print(
                    f"  {name:5} {f['wall_s']:7.1f} s  {students / f['wall_s'] * 60:6.1f} students/min  "
                    f"CPU {cpu} per student  peak {_mib(f['peak'])} in all, {_mib(f['largest'])} the largest "
                    f"process ({f['largest_command']})",
                    flush=True,
                )
    for name, rows in seen.items():  # what one more student costs: the fixed start-up cost taken out
        (small, cpu_small, wall_small), (large, cpu_large, wall_large) = min(rows), max(rows)
        if large > small:
            extra = large - small
            cpu = "" if cpu_small is None or cpu_large is None else f", {(cpu_large - cpu_small) / extra:.2f} s CPU"
            wall = (wall_large - wall_small) / extra
            print(f"  {name:5} each student past the first {small}: {wall:.2f} s wall{cpu}")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"load average at the end: {' '.join(load)}")


if __name__ == "__main__":
    main()
