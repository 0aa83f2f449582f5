"""Benchmark: what `attnlab grade` costs beyond starting Python with numpy and torch.

Runs, alternately and in one process tree so both see the same machine load,
`python -c "import numpy, torch"` (the floor any torch-based tool pays) and
`attnlab grade solutions/lab07_attention` for the first three steps, and
prints the medians, the difference and the ratio. Target: the difference is
under 1.5 s on 2 cores. Not a test: timings on shared machines are noisy.

    python bench/grade_overhead.py [--repeats 5] [--step softmax --step scaling --step mask]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(command: list[str], cwd: Path = ROOT) -> float:
    """Wall seconds of one command run in ``cwd`` (it must succeed; its output is discarded)."""
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--step", action="append", default=None)
    args = parser.parse_args()
    steps = args.step or ["softmax", "scaling", "mask"]
    floor = [sys.executable, "-c", "import numpy, torch"]
    grade = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        "solutions/lab07_attention",
        *[a for s in steps for a in ("--step", s)],
    ]
    wall(floor), wall(grade)  # warm the file cache
    floors, grades = [], []
    for _ in range(args.repeats):
        floors.append(wall(floor))
        grades.append(wall(grade))
    f, g = statistics.median(floors), statistics.median(grades)
    print(f"floor  python -c 'import numpy, torch': median {f:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in floors)})")
    print(
        f"grade  attnlab grade ({', '.join(steps)}):   median {g:.2f} s  (runs: "
        f"{', '.join(f'{x:.2f}' for x in grades)})"
    )
    print(f"grading costs {g - f:+.2f} s beyond the floor; ratio {g / f:.2f}")


if __name__ == "__main__":
    main()
