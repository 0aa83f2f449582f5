"""Benchmark: `attnlab grade-batch -j 2` against `nbgrader autograde` of the same 50 submissions, in one run.

Builds one course (``attnlab nbgrader-course``, ``nbgrader generate_assignment``)
in a temporary folder and puts 50 submissions into ``submitted/``, a mix:
the reference with its timing report, the untouched release, partial ones
(the reference's first steps, stubs after), buggy ones (a known mistake in
softmax or scaling) and one hostile one (exits at import, tries to read the
private folder). Then it times, once each and one after the other,
``nbgrader autograde`` of all 50 (its warm grading server stopped first) and
``attnlab grade-batch`` of the course's ``submitted/`` with ``-j 2`` (the same
hidden graders, reference, secret and limits from the course's private folder;
its warm server stopped first), and prints both throughputs, the ratio and
whether both gave every student the same autograded score. Where the kernel's
cpuacct cgroup is writable (Linux, as root) each command runs in a cgroup of
its own, so the CPU time of all it started (detached warm servers and sandbox
children included) is measured too: the per-student cost that does not depend
on what else the machine runs. Not a test: timings on shared machines are
noisy; the load average is printed with them.

``--batch-only`` skips ``nbgrader autograde`` (about four minutes of the run) and prints, for
``grade-batch`` alone, its wall time and CPU, the mean seconds a student of each kind took in the batch
(each job's own wall time, from the students' result files) and how many of the machine's cores were busy
while it ran (``/proc/stat``, everything on the machine): the quick loop for work on the batch's speed.

    python bench/batch_vs_nbgrader.py [--students 50] [--jobs 2] [--batch-only]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hand_ins  # noqa: E402  (bench/ is this script's own folder on the path)
from batch_scaling import Group  # noqa: E402
from grade_overhead import wall  # noqa: E402

from autograder.base import tasks  # noqa: E402
from autograder.deliver.nbgrader_course import cells, course  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402
from autograder.deliver.warm import job as warm_job  # noqa: E402

LAB = tasks.LAB
HOSTILE = "import os\nopen({private!r} + '/secret').read()\nos._exit(0)\n"


def kind_of(number: int, students: int) -> str:
    """The mix: 30% reference, 20% release, 20% partial, 28% buggy, and the last one hostile."""
    if number == students:
        return "hostile"
    share = number / students
    return "reference" if share <= 0.3 else "release" if share <= 0.5 else "partial" if share <= 0.7 else "buggy"


def submit(root: Path, number: int, kind: str) -> None:
    folder = root / "submitted" / f"s{number:03d}" / LAB
    shutil.copytree(root / "release" / LAB, folder)
    hand_ins.fill(folder, kind, number)
    if kind == "hostile":
        (folder / "softmax.py").write_text(HOSTILE.format(private=str(root / "private")), encoding="utf-8")


def measured(command: list[str], cwd: Path, stop: list[tuple]) -> tuple[float, float | None]:
    """Wall seconds of ``command`` and, where a cpuacct cgroup can be made, the CPU seconds of everything it
    started (its warm server is stopped through ``stop``'s ``(handler, scope)`` before the cgroup is read)."""
    group = Group()
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=group.enter)  # fmt: skip
    seconds = time.perf_counter() - started
    for handler, scope in stop:
        client.stop(handler, scope)
    cpu = group.cpu_s()
    group.remove()
    return seconds, cpu


class BusyCores:
    """How many of the machine's cores were busy, on average, while the block ran (``/proc/stat``: every process
    on the machine counts, the grader's and anyone else's); None where there is no ``/proc/stat``."""

    STAT = Path("/proc/stat")

    def __enter__(self) -> BusyCores:
        self.average: float | None = None
        self._start = self._read()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._read()
        if self._start is not None and end is not None:
            busy_s = (end - self._start) / os.sysconf("SC_CLK_TCK")
            self.average = busy_s / max(time.perf_counter() - self._wall, 1e-9)

    def _read(self) -> int | None:
        try:
            fields = [int(v) for v in self.STAT.read_text().splitlines()[0].split()[1:]]
        except (OSError, ValueError, IndexError):
            return None
        return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def seconds_by_kind(out: Path, kinds: dict[int, str]) -> dict[str, float]:
    """The mean seconds a student of each kind took in the batch (its job's wall time, from its result file)."""
    found: dict[str, list[float]] = {}
    for path in sorted((out / "students").glob("s*.json")):
        with contextlib.suppress(OSError, ValueError, KeyError):
            seconds = float(json.loads(path.read_text(encoding="utf-8"))["seconds"])
            found.setdefault(kinds.get(int(path.stem[1:]), "?"), []).append(seconds)
    return {kind: statistics.mean(values) for kind, values in found.items()}


