"""Benchmark: what the namespaces layer costs, and what a hang costs.

1. Whole-lab `attnlab grade solutions/lab07_attention` with the namespaces layer
   (bubblewrap) and with the audit hook only (``ATTNLAB_ISOLATION=hook``),
   alternately in one run so both see the same machine load: medians and the
   ratio. Target: namespaces under 10% more wall time.
2. The whole lab with a softmax that sleeps forever and ignores SIGTERM (the
   reference with that one change): wall time and the other steps' points.
   Target: under 60 s on 2 cores, every step that does not call softmax
   unaffected.

Not a test: timings on a shared machine are noisy; say the load average.

    python bench/isolation.py [--repeats 3]
"""

from __future__ import annotations

import argparse
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
REFERENCE = ROOT / "solutions" / "lab07_attention"
HANG = """
    import signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(10**6)
"""


def grade(folder: Path, level: str, json_path: Path) -> float:
    """Wall seconds of one whole-lab grade of ``folder`` at isolation ``level`` (it must succeed)."""
    env = {**os.environ, "ATTNLAB_ISOLATION": level}
    command = [sys.executable, "-m", "autograder", "grade", str(folder), "--json", str(json_path)]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def hanging_softmax(into: Path) -> Path:
    """The reference with a softmax that never returns (and ignores SIGTERM)."""
    folder = into / "hanging-softmax"
    shutil.copytree(REFERENCE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "softmax.py"
    text = path.read_text(encoding="utf-8")
    body = text.index('"""', text.index('"""', text.index("def softmax(")) + 3) + 3
    path.write_text(text[:body] + "\n" + HANG + text[body:], encoding="utf-8")
    return folder


def step_points(json_path: Path) -> dict[str, float]:
    points: dict[str, float] = {}
    for test in json.loads(json_path.read_text(encoding="utf-8"))["tests"]:
        points[test["tags"][0]] = points.get(test["tags"][0], 0.0) + float(test["score"])
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-") as scratch:
        out = Path(scratch) / "results.json"
        grade(REFERENCE, "namespaces", out)  # warm the file cache
        runs: dict[str, list[float]] = {"namespaces": [], "hook": []}
        for _ in range(args.repeats):
            for level in runs:
                runs[level].append(grade(REFERENCE, level, out))
        medians = {level: statistics.median(times) for level, times in runs.items()}
        for level, times in runs.items():
            shown = ", ".join(f"{t:.2f}" for t in times)
            print(f"whole lab, {level:<10}: median {medians[level]:.2f} s  (runs: {shown})")
        print(f"namespaces / hook: {medians['namespaces'] / medians['hook']:.3f} (target: under 1.10)")

        grade(REFERENCE, "namespaces", out)
        expected = step_points(out)
        hanging = hanging_softmax(Path(scratch))
        seconds = grade(hanging, "namespaces", out)
        found = step_points(out)
        changed = sorted(step for step, points in expected.items() if found.get(step) != points)
        print(f"whole lab with a hanging softmax (SIGTERM ignored): {seconds:.1f} s (target: under 60 s)")
        print(f"  steps that lost points: {', '.join(changed)}; every other step unaffected")
    print(f"load average: {Path('/proc/loadavg').read_text().split()[:3] if Path('/proc/loadavg').exists() else '?'}")


if __name__ == "__main__":
    main()
