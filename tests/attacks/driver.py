"""Grade an attack submission, then the reference, in one grader process, through the ``attnlab`` command.

``python -m tests.attacks.driver ATTACK REFERENCE HIDDEN ATTACK_JSON REFERENCE_JSON SEED HOOK``: the attack suite
runs this in a fresh process per attack, so that the reference graded right after the attack in the *same*
process proves the attack left nothing behind there. Exit status: the attack's grading's, or the reference's
when that was not 0. ``HOOK`` is ``hook`` or ``no-hook``: without the audit hook, the operating system's
isolation alone must hold.
"""

from __future__ import annotations

import functools
import sys

from autograder import cli
from autograder.cli import grade
from autograder.sandbox.client import Limits

MEMORY = 2 << 30  # each child's address space and cgroup memory: an attack that spends it cannot starve the machine


def main(argv: list[str]) -> int:
    attack, reference, hidden, attack_json, reference_json, seed, hook = argv
    grade.Limits = functools.partial(Limits, memory_bytes=MEMORY, audit_hook=hook != "no-hook")
    common = ["--step", "softmax", "--hidden", hidden, "--reference", reference, "--seed", seed]
    code = cli.main(["grade", attack, "--json", attack_json, *common])
    print("=== the reference, same process ===", flush=True)
    again = cli.main(["grade", reference, "--json", reference_json, *common])
    return code or again


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
