"""``attnlab release OUT``: the student bundle, built from the kit and scanned for leaks before it is kept.

::

    OUT/README.md                            the student's two commands (install the wheel; grade)
    OUT/attnlab-<version>-py3-none-any.whl   the public engine: grader, public checks, snapshots
    OUT/lab07_attention/                     the lab folder: the stubs, the toy model's weights,
                                             the lab notebook (no hidden tests, no model answers),
        handouts/lab07_attention.md          the handout, its figures and its HTML page
        handouts/figures/, handouts/lab07_attention.html

The lab folder is laid out as the nbgrader release's (``release/lab07_attention/``),
so the handout's "where your work goes" holds for both, and ``attnlab grade``
run in ``OUT`` (or in the lab folder) grades it. The bundle is written next to
``OUT`` first and scanned (:mod:`autograder.release.leaks`); a leak removes it
and raises :class:`~autograder.release.leaks.ReleaseLeak`.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder import stubs, tasks
from autograder.kit import Kit
from autograder.release import leaks, readme, wheel

HANDOUTS = "handouts"


class ReleaseError(Exception):
    """The bundle cannot be written as asked; the message says why."""


@dataclass(frozen=True)
class Bundle:
    """A written bundle: its folder, its wheel and its lab folder."""

    root: Path
    wheel: Path

    @property
    def lab(self) -> Path:
        return self.root / tasks.LAB


def build(kit: Kit, out: Path, *, force: bool = False) -> Bundle:
    """Write the student bundle of ``kit`` into ``out`` (empty or absent; ``force``: replace it)."""
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()) and not force:
        raise ReleaseError(f"{out} is not empty; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".attnlab-release-", dir=out.parent))
    try:
        write_lab_folder(kit, stage / tasks.LAB)
        built = wheel.build(kit, stage, readme.text(wheel.file_name(), inside_lab=False))
        (stage / "README.md").write_text(readme.text(built.name, inside_lab=False), encoding="utf-8")
        problems = leaks.scan_folder(stage, leaks.Secrets.of(kit))
        if problems:
            raise leaks.ReleaseLeak(problems)
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return Bundle(out, out / built.name)


def write_lab_folder(kit: Kit, lab: Path) -> Path:
    """``lab`` holding the stubs (generated from the reference, as ``attnlab stubs`` does), the data files, the
    student notebook and the handout (Markdown, figures, HTML); returns ``lab``."""
    from autograder.handout import html

    stubs.write(kit.solutions, lab)
    (lab / student_notebook_name()).write_text(student_notebook(), encoding="utf-8")
    handouts = lab / HANDOUTS
    handouts.mkdir(parents=True, exist_ok=True)
    for page in sorted(kit.handout.parent.glob(f"{tasks.LAB}*.md")):  # the handout and its translations
        shutil.copyfile(page, handouts / page.name)
    if kit.figures.is_dir():
        shutil.copytree(kit.figures, handouts / kit.figures.name, dirs_exist_ok=True)
    html.build(kit, handouts / f"{kit.handout.stem}.html")
    return lab


def student_notebook_name() -> str:
    return f"{tasks.LAB}.ipynb"


def student_notebook() -> str:
    """The lab notebook as students get it: nbgrader's own release steps (solutions and hidden tests cleared,
    cells locked, checksums recomputed) applied to the kit's source notebook."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions, ComputeChecksums, LockCells

    from autograder.nbgrader_course import notebook

    book = notebook.build()
    for step in (LockCells, ClearSolutions, ClearOutput, ClearHiddenTests, ComputeChecksums):
        book, _ = step().preprocess(book, {})
    return notebook.text(book)
