"""How ``held_out.txt`` was drawn (run once, before any diagnosis was designed; the committed file is the split).

    python bench/real_code/split.py > bench/real_code/held_out.txt

Bugs and correct cases apart, each sorted by name and shuffled with ``random.Random(19)``: the first third
(rounded) of each is held out. Cases added later are design cases unless they are added to the file by hand.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real_code import all_cases


def draw() -> list[str]:
    held: list[str] = []
    for kind in (False, True):
        names = sorted(c.name for c in all_cases() if c.correct is kind)
        random.Random(19).shuffle(names)
        held += sorted(names[: round(len(names) / 3)])
    return held


if __name__ == "__main__":
    print("# The held-out third of bench/real_code (drawn by split.py; never used to design the diagnosis)")
    print("\n".join(draw()))
