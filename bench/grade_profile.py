"""Profile: where `attnlab grade` spends its time, phase by phase and process by process.

Grades one folder (default: the reference, public and hidden checks, the whole lab) in this process, the steps
one after the other (``ATTNLAB_LANES=0``, so each step's cost is its own), and prints for each phase (the
grader's imports, pytest's start-up and collection, each step) its wall time, the CPU time of the grader
process and, where a cpuacct cgroup can be made (Linux, as root), the CPU time of every process involved (the
sandbox's fork servers and children too). Then the fixed costs measured on their own: the floor
(``import numpy, torch``), the grader's imports, pytest's start-up, a fork server's start with and without
torch, one sandbox child of each. Not a test: timings on shared machines are noisy; compare within one run.

    python bench/grade_profile.py [FOLDER] [--step NAME ...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class Clock:
    """Wall time, this process's CPU time, and the CPU time of this process tree (a cgroup) where one can be made."""

    def __init__(self) -> None:
        self.group: Path | None = CPUACCT / f"attnlab-profile-{os.getpid()}"
        try:
            self.group.mkdir()
            (self.group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            self.group = None

    def now(self) -> tuple[float, float, float | None]:
        tree = int((self.group / "cpuacct.usage").read_text()) / 1e9 if self.group else None
        return time.perf_counter(), time.process_time(), tree


def run_cpu(code: str, clock: Clock) -> tuple[float, float | None]:
    """Wall and tree CPU seconds of ``python -c code`` (a child of this process, in its cgroup)."""
    before = clock.now()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    after = clock.now()
    return after[0] - before[0], None if after[2] is None else after[2] - before[2]


def row(label: str, wall: float, grader: float | None, tree: float | None) -> str:
    fields = [
        f"{wall:6.2f}",
        "      " if grader is None else f"{grader:6.2f}",
        "      " if tree is None else f"{tree:6.2f}",
    ]
    return f"{label:34s} {'  '.join(fields)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="solutions/lab07_attention")
    parser.add_argument("--step", action="append", default=None)
    args = parser.parse_args()
    os.environ["ATTNLAB_LANES"] = "0"
    clock = Clock()
    marks = [("start", *clock.now())]

    def mark(name: str) -> None:
        marks.append((name, *clock.now()))

    sys.path.insert(0, str(ROOT))
    from autograder.base import threads

    threads.one_thread()  # as `attnlab grade` does, before NumPy loads (autograder.base.threads)
    from autograder.grading import engine
    from autograder.grading.checklist import step_of

    mark("grader imports (engine, pytest, numpy)")

    class Profiled(engine.GradingPlugin):
        current: str | None = None

        def pytest_collection_finish(self, session) -> None:
            mark("pytest start-up and collection")

        def pytest_runtest_setup(self, item) -> None:
            step = step_of(item).id
            if step != Profiled.current:
                if Profiled.current:
                    mark(f"step {Profiled.current}")
                Profiled.current = step
            super().pytest_runtest_setup(item)

        def pytest_sessionfinish(self) -> None:
            mark(f"step {Profiled.current}")
            super().pytest_sessionfinish()

    engine.GradingPlugin = Profiled
    from autograder.base.kit import Kit

    kit = Kit.find()
    report = engine.grade(
        engine.GradeOptions(
            submission=ROOT / args.folder,
            hidden=kit.hidden if kit else None,
            reference=kit.solutions if kit else None,
            seed=engine.seed_for(engine.DEFAULT_SECRET, Path(args.folder).name),
            steps=tuple(args.step) if args.step else None,
        )
    )
    mark("report")
    print(f"{args.folder}: {report.earned:g} of {report.possible:g} points, isolation {report.isolation}")
    print(f"load average {os.getloadavg()[0]:.1f}; the steps one after the other (ATTNLAB_LANES=0)")
    print(f"{'phase':34s} {'wall':>6s}  {'grader':>6s}  {'all':>6s}   (seconds; CPU of the grader, of every process)")
    for (_, w0, c0, t0), (name, w1, c1, t1) in itertools.pairwise(marks):
        print(row(name, w1 - w0, c1 - c0, None if t0 is None else t1 - t0))
    _, w0, c0, t0 = marks[0]
    _, w1, c1, t1 = marks[-1]
    print(row("total", w1 - w0, c1 - c0, None if t0 is None else t1 - t0))
    print(f"\n{'fixed cost, measured alone':34s} {'wall':>6s}  {'':6s}  {'all':>6s}")
    probes = {
        "floor: import numpy, torch": "import numpy, torch",
        "floor: import numpy": "import numpy",
        "grader imports (cli, engine)": "import autograder.cli.grade",
        "pytest start-up, no test": "import pytest, io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    pytest.main(['--co', '-q', '-c', '/dev/null', '-p', 'no:cacheprovider', '/nonexistent'])",
        "fork server without torch, ready": "from autograder.sandbox import zygote, isolation\n"
        "z = zygote.shared(isolation.choose(), torch=False); from autograder.sandbox.client import Sandbox\n"
        "with Sandbox('solutions/lab07_attention', torch=False) as box: box.call('softmax', 'softmax', [1.0, 2.0])",
        "fork server with torch, ready": "from autograder.sandbox import zygote, isolation\n"
        "z = zygote.shared(isolation.choose(), torch=True); from autograder.sandbox.client import Sandbox\n"
        "with Sandbox('solutions/lab07_attention', torch=True) as box: box.call('softmax', 'softmax', [1.0, 2.0])",
    }
    for label, code in probes.items():
        wall, tree = run_cpu(code, clock)
        print(row(label, wall, None, tree))
    if clock.group is not None:
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        try:
            clock.group.rmdir()
        except OSError:
            pass


if __name__ == "__main__":
    main()
