"""Where the handout's sources and outputs live in the instructor kit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder import tasks


def default_root() -> Path:
    """The kit's source tree (the folder holding ``handouts/`` and ``solutions/``)."""
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Kit:
    """The paths the handout is generated from and written to, under one kit root."""

    root: Path

    @property
    def handout(self) -> Path:
        return self.root / tasks.HANDOUT

    @property
    def figures(self) -> Path:
        return self.handout.parent / "figures"

    @property
    def data(self) -> Path:
        return self.handout.parent / "data"

    @property
    def html(self) -> Path:
        return self.handout.parent / "build" / f"{tasks.LAB}.html"

    @property
    def solutions(self) -> Path:
        return self.root / "solutions" / tasks.LAB

    @property
    def assignments(self) -> Path:
        return self.root / "assignments" / tasks.LAB

    @property
    def public_graders(self) -> Path:
        return self.root / "autograder" / "graders" / tasks.LAB

    @property
    def hidden_graders(self) -> Path:
        return self.root / "hidden" / tasks.LAB