def mix_text(kinds: dict[int, str]) -> str:
    """How many submissions of each kind, in the order the kinds first appear: "reference 15, release 10, ..."."""
    kinds_in_order = list(kinds.values())
    return ", ".join(f"{kind} {kinds_in_order.count(kind)}" for kind in dict.fromkeys(kinds_in_order))


def scores_nbgrader(root: Path) -> dict[str, float]:
    with open(root / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}


def scores_batch(path: Path) -> dict[str, float]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student_id"]: float(row["total"]) for row in csv.DictReader(handle)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it (the course, both outputs)")
    parser.add_argument("--batch-only", action="store_true", help="time grade-batch alone (no nbgrader autograde)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
    with (
        contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory(prefix="attnlab-") as work
    ):
        root = Path(work) / "course"
        course.write_course(course.CourseOptions(folder=root, kit=ROOT))
        wall([sys.executable, "-m", "nbgrader", "generate_assignment", LAB], root)
        kinds = {number: kind_of(number, args.students) for number in range(1, args.students + 1)}
        for number, kind in kinds.items():
            submit(root, number, kind)
        if not args.batch_only:
            client.stop(cells.HANDLER, root / "private")
            nbgrader_s, nbgrader_cpu = measured(
                [sys.executable, "-m", "nbgrader", "autograde", LAB], root, [(cells.HANDLER, root / "private")]
            )
            wall([sys.executable, "-m", "nbgrader", "export"], root)
        client.stop(warm_job.HANDLER)
        out = Path(work) / "batch"
        command = [sys.executable, "-m", "autograder", "grade-batch", str(root / "submitted"), "--out", str(out)]
        with BusyCores() as busy:
            batch_s, batch_cpu = measured(
                [*command, "--csv", str(out / "grades.csv"), "-j", str(args.jobs), "--no-progress"],
                Path(work),
                [(warm_job.HANDLER, None)],
            )
        by_kind = seconds_by_kind(out, kinds)
        if args.batch_only:
            report_batch(args, kinds, batch_s, batch_cpu, busy.average, by_kind)
            return
        by_nbgrader, by_batch = scores_nbgrader(root), scores_batch(out / "grades.csv")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    same = sum(abs(by_nbgrader.get(s, -1) - by_batch.get(s, -2)) < 1e-9 for s in by_batch)
    n = args.students
    print(f"{n} submissions ({mix_text(kinds)}); load average {' '.join(load)}")
    print(f"  nbgrader autograde:          {nbgrader_s:7.1f} s  {n / nbgrader_s * 60:6.1f} students per minute")
    print(
        f"  attnlab grade-batch -j {args.jobs}:    {batch_s:7.1f} s  {n / batch_s * 60:6.1f} students per minute "
        f"({batch_s / n:.2f} s per student)"
    )
    print(f"  ratio (grade-batch / nbgrader throughput): {nbgrader_s / batch_s:.2f}x")
    print(f"  same autograded score from both: {same} of {len(by_batch)} students")
    for student in sorted(by_batch):
        if abs(by_nbgrader.get(student, -1) - by_batch[student]) >= 1e-9:
            print(
                f"    {student} ({kinds.get(int(student[1:]), '?')}): nbgrader {by_nbgrader.get(student)}, "
                f"grade-batch {by_batch[student]}"
            )
    if nbgrader_cpu is not None and batch_cpu is not None:
        print(
            f"  CPU time per student (all processes each started): nbgrader {nbgrader_cpu / n:.2f} s, "
            f"grade-batch {batch_cpu / n:.2f} s; on {args.jobs} otherwise idle cores grade-batch would do "
            f"{args.jobs * 60 * n / batch_cpu:.1f} students per minute, nbgrader (one at a time) at most "
            f"{60 * n / nbgrader_cpu:.1f}: {args.jobs * nbgrader_cpu / batch_cpu:.2f}x"
        )


def report_batch(
    args: argparse.Namespace,
    kinds: dict[int, str],
    batch_s: float,
    batch_cpu: float | None,
    busy: float | None,
    by_kind: dict[str, float],
) -> None:
    """``--batch-only``'s figures: the batch's wall time and CPU, each kind's seconds, the busy cores."""
    n = args.students
    print(f"{n} submissions ({mix_text(kinds)}), grade-batch -j {args.jobs} alone")
    cpu = f", {batch_cpu / n:.2f} s of CPU a student (every process)" if batch_cpu is not None else ""
    print(f"  {batch_s:.1f} s, {n / batch_s * 60:.1f} students per minute{cpu}")
    if busy is not None:
        print(f"  cores busy while it ran: {busy:.2f} of {os.cpu_count()} (the whole machine)")
    print("  seconds a student took, by kind: " + ", ".join(f"{k} {v:.2f}" for k, v in by_kind.items()))


if __name__ == "__main__":
    main()
