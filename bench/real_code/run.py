"""Grade every real-code case and report what the diagnosis caught and named.

    python bench/real_code/run.py [--set design|held-out|all] [--case NAME ...] [--json PATH] [--verbose]

A bug is *caught* when it loses points on its step (public and hidden checks),
and *named* when the failed checks of that step name every mistake its case
lists (a composed diagnosis ``a&b`` names both ``a`` and ``b``). A correct case
is *at full* when it loses no point on its step and on every step whose
reference module imports a module it replaced, except the checks of the one
rule it may legitimately break; a correct case must never get a named mistake
on any check (``misnamed``). The held-out third (``held_out.txt``) is reported
apart: it was kept out of the diagnosis design, so its figures are the honest
ones. The default set is the design set, so that nobody looks at the held-out
outcomes by accident while working on the diagnosis.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autograder.base import tasks  # noqa: E402
from autograder.grading import engine  # noqa: E402
from autograder.judge import checking, diagnose  # noqa: E402
from bench.real_code import RealCase, all_cases, held_out  # noqa: E402

SOLUTIONS = ROOT / "solutions" / tasks.LAB
HIDDEN = ROOT / "hidden" / tasks.LAB
SEED = 20261219


@dataclass
class Outcome:
    name: str
    step: str
    correct: bool
    held_out: bool
    provenance: str
    steps: tuple[str, ...]
    lost: dict[str, float] = field(default_factory=dict)  # step -> points lost
    failed: list[str] = field(default_factory=list)  # failed check ids
    named: list[str] = field(default_factory=list)  # every mistake part named by a failed check of the case's step
    expected: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    misnamed: list[str] = field(default_factory=list)  # correct cases: checks that named a mistake
    outside_rule: list[str] = field(default_factory=list)  # correct cases: failed checks the rule does not cover
    seconds: float = 0.0

    @property
    def caught(self) -> bool:
        return self.lost.get(self.step, 0.0) > 0

    @property
    def is_named(self) -> bool:
        return self.caught and all(names_one_of(want, self.named) for want in self.expected)

    @property
    def at_full(self) -> bool:
        return self.correct and not self.outside_rule and not self.misnamed


def names_one_of(wanted: str, named: list[str]) -> bool:
    """Whether ``named`` holds one of the alternatives of ``wanted`` (``a|b``; ``*`` matches any run of characters)."""
    return any(fnmatch.fnmatchcase(name, alternative) for alternative in wanted.split("|") for name in named)


def steps_using(modules: set[str]) -> tuple[str, ...]:
    """The steps whose reference modules are ``modules`` or import them (directly or not); never timing."""
    imports = {
        path.stem: set(re.findall(r"^from (\w+) import", path.read_text(encoding="utf-8"), re.M))
        for path in SOLUTIONS.glob("*.py")
    }
    using, grew = set(modules), True
    while grew:
        more = {name for name, imported in imports.items() if imported & using} - using
        using, grew = using | more, bool(more)
    return tuple(s.id for s in tasks.STEPS if s.module in using and s.id != "timing")


def evaluate(case: RealCase, into: Path, held: frozenset[str]) -> Outcome:
    started = time.perf_counter()
    steps = (case.step,) if not case.correct else steps_using({r.module for r in case.replacements})
    steps = tuple(dict.fromkeys((case.step, *steps)))
    report = engine.grade(
        engine.GradeOptions(
            submission=case.build(SOLUTIONS, into), hidden=HIDDEN, reference=SOLUTIONS, seed=SEED, steps=steps
        )
    )
    outcome = Outcome(
        case.name, case.step, case.correct, case.name in held, case.provenance, steps, expected=list(case.names)
    )
    for result in report.steps:
        if result.earned < result.possible:
            outcome.lost[result.step.id] = result.possible - result.earned
        for check in result.failed:
            outcome.failed.append(check.id)
            if result.step.id == case.step:
                outcome.messages.append(check.message)
                if check.mistake:
                    outcome.named.extend(p for p in diagnose.parts(check.mistake) if p not in outcome.named)
            if case.correct and check.mistake:
                outcome.misnamed.append(f"{check.id}: {check.mistake}")
            if case.correct and not (case.rule and check.id.startswith(case.rule)):
                outcome.outside_rule.append(check.id)
    outcome.seconds = time.perf_counter() - started
    return outcome


def share(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / total:.0f}%)" if total else "0/0"


def summary(outcomes: list[Outcome], title: str) -> list[str]:
    bugs = [o for o in outcomes if not o.correct]
    good = [o for o in outcomes if o.correct]
    return [
        f"{title}: {len(bugs)} bugs, {len(good)} correct implementations",
        f"  bugs caught (lose points on their step): {share(sum(o.caught for o in bugs), len(bugs))}",
        f"  bugs named (every listed mistake named): {share(sum(o.is_named for o in bugs), len(bugs))}",
        f"  correct ones at full (rule checks aside): {share(sum(o.at_full for o in good), len(good))}",
        f"  correct ones with a named mistake:        {share(sum(bool(o.misnamed) for o in good), len(good))}",
    ]


def line(o: Outcome) -> str:
    if o.correct:
        verdict = "full" if o.at_full else f"LOST {o.outside_rule} {o.misnamed}"
    else:
        verdict = ("named" if o.is_named else "CAUGHT, not named" if o.caught else "MISSED") + f" {o.named}"
        if not o.is_named:
            verdict += f" (wanted {o.expected})"
    return f"{'H' if o.held_out else ' '} {o.name:34} {o.step:13} {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("design", "held-out", "all"), default="design")
    parser.add_argument("--case", action="append", default=[], help="only these cases (repeatable)")
    parser.add_argument("--json", type=Path, help="also write every outcome as JSON")
    parser.add_argument("--verbose", action="store_true", help="print the failed checks' messages")
    args = parser.parse_args(argv)
    held = held_out()
    chosen = [
        c
        for c in all_cases()
        if (args.set == "all" or (c.name in held) == (args.set == "held-out"))
        and (not args.case or c.name in args.case)
    ]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="real-code-") as tmp:
        broken = Path(tmp) / "broken.log"
        os.environ[checking.BROKEN_LOG] = str(broken)  # a diagnosis that breaks is counted, not hidden
        for case in chosen:
            outcome = evaluate(case, Path(tmp), held)
            outcomes.append(outcome)
            print(line(outcome), flush=True)
            if args.verbose:
                for message in outcome.messages:
                    print("      " + message)
        crashes = broken.read_text(encoding="utf-8").count("Traceback") if broken.is_file() else 0
        if crashes and args.verbose:
            print(broken.read_text(encoding="utf-8"))
    print()
    design, held_back = [o for o in outcomes if not o.held_out], [o for o in outcomes if o.held_out]
    for title, group in (("design set", design), ("held-out set", held_back)):
        if group:
            print("\n".join(summary(group, title)))
    print(f"diagnoses that broke (the check kept its message): {crashes}")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
