"""``attnlab release OUT``: the student bundle, built from the kit and scanned for leaks before it is kept.

::

    OUT/README.md                            the student's two commands (install the wheel; grade)
    OUT/attnlab-<version>-py3-none-any.whl   the public engine: grader, public checks, snapshots
    OUT/lab07_attention/                     the lab folder: the stubs, the toy model's weights,
                                             the lab notebook (no hidden tests, no model answers),
        handouts/lab07_attention.md          the handout, every translation of it
        handouts/lab07_attention.tr.md, ...  (one per handouts/lab07_attention.<lang>.md of the kit),
        handouts/lab07_attention.html, ...   the HTML page of each, and the figures
        handouts/figures/

The lab folder is laid out as the nbgrader release's (``release/lab07_attention/``),
so the handout's "where your work goes" holds for both, and ``attnlab grade``
run in ``OUT`` (or in the lab folder) grades it. The bundle is open to every
user (folders 755, files 644) whatever the umask, so a course web server or a
TA can read it: it never holds the course secret. The bundle is written next to
``OUT`` first and scanned (:mod:`autograder.deliver.release.leaks`); a leak removes it
and raises :class:`~autograder.deliver.release.leaks.ReleaseLeak`. ``--force`` replaces
only a folder this command wrote, unchanged (:mod:`autograder.deliver.release.guard`:
its manifest ``OUT/.attnlab-manifest.json``), never one that holds the kit, a
git repository, the current folder or a home.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.deliver.release import guard, leaks, readme, stubs, wheel

HANDOUTS = "handouts"
FOLDER_MODE, FILE_MODE = 0o755, 0o644  # a release is readable by everyone (the secret never goes into one)


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
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} is a file; give a folder for the bundle")
    if out.exists() and any(out.iterdir()) and not force:
        raise ReleaseError(f"{out} is not empty; pass --force to replace an earlier bundle written there")
    if not out.parent.is_dir():
        raise ReleaseError(f"the folder {out.parent} does not exist; make it first or give another place")
    replaced = out.exists() and any(out.iterdir())
    reason = guard.never_removed(out, kit.root) if out.exists() else None
    if reason:  # even an empty folder: the bundle's folder is renamed into place, so `out` itself is replaced
        raise ReleaseError(f"{reason}: the bundle is never written there; give a new or empty folder")
    if replaced:
        try:
            guard.replaceable(out, "release", kit.root)
        except guard.Refused as error:
            raise ReleaseError(str(error)) from None
    stage = Path(tempfile.mkdtemp(prefix=".attnlab-release-", dir=out.parent))  # mode 700 until it is complete
    try:
        write_lab_folder(kit, stage / tasks.LAB)
        built = wheel.build(kit, stage, readme.text(wheel.file_name(), inside_lab=False))
        (stage / "README.md").write_text(readme.text(built.name, inside_lab=False), encoding="utf-8")
        problems = leaks.scan_folder(stage, leaks.Secrets.of(kit))
        if problems:
            raise leaks.ReleaseLeak(problems)
        guard.write_manifest(stage, "release")  # what a later --force may replace
        open_to_everyone(stage)
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return Bundle(out, out / built.name)


def write_lab_folder(kit: Kit, lab: Path) -> Path:
    """``lab`` holding the stubs (generated from the reference, as ``attnlab stubs`` does), the data files, the
    student notebook and the handout (Markdown, figures, HTML); returns ``lab``."""
    stubs.write(kit.solutions, lab)
    (lab / student_notebook_name()).write_text(student_notebook(), encoding="utf-8")
    write_handouts(kit, lab / HANDOUTS)
    return lab


def handout_languages(kit: Kit) -> tuple[str, ...]:
    """The languages the kit has a handout in, read from its files (``lab07_attention.md`` is English,
    ``lab07_attention.<lang>.md`` a translation), English first."""
    found = set()
    for page in kit.handout.parent.glob(f"{tasks.LAB}*.md"):
        middle = page.name[len(tasks.LAB) : -len(".md")]  # "" or ".<lang>"
        if middle == "" or (middle.startswith(".") and middle[1:].isalpha()):
            found.add(middle[1:] or "en")
    return tuple(sorted(found, key=lambda lang: (lang != "en", lang)))


def write_handouts(kit: Kit, handouts: Path) -> list[Path]:
    """``handouts`` holding the handout in every language the kit has, the HTML page of each and the figures
    (what a student release holds: the bundle's lab folder, the nbgrader course's source); the files written."""
    from autograder.deliver.handout import html

    handouts.mkdir(parents=True, exist_ok=True)
    written = []
    for lang in handout_languages(kit):
        page = kit.handout_for(lang)
        written.append(Path(shutil.copyfile(page, handouts / page.name)))
        written.append(html.build(kit, handouts / f"{page.name.removesuffix('.md')}.html", lang))
    if kit.figures.is_dir():
        shutil.copytree(kit.figures, handouts / kit.figures.name, dirs_exist_ok=True)
        written.append(handouts / kit.figures.name)
    return written


def open_to_everyone(folder: Path) -> None:
    """Make ``folder`` and everything in it readable by every user (folders 755, files 644; links left alone)."""
    folder.chmod(FOLDER_MODE)
    for path in sorted(folder.rglob("*")):
        if not path.is_symlink():
            path.chmod(FOLDER_MODE if path.is_dir() else FILE_MODE)


def student_notebook_name() -> str:
    return f"{tasks.LAB}.ipynb"


def student_notebook() -> str:
    """The lab notebook as students get it: nbgrader's own release steps (solutions and hidden tests cleared,
    cells locked, checksums recomputed) applied to the kit's source notebook."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearOutput, ClearSolutions, ComputeChecksums, LockCells

    from autograder.deliver.nbgrader_course import notebook

    book = notebook.build()
    for step in (LockCells, ClearSolutions, ClearOutput, ClearHiddenTests, ComputeChecksums):
        book, _ = step().preprocess(book, {})
    return notebook.text(book)
