"""Find the lab's files in what a student handed in: at its top, in one subfolder, or in a notebook.

Gradescope uploads, nbgrader's ``submitted/<student>/<lab>/`` and a folder per
student all hold the lab's step modules (``softmax.py``, ...) somewhere: at
the top, or in one folder below it (a zipped ``lab07_attention/``). A student
who worked in a notebook writes each module with a ``%%writefile softmax.py``
cell; those cells are the modules. The timing report (``reports/timing.json``)
may sit in the lab folder, beside the modules, at the hand-in's top or one
folder down, or in a ``%%writefile reports/timing.json`` cell.
:func:`locate` says where the files are, or why there are none;
:mod:`autograder.handin.intake` takes them into the grader's copy.

The hand-in is only listed here, never followed: every folder is opened by
descriptor without following a link (:mod:`autograder.base.safefs`), a link or a
special file is never counted as a lab file or read, and the listing is
bounded (names per folder, folders in all, the notebook's size). Standard
library only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.base import safefs, tasks
from autograder.base.text import clean
from autograder.i18n import N_, _

MODULE_FILES = tuple(f"{module}.py" for module in tasks.MODULES)
DATA_FILES = ("*.npz",)  # given with the lab (the toy model's weights), shipped as they are
SKIPPED = ("__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git")  # folders a zip or an editor adds
MAX_DEPTH = 2  # the lab's files at the top, in a folder, or in a folder of a folder (nbgrader's <student>/<lab>/)
MAX_NOTEBOOK_BYTES = 32 << 20
MAX_LISTED = 10_000  # names read from one folder while looking for the lab's files
MAX_FOLDERS = 500  # folders looked into in all
# Where the timing report goes in the lab folder (autograder.judge.timing.report.PATH).
REPORT = ("reports", "timing.json")
LOOSE_REPORT = ("timing.json",)  # the report beside the modules (a student who uploaded loose files)
WRITEFILE = re.compile(
    r"\A\s*%%writefile\s+(?:-a\s+)?(?P<name>(?:reports/)?[\w.-]+\.(?:py|json))[ \t]*\r?\n"
)  # %%writefile softmax.py, %%writefile reports/timing.json

NO_FILES = N_(
    "No lab files were found in the submission: hand in the lab's modules ({files}, ...) at its top or in one "
    "folder, or a notebook whose %%writefile cells write them."
)
UNREADABLE_HAND_IN = N_("The hand-in could not be read ({error}), so nothing of it was graded.")
UNREADABLE_FOLDER = N_(
    "No lab files were found in the submission, and the grader may not read its folder {name} ({error}): hand it "
    "in again readable."
)
UNREADABLE_NOTEBOOK = N_("The notebook {name} could not be read ({error}), and no lab files were found beside it.")


@dataclass(frozen=True)
class Located:
    """Where a submission's lab files are: a folder, or notebook cells, or neither (``problem`` says why).

    Every path is relative to ``root`` (a tuple of names), so that the intake opens it again by descriptor.
    """

    root: Path | None = None
    relative: tuple[str, ...] | None = None  # the folder holding the step modules
    notebook_modules: tuple[tuple[str, str], ...] = ()  # (file name, text) from a notebook's %%writefile cells
    notebook_at: tuple[str, ...] | None = None
    report: tuple[str, ...] | None = None  # the timing report outside the lab folder, when it is not inside
    notebook_report: str | None = None  # the text of a %%writefile reports/timing.json cell
    problem: str = ""

    @property
    def found(self) -> bool:
        return self.relative is not None or bool(self.notebook_modules)

    @property
    def folder(self) -> Path | None:
        """The folder holding the step modules (None for a notebook)."""
        return None if self.root is None or self.relative is None else self.root.joinpath(*self.relative)

    @property
    def notebook(self) -> Path | None:
        return None if self.root is None or self.notebook_at is None else self.root.joinpath(*self.notebook_at)


def locate(root: Path) -> Located:
    """The lab's files under ``root``: the folder (``root`` or below it) with the most step modules, else the
    notebook with the most %%writefile cells of step modules, else the reason there are none."""
    root = Path(root)
    try:
        top = safefs.open_root(root)
    except FileNotFoundError:
        return Located(problem=_(NO_FILES).format(files=", ".join(MODULE_FILES[:3])))
    except OSError as error:
        return Located(problem=_(UNREADABLE_HAND_IN).format(error=_error(error)))
    unreadable: list[tuple[tuple[str, ...], OSError]] = []
    with safefs.opened(top):
        listed = _folders(top, unreadable)
        ranked = sorted(listed, key=lambda item: (-_count(item[1]), len(item[0]), item[0]))
        if ranked and _count(ranked[0][1]):
            relative = ranked[0][0]
            report = None if _has(ranked[0][1], REPORT) else _report(top, relative, listed)
            return Located(root=root, relative=relative, report=report)
        problems: list[str] = []
        best: Located | None = None
        for parts, names in listed:
            for entry in names:
                if entry.kind is not None or entry.folder or not entry.name.endswith(".ipynb"):
                    continue
                try:
                    modules, report_text = _notebook_at(top, parts, entry.name)
                except ValueError as error:
                    problems.append(_(UNREADABLE_NOTEBOOK).format(name=clean(entry.name, 120), error=error))
                    continue
                if modules and (best is None or len(modules) > len(best.notebook_modules)):
                    report = None if report_text is not None else _report(top, parts, listed)
                    best = Located(
                        root=root,
                        notebook_modules=modules,
                        notebook_at=(*parts, entry.name),
                        report=report,
                        notebook_report=report_text,
                    )
    if best is not None:
        return best
    if not problems and unreadable:
        name, error = unreadable[0]
        problems.append(_(UNREADABLE_FOLDER).format(name=clean("/".join(name) or ".", 120), error=_error(error)))
    return Located(problem=problems[0] if problems else _(NO_FILES).format(files=", ".join(MODULE_FILES[:3])))


def _error(error: OSError) -> str:
    """An error of the file system in a few words (``PermissionError: Permission denied``), never a full path."""
    return clean(f"{type(error).__name__}: {error.strerror or error}", 200)


def located_at(folder: Path) -> Located:
    """The lab folder ``folder`` itself (``attnlab grade FOLDER``, an nbgrader submission), with its timing report
    beside the modules when it is not in ``reports/``."""
    folder = Path(folder)
    try:
        top = safefs.open_root(folder)
    except OSError:
        return Located(problem=_(NO_FILES).format(files=", ".join(MODULE_FILES[:3])))
    with safefs.opened(top):
        try:
            names = safefs.entries(top, MAX_LISTED)
        except OSError:
            names = []
        report = None if _has(names, REPORT) else _report(top, (), [((), names)])
    return Located(root=folder, relative=(), report=report)


def notebook_modules(path: Path) -> tuple[tuple[str, str], ...]:
    """The step modules a notebook's ``%%writefile <module>.py`` code cells write (the last cell per file wins);
    ValueError when the file is not a readable notebook. The notebook itself is opened without following a link."""
    path = Path(path)
    with safefs.opened(safefs.open_root(path.parent)) as folder:
        return _notebook_at(folder, (), path.name)[0]


def _notebook_at(top: int, parts: tuple[str, ...], name: str) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The step modules and the timing report (text, or None) that notebook ``parts/name`` writes."""
    try:
        with safefs.opened(safefs.open_below(top, parts)) as folder:
            raw = safefs.read_file(folder, name, MAX_NOTEBOOK_BYTES)
    except safefs.TooBig:
        raise ValueError(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB") from None
    except OSError as error:
        raise ValueError(f"not a regular file: {type(error).__name__}") from None
    try:
        cells = json.loads(raw.decode("utf-8"))["cells"]
        sources = [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c.get("cell_type") == "code"
        ]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, UnicodeDecodeError) as error:
        raise ValueError(f"not a notebook: {type(error).__name__}") from None
    found: dict[str, str] = {}
    report = None
    for source in sources:
        match = WRITEFILE.match(source) if isinstance(source, str) else None
        if match is None:
            continue
        if match.group("name") in MODULE_FILES:
            found[match.group("name")] = source[match.end() :]
        elif match.group("name") in ("/".join(REPORT), *LOOSE_REPORT):
            report = source[match.end() :]
    return tuple(sorted(found.items())), report


