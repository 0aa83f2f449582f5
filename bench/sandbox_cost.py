"""Benchmark: what one sandbox costs to start and end, and what one request to it costs, all processes counted.

A grade opens a sandbox per step (and one for the oracle and one for the timing run): about 15 for a whole
lab, and a batch of 50 mixed hand-ins about 600. Each is a fork of a fork server (numpy, or numpy and torch),
new namespaces, a keeper and a student process, and their ends. This opens ``--sandboxes`` of each kind one
after the other, each making one call (``softmax`` of the reference), then makes ``--requests`` calls in one,
and prints the CPU of every process involved (the grader, the fork servers, keepers and children: a cpuacct
cgroup, Linux, as root) and the grader's own, per sandbox and per request. The fork servers are started, and
one sandbox of each kind opened, before anything is counted. Not a test: shared machines are noisy.

    python bench/sandbox_cost.py [--sandboxes 20] [--requests 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from batch_scaling import Group  # noqa: E402  (bench/ is this script's own folder on the path)

from autograder.base import tasks, threads  # noqa: E402

SOLUTIONS = ROOT / "solutions" / tasks.LAB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandboxes", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    group = Group()
    group.enter()
    threads.one_thread()  # before NumPy loads, as every grading process does
    from autograder.sandbox import client, zygote
    from autograder.sandbox.isolation import choose

    level = choose()
    client.prestart(numpy=True, level=level)
    zygote.shared(level, torch=True)
    for torch in (False, True):  # both fork servers ready (torch's imports counted nowhere), the modules compiled
        with client.Sandbox(SOLUTIONS, torch=torch) as box:
            box.call("softmax", "softmax", [1.0, 2.0])
    print(f"isolation {level.name}; CPU of every process (cgroup) and of the grader, in ms")
    for torch in (False, True):
        every, own = group.cpu_s(), time.process_time()
        for _ in range(args.sandboxes):
            with client.Sandbox(SOLUTIONS, torch=torch) as box:
                box.call("softmax", "softmax", [1.0, 2.0])
        time.sleep(0.5)  # the last keeper's end is counted
        every, own = group.cpu_s() - every if every is not None else None, time.process_time() - own
        with client.Sandbox(SOLUTIONS, torch=torch) as box:
            box.call("softmax", "softmax", [1.0, 2.0])
            calls, mine = group.cpu_s(), time.process_time()
            for _ in range(args.requests):
                box.call("softmax", "softmax", [1.0, 2.0])
            calls, mine = group.cpu_s() - calls if calls is not None else None, time.process_time() - mine
        kind = "numpy and torch" if torch else "numpy"
        shown = f"{every / args.sandboxes * 1e3:6.1f}" if every is not None else "     ?"
        print(f"  a sandbox ({kind:15s}): {shown} all, {own / args.sandboxes * 1e3:5.1f} grader", end="; ")
        shown = f"{calls / args.requests * 1e3:5.2f}" if calls is not None else "    ?"
        print(f"a request: {shown} all, {mine / args.requests * 1e3:5.2f} grader")
    group.remove()


if __name__ == "__main__":
    main()
