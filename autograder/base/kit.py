"""The instructor kit: how it is found, and every path inside it.

The kit is the instructor's repository: ``solutions/`` (the reference),
``hidden/`` (the hidden graders), ``assignments/`` (the generated stubs),
``handouts/`` and the ``autograder`` package itself. A student's install (the
release wheel) has no kit, so :meth:`Kit.find` returns None there and every
instructor path is simply absent. This is the one place that knows the
layout; everything else asks a :class:`Kit`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks

ENV_KIT = "ATTNLAB_KIT"  # points at an instructor kit somewhere else
PACKAGE = Path(__file__).resolve().parents[1]  # the installed (or source) autograder package
# The commands a student's install (the release wheel) has; every other command needs the kit.
STUDENT_COMMANDS = ("grade", "timing", "workbench", "doctor")


@dataclass(frozen=True)
class Kit:
    """The paths of one instructor kit, under ``root``."""

    root: Path

    @classmethod
    def find(cls, cwd: Path | None = None) -> Kit | None:
        """The instructor kit: ``$ATTNLAB_KIT`` if set, else the source tree this package sits in, else ``cwd``.

        A folder is a kit when it holds ``hidden/<lab>`` and ``solutions/<lab>``. None in a student's install.
        """
        if os.environ.get(ENV_KIT):
            candidates = [Path(os.environ[ENV_KIT])]
        else:
            candidates = [PACKAGE.parent, Path.cwd() if cwd is None else Path(cwd)]
        for candidate in candidates:
            kit = cls(candidate.resolve())
            if kit.is_kit():
                return kit
        return None

    @classmethod
    def source_tree(cls) -> Kit:
        """The tree this package sits in (the kit's own repository), kit or not."""
        return cls(PACKAGE.parent)

    def is_kit(self) -> bool:
        return self.hidden.is_dir() and self.solutions.is_dir()

    # -- the lab's folders ------------------------------------------------
    @property
    def solutions(self) -> Path:
        """The reference solution (instructor only)."""
        return self.root / "solutions" / tasks.LAB

    @property
    def hidden(self) -> Path:
        """The hidden graders (instructor only)."""
        return self.root / "hidden" / tasks.LAB

    @property
    def assignments(self) -> Path:
        """The generated stubs and the lab notebook: what students start from."""
        return self.root / "assignments" / tasks.LAB

    @property
    def public_graders(self) -> Path:
        return self.root / "autograder" / "grading" / "graders" / tasks.LAB

    @property
    def lock(self) -> Path:
        """The course lock: pinned versions of the kit's needs (students, the Gradescope zip)."""
        return self.root / "requirements" / "lock.txt"

    # -- the handout ------------------------------------------------------
    @property
    def handout(self) -> Path:
        return self.root / tasks.HANDOUT

    def handout_for(self, lang: str) -> Path:
        """The handout in language ``lang`` (``handouts/lab07_attention.tr.md``; English is :attr:`handout`)."""
        return self.root / tasks.handout_file(lang)

    def html_for(self, lang: str) -> Path:
        """Where the HTML page of the handout in ``lang`` is built."""
        return self.html if lang == "en" else self.html.with_name(f"{tasks.LAB}.{lang}.html")

    @property
    def figures(self) -> Path:
        return self.handout.parent / "figures"

    @property
    def data(self) -> Path:
        return self.handout.parent / "data"

    @property
    def html(self) -> Path:
        return self.handout.parent / "build" / f"{tasks.LAB}.html"
