"""Benchmark: what `attnlab grade` costs beyond starting Python with the libraries it needs.

Runs, alternately and in one process tree so that every command sees the same machine load, the floors
(`python -c "import numpy, torch"` and `python -c "import numpy"`) and these grades in a fresh process
(public and hidden checks, the kit's own hidden graders and reference):

- the whole lab of the reference (`solutions/lab07_attention`, 14 steps): target at most 1.5x the numpy+torch floor
  (issue 35; it was 2.0x);
- the whole lab of the untouched stubs (`assignments/lab07_attention`): target at most 0.5x that floor (it was 1.5x);
- the first three steps of the reference (softmax, scaling, mask: numpy only);
- single steps (`--step NAME`): target at most 1.5 s above the floor of the imports that step needs
  (numpy, or numpy and torch for the torch steps).

It prints each command's median wall time, its runs, the ratio and difference against its floor and whether
the target holds, and, where a cpuacct cgroup can be made (Linux, as root), the CPU seconds of everything each
command started (fork servers and sandbox children included: what no other load changes). Not a test: timings
on shared machines are noisy (the load average is printed with them); take the figures on a quiet machine.

Then it prints the profile of the reference's and the stubs' grades (``bench/grade_profile.py``): what each
phase, step and fixed cost takes, for the README's table.

    python bench/grade_overhead.py [--repeats 5] [--single softmax --single kv_cache] [--all-steps] [--no-profile]
        [--without-speedups]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.base import tasks  # noqa: E402

CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1; the v2 "unified" hierarchy is not used here
SOLUTIONS = f"solutions/{tasks.LAB}"
STUBS = f"assignments/{tasks.LAB}"
FIRST_THREE = ("softmax", "scaling", "mask")
SINGLE = ("softmax", "kv_cache")  # one numpy step, one torch step
STEP_MARGIN_S = 1.5


# What --without-speedups turns off, to measure before and after in one alternating run: this round's (issue 23)
# report of untouched steps without running their checks (autograder/handin/pristine.py) and the checks' torch in a
# child of the torch fork server instead of the grader (autograder/judge/oracle.py). The round before's, the early
# start of the fork servers (ATTNLAB_EARLY=0) and the remembered bubblewrap probe (ATTNLAB_PROBE_CACHE=0), stay on.
WITHOUT_SPEEDUPS = {"ATTNLAB_SKIP_UNTOUCHED": "0", "ATTNLAB_ORACLE": "grader"}


def wall(command: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> float:
    """Wall seconds of one command run in ``cwd`` (it must succeed; its output is discarded)."""
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, env={**os.environ, **(env or {})}, check=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - start


def measured(command: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float | None]:
    """Wall seconds of ``command`` and, where a cpuacct cgroup can be made, the CPU seconds of everything it
    started (None elsewhere)."""
    group = CPUACCT / f"attnlab-overhead-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
    except OSError:
        return wall(command, cwd, env), None

    def enter() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))

    started = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, env={**os.environ, **(env or {})}, check=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, preexec_fn=enter,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    cpu = None
    for _ in range(50):  # the fork servers' last processes leave the group once they have exited
        if not (group / "cgroup.procs").read_text().strip():
            cpu = int((group / "cpuacct.usage").read_text()) / 1e9
            break
        time.sleep(0.1)
    try:
        group.rmdir()
    except OSError:
        pass
    return seconds, cpu


@dataclass
class Command:
    """One command of the bench, the floor it is held to and its target."""

    label: str
    argv: list[str]
    floor: str | None = None  # the label of its floor
    max_ratio: float | None = None
    max_extra_s: float | None = None
    env: dict[str, str] = field(default_factory=dict)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)


def grade(folder: str, *steps: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", folder, *[a for s in steps for a in ("--step", s)]]


def commands(singles: tuple[str, ...], without_speedups: bool = False) -> list[Command]:
    both, numpy = "floor numpy+torch", "floor numpy"
    found = [
        Command(both, [sys.executable, "-c", "import numpy, torch"]),
        Command(numpy, [sys.executable, "-c", "import numpy"]),
        Command("whole lab, reference", grade(SOLUTIONS), both, max_ratio=1.5),
        Command("whole lab, stubs", grade(STUBS), both, max_ratio=0.5),
        Command("first three steps, reference", grade(SOLUTIONS, *FIRST_THREE), numpy, max_extra_s=STEP_MARGIN_S),
    ]
    for step in singles:
        floor = both if tasks.step(step).torch else numpy
        found.append(Command(f"--step {step}, reference", grade(SOLUTIONS, step), floor, max_extra_s=STEP_MARGIN_S))
    if without_speedups:  # the same grades with this round's speed-ups off, alternating with the others
        found += [
            replace(command, label=f"{command.label} (before)", env=WITHOUT_SPEEDUPS, walls=[], cpus=[])
            for command in found
            if command.floor
        ]
    return found


def verdict(command: Command, floor: Command) -> str:
    ratio, extra = command.median / floor.median, command.median - floor.median
    target = ""
    if command.max_ratio is not None:
        target = f"target <= {command.max_ratio:.1f}x: {'holds' if ratio <= command.max_ratio else 'MISSED'}"
    elif command.max_extra_s is not None:
        target = f"target <= +{command.max_extra_s:.1f} s: {'holds' if extra <= command.max_extra_s else 'MISSED'}"
    return f"{ratio:.2f}x / {extra:+.2f} s over {floor.label}; {target}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--single", action="append", choices=list(tasks.BY_ID), help="a single step to time")
    parser.add_argument("--all-steps", action="store_true", help="time every step alone")
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help="skip the profiles (bench/grade_profile.py of the reference and stubs)",
    )
    parser.add_argument(
        "--without-speedups",
        action="store_true",
        help="also time each grade with every check of the untouched steps run (ATTNLAB_SKIP_UNTOUCHED=0): "
        "before and after in one run",
    )
    args = parser.parse_args()
    singles = tuple(tasks.BY_ID) if args.all_steps else tuple(args.single or SINGLE)
    bench = commands(singles, args.without_speedups)
    for command in bench:  # warm the file cache (and the kit's bytecode) once
        wall(command.argv, env=command.env)
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        for command in bench:  # alternating: every command sees the same load over the run
            seconds, cpu = measured(command.argv, env=command.env)
            command.walls.append(seconds)
            if cpu is not None:
                command.cpus.append(cpu)
        loads.append(os.getloadavg()[0])
    by_label = {command.label: command for command in bench}
    print(
        f"{args.repeats} alternating runs each, {os.cpu_count()} CPUs, load average "
        f"{min(loads):.1f} to {max(loads):.1f} (medians)"
    )
    for command in bench:
        cpu = f"  cpu {statistics.median(command.cpus):5.2f} s" if command.cpus else ""
        runs = ", ".join(f"{w:.2f}" for w in command.walls)
        line = f"{command.label:34s} {command.median:6.2f} s{cpu}  (runs: {runs})"
        if command.floor:
            line += f"\n{'':34s} {verdict(command, by_label[command.floor])}"
        print(line)
    if not args.no_profile:  # what the README's profile table shows, for the same machine and load
        for folder in (SOLUTIONS, STUBS):
            print(flush=True)
            subprocess.run([sys.executable, str(ROOT / "bench" / "grade_profile.py"), folder], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