def data_files(folder: Path) -> list[Path]:
    """The lab's given data files in ``folder`` (the reference's are what the stubs ship)."""
    return sorted(path for pattern in DATA_FILES for path in Path(folder).glob(pattern) if path.is_file())


def _folders(
    top: int, unreadable: list[tuple[tuple[str, ...], OSError]] | None = None
) -> list[tuple[tuple[str, ...], list[safefs.Entry]]]:
    """``(relative path, names)`` of the root and its folders down to :data:`MAX_DEPTH`, without the ones zips and
    editors add, hidden ones or links (each opened by descriptor, never followed); the folders the grader's user may
    not read go into ``unreadable`` with their error."""
    found: list[tuple[tuple[str, ...], list[safefs.Entry]]] = []
    level: list[tuple[str, ...]] = [()]
    for _depth in range(MAX_DEPTH + 1):
        below: list[tuple[str, ...]] = []
        for parts in level:
            if len(found) >= MAX_FOLDERS:
                return found
            try:
                with safefs.opened(safefs.open_below(top, parts)) as folder:
                    names = safefs.entries(folder, MAX_LISTED)
            except safefs.NotPlain:
                continue  # swapped for a link: not where the lab's files are
            except safefs.TooBig:
                continue  # too full to be the lab's folder
            except OSError as error:
                if unreadable is not None:
                    unreadable.append((parts, error))
                continue
            found.append((parts, names))
            below += [
                (*parts, entry.name)
                for entry in names
                if entry.folder and entry.name not in SKIPPED and not entry.name.startswith(".")
            ]
        level = below
    return found


def _count(names: list[safefs.Entry]) -> int:
    """How many of the lab's module names a folder holds (a link under that name counts: the intake says why it
    was left out)."""
    return sum(entry.name in MODULE_FILES and not entry.folder for entry in names)


def _has(names: list[safefs.Entry], relative: tuple[str, ...]) -> bool:
    return any(entry.name == relative[0] and (entry.folder or len(relative) == 1) for entry in names)


def _report(
    top: int, lab: tuple[str, ...], listed: list[tuple[tuple[str, ...], list[safefs.Entry]]]
) -> tuple[str, ...] | None:
    """Where the timing report is when it is not in the lab folder's ``reports/``: beside the modules, at the
    hand-in's top (in ``reports/`` or loose), or one folder down; a name that is not a regular file is kept too
    (the intake reports it as left out)."""
    tops = [parts for parts, _names in listed if len(parts) == 1]
    candidates = [(*lab, *LOOSE_REPORT), REPORT, LOOSE_REPORT]
    for folder in tops:
        candidates += [(*folder, *REPORT), (*folder, *LOOSE_REPORT)]
    for candidate in dict.fromkeys(candidates):
        try:
            with safefs.opened(safefs.open_below(top, candidate[:-1])) as folder:
                names = safefs.entries(folder, MAX_LISTED)
            if any(entry.name == candidate[-1] and not entry.folder for entry in names):
                return candidate
        except OSError:
            continue
    return None
