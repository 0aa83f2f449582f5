"""Profile: where a batch's CPU goes, process by process, for every process `attnlab grade-batch` starts.

Runs ``grade-batch -j 1`` of ``--students`` copies of the reference (complete, honest hand-ins) from a cold start
under the kernel's process accounting (``acct(2)``: one record per process that ends, with its CPU time and its
parent; Linux, as root), so that the detached warm server, its workers, the sandbox's fork servers, the keepers
and every sandbox child are counted, however short-lived, which a sampling profiler in the grading process cannot
see. The records are grouped by role, from the shape of the process tree:

- the coordinator (``grade-batch`` itself: discovery, records, feedback pages, the class summary, copy flags);
- the warm server (its imports, once) and its workers (one per student: pytest, the checks, the comparisons);
- the fork servers (their imports, once) and the sandbox children (a keeper and a child per grader file and per
  trusted computation: every call of student code, and the checks' own torch).

Each role also shows its minor page faults (from the same records): a process forked from one that holds torch
copies every page of its parent it writes to, reference counts included, so a child that reads many of its
parent's objects pays for it in faults (see the benchmark's fifth pass).

Run twice with two class sizes, the difference is what one more student costs. Not a test: shared machines are
noisy. Written by hand: no profiling library reads process accounting, and a sampler (py-spy, pyinstrument)
counts a process blocked on its child as busy or misses the children that live a few milliseconds.

    python bench/batch_profile.py [--students 6]
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import hand_ins  # noqa: E402  (bench/ is this script's own folder on the path)

from autograder.base import tasks  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402
from autograder.deliver.warm import job as warm_job  # noqa: E402

LAB = tasks.LAB
# struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime, then comp_t
# utime, stime, mem, io, rw, minflt, majflt, swaps, and the command's first 16 bytes.
ACCT_V3 = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
Record = collections.namedtuple("Record", "pid ppid comm cpu_s faults")  # faults: minor page faults


def comp_t(value: int) -> int:
    """A ``comp_t``: a 13-bit mantissa and a base-8 exponent in 3 bits."""
    return (value & 0x1FFF) << (((value >> 13) & 7) * 3)


def accounted(command: list[str], into: Path) -> list[Record]:
    """Run ``command`` with process accounting on; a record for every process that ended meanwhile."""
    libc = ctypes.CDLL(None, use_errno=True)
    into.write_bytes(b"")
    if libc.acct(os.fsencode(into)) != 0:
        raise SystemExit(f"process accounting refused ({os.strerror(ctypes.get_errno())}): run as root on Linux")
    try:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client.stop(warm_job.HANDLER)  # its server and fork servers end, and are counted
        time.sleep(3)
    finally:
        libc.acct(None)
    data, hertz, found = into.read_bytes(), os.sysconf("SC_CLK_TCK"), []
    for offset in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        fields = ACCT_V3.unpack_from(data, offset)
        if fields[1] == 3:
            cpu = (comp_t(fields[10]) + comp_t(fields[11])) / hertz
            name = fields[18].split(b"\0")[0].decode(errors="replace")
            found.append(Record(fields[6], fields[7], name, cpu, comp_t(fields[15])))
    return found


def roles(records: list[Record], students: int) -> dict[str, list[tuple[float, int]]]:
    """CPU seconds and minor page faults by role (each a list: one entry per process of that role)."""
    children = collections.defaultdict(list)
    for record in records:
        children[record.ppid].append(record)
    found: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    placed: set[int] = set()
    for record in records:
        mine = children[record.pid]
        if len(mine) >= students and all(not children[c.pid] for c in mine):  # the warm server and its workers
            found["warm server (imports, once)"].append((record.cpu_s, record.faults))
            found["warm workers (one per student)"] += [
                (c.cpu_s, c.faults) for c in mine if c.comm.startswith("python")
            ]
            placed |= {record.pid, *(c.pid for c in mine)}
        elif sum(1 for c in mine if children[c.pid]) >= students:  # a fork server: keepers with a child each
            found["fork servers (imports, once)"].append((record.cpu_s, record.faults))
            for keeper in mine:
                group = [keeper, *children[keeper.pid]]
                found["sandbox children (keeper and child)"].append(
                    (sum(c.cpu_s for c in group), sum(c.faults for c in group))
                )
                placed |= {c.pid for c in group}
            placed.add(record.pid)
    found["coordinator and the rest"] = [(r.cpu_s, r.faults) for r in records if r.pid not in placed]
    return found


def by_label(records: list[Record]) -> dict[str, tuple[int, float, int]]:
    """The sandbox children's CPU by what they served: each keeper (``ak:<label>``) and student process
    (``as:<label>``) carries its sandbox's label (a step's id, ``oracle``, ``timing``); (processes, CPU seconds,
    minor page faults)."""
    found: dict[str, list[Record]] = collections.defaultdict(list)
    for record in records:
        if record.comm[:3] in ("ak:", "as:"):
            found[f"{record.comm[3:]} ({'keeper' if record.comm[1] == 'k' else 'student process'})"].append(record)
    return {label: (len(rs), sum(r.cpu_s for r in rs), sum(r.faults for r in rs)) for label, rs in found.items()}


def make_class(root: Path, students: int, kind: str) -> None:
    """``students`` hand-ins of the release, each made ``kind`` (see ``hand_ins.fill``)."""
    for number in range(1, students + 1):
        folder = root / f"s{number:03d}" / LAB
        shutil.copytree(ROOT / "assignments" / LAB, folder, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
        hand_ins.fill(folder, kind, number)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--kind", choices=hand_ins.KINDS, default="reference")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnlab-profile-") as work:
        make_class(Path(work) / "class", args.students, args.kind)
        client.stop(warm_job.HANDLER)
        command = [sys.executable, "-m", "autograder", "grade-batch", str(Path(work) / "class"), "--csv"]
        command += [str(Path(work) / "out" / "grades.csv"), "-j", "1", "--no-progress"]
        started = time.perf_counter()
        records = accounted(command, Path(work) / "pacct")
        seconds = time.perf_counter() - started
    total = sum(r.cpu_s for r in records)
    n = args.students
    print(f"{n} {args.kind} hand-ins, -j 1: {seconds:.1f} s wall, {total:.2f} s CPU in {len(records)} processes")
    for role, costs in sorted(roles(records, n).items(), key=lambda item: -sum(c[0] for c in item[1])):
        cpus, faults = [c[0] for c in costs], sum(c[1] for c in costs)
        spread = ""
        if len(cpus) > 1:
            spread = f", median {statistics.median(cpus):.3f} s, largest {max(cpus):.2f} s"
        print(
            f"  {sum(cpus):7.2f} s  {sum(cpus) / n:5.2f} s per student  {role}: {len(cpus)} processes{spread}; "
            f"{faults / n:,.0f} page faults a student"
        )
    print("sandbox children by label (a step's id, the oracle, the timing run):")
    for label, (count, cpu, faults) in sorted(by_label(records).items(), key=lambda item: -item[1][1]):
        print(
            f"  {cpu:7.2f} s  {cpu / n:5.3f} s per student  {label}: {count / n:.1f} a student, "
            f"{faults / n:,.0f} page faults"
        )


if __name__ == "__main__":
    main()
