"""How ``held_out.txt`` was drawn (each draw run once, before the diagnosis it measures was designed).

    python bench/real_code/split.py > bench/real_code/held_out.txt

Two draws, each over its own cases: bugs and correct cases apart, each sorted by name and shuffled with
``random.Random(seed)``, the first third (rounded) of each held out. The first (seed 19) drew from the cases of
``cases_core``, ``cases_later`` and ``cases_positions`` before the variant search was designed; the second
(seed 32) from ``cases_traced`` (issue 32) before the diagnosis that follows the student's computation was built.
Cases added later are design cases unless they are added to the file by hand.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real_code import RealCase, all_cases

DRAWS = (  # (the case modules of one draw, its seed), in the order they were drawn
    (("cases_core", "cases_later", "cases_positions"), 19),
    (("cases_traced",), 32),
)


def draw(cases: list[RealCase], seed: int) -> list[str]:
    """The held-out third of ``cases``: a third of the bugs and a third of the correct ones."""
    held: list[str] = []
    for kind in (False, True):
        names = sorted(c.name for c in cases if c.correct is kind)
        random.Random(seed).shuffle(names)
        held += sorted(names[: round(len(names) / 3)])
    return held


def module_of(case: RealCase) -> str:
    """The case module (``cases_core``, ...) that defines ``case``."""
    from bench import real_code

    for info in __import__("pkgutil").iter_modules(real_code.__path__):
        if info.name.startswith("cases_"):
            module = __import__(f"bench.real_code.{info.name}", fromlist=["CASES"])
            if case in module.CASES:
                return info.name
    raise LookupError(case.name)


def draws() -> list[list[str]]:
    """Every draw's held-out names, in the order of :data:`DRAWS`."""
    cases = all_cases()
    owner = {case.name: module_of(case) for case in cases}
    return [draw([c for c in cases if owner[c.name] in modules], seed) for modules, seed in DRAWS]


if __name__ == "__main__":
    print("# The held-out third of bench/real_code (drawn by split.py; never used to design the diagnosis)")
    first, *later = draws()
    print("\n".join(first))
    for modules, names in zip(DRAWS[1:], later):
        print(f"# drawn from {', '.join(modules[0])} (seed {modules[1]}) before issue 32's diagnosis was built")
        print("\n".join(names))
