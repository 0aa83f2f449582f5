"""Find the lab's files in what a student handed in: at its top, in one subfolder, or in a notebook.

Gradescope uploads, nbgrader's ``submitted/<student>/<lab>/`` and a folder per
student all hold the lab's step modules (``softmax.py``, ...) somewhere: at
the top, or in one folder below it (a zipped ``lab07_attention/``). A student
who worked in a notebook writes each module with a ``%%writefile softmax.py``
cell; those cells are the modules. :func:`locate` says where the files are, or
why there are none, and :func:`prepare` lays them out in a folder to grade,
with the lab's given data files (the toy model's weights) where the student
did not include them. Standard library only.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder import tasks

MODULE_FILES = tuple(f"{module}.py" for module in tasks.MODULES)
DATA_FILES = ("*.npz",)  # given with the lab (the toy model's weights), shipped as they are
SKIPPED = ("__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git")  # folders a zip or an editor adds
MAX_DEPTH = 2  # the lab's files at the top, in a folder, or in a folder of a folder (nbgrader's <student>/<lab>/)
MAX_NOTEBOOK_BYTES = 32 << 20
WRITEFILE = re.compile(r"\A\s*%%writefile\s+(?:-a\s+)?(?P<name>[\w.-]+\.py)\s*\n")

NO_FILES = (
    "No lab files were found in the submission: hand in the lab's modules ({files}, ...) at its top or in one "
    "folder, or a notebook whose %%writefile cells write them."
)
UNREADABLE_NOTEBOOK = "The notebook {name} could not be read ({error}), and no lab files were found beside it."


@dataclass(frozen=True)
class Located:
    """Where a submission's lab files are: a folder, or notebook cells, or neither (``problem`` says why)."""

    folder: Path | None = None  # the folder holding the step modules
    notebook_modules: tuple[tuple[str, str], ...] = ()  # (file name, text) from a notebook's %%writefile cells
    notebook: Path | None = None
    problem: str = ""

    @property
    def found(self) -> bool:
        return self.folder is not None or bool(self.notebook_modules)


def locate(root: Path) -> Located:
    """The lab's files under ``root``: the folder (``root`` or below it) with the most step modules, else the
    notebook with the most %%writefile cells of step modules, else the reason there are none."""
    root = Path(root)
    folders = sorted(_folders(root), key=lambda f: (-_count(f), len(f.relative_to(root).parts), str(f)))
    if folders and _count(folders[0]):
        return Located(folder=folders[0])
    problems = []
    best: Located | None = None
    for path in sorted(p for f in folders for p in f.glob("*.ipynb") if p.is_file() and not p.is_symlink()):
        try:
            modules = notebook_modules(path)
        except ValueError as error:
            problems.append(UNREADABLE_NOTEBOOK.format(name=path.name, error=error))
            continue
        if modules and (best is None or len(modules) > len(best.notebook_modules)):
            best = Located(notebook_modules=modules, notebook=path)
    if best is not None:
        return best
    return Located(problem=problems[0] if problems else NO_FILES.format(files=", ".join(MODULE_FILES[:3])))


def notebook_modules(path: Path) -> tuple[tuple[str, str], ...]:
    """The step modules a notebook's ``%%writefile <module>.py`` code cells write (the last cell per file wins);
    ValueError when the file is not a readable notebook."""
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB")
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c.get("cell_type") == "code"
        ]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, UnicodeDecodeError) as error:
        raise ValueError(f"not a notebook: {type(error).__name__}") from None
    found: dict[str, str] = {}
    for source in sources:
        match = WRITEFILE.match(source) if isinstance(source, str) else None
        if match and match.group("name") in MODULE_FILES:
            found[match.group("name")] = source[match.end() :]
    return tuple(sorted(found.items()))


def prepare(located: Located, into: Path, given: Sequence[Path] = ()) -> Path:
    """``into`` holding the located lab files (copied, or written from the notebook) and the ``given`` data files
    the submission lacks; returns ``into``."""
    into = Path(into)
    if located.folder is not None:
        shutil.copytree(
            located.folder, into, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED), dirs_exist_ok=True
        )
    else:
        into.mkdir(parents=True, exist_ok=True)
    for name, text in located.notebook_modules:
        (into / name).write_text(text, encoding="utf-8")
    for data in given:
        if not (into / data.name).exists():
            shutil.copyfile(data, into / data.name)
    return into


def data_files(folder: Path) -> list[Path]:
    """The lab's given data files in ``folder`` (the reference's are what the stubs ship)."""
    return sorted(path for pattern in DATA_FILES for path in Path(folder).glob(pattern) if path.is_file())


def _folders(root: Path) -> list[Path]:
    """``root`` and its folders down to :data:`MAX_DEPTH`, without the ones zips and editors add or links."""
    found, level = [], [root] if root.is_dir() else []
    for _ in range(MAX_DEPTH + 1):
        found.extend(level)
        level = [
            child
            for folder in level
            for child in sorted(folder.iterdir())
            if child.is_dir()
            and not child.is_symlink()
            and child.name not in SKIPPED
            and not child.name.startswith(".")
        ]
    return found


def _count(folder: Path) -> int:
    return sum((folder / name).is_file() for name in MODULE_FILES)
