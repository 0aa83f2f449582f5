"""The one intake of a hand-in: what the grader takes into its own copy, and what it leaves out and why.

Every path that receives a submission (``attnlab grade``, ``grade-batch`` with
threads or on Dask, the Gradescope runner, the nbgrader grade cells) grades a
copy the engine makes with :func:`take_in`, never the hand-in itself:

- the lab's files are found by :func:`autograder.handin.submission.locate` (a folder, or
  a notebook's ``%%writefile`` cells; the timing report wherever a student would
  reasonably put it);
- the lab folder is walked iteratively, each folder and file opened by
  descriptor without following a link (:mod:`autograder.base.safefs`); only regular
  files and folders are taken. A symbolic link, FIFO, device or socket is never
  followed, opened or written through: it becomes an :class:`Ignored` fact of
  the report, and the check that needed it says why it was missing; so does a
  file or folder the grader's user may not read (a zip's mode-000 folder):
  whatever a hand-in holds, the rest of it is graded;
- limits: :data:`MAX_DEPTH` folders deep, :data:`MAX_FILES` names, :data:`MAX_BYTES`
  bytes in all; past one, :class:`HandInRefused` (one sentence, never a traceback);
- folders zips, editors and virtual environments add (``__MACOSX``,
  ``__pycache__``, ``.git``, any hidden folder, a folder holding ``pyvenv.cfg``,
  ``node_modules``) are left out without a word;
- the copy is written name by name with ``O_CREAT | O_EXCL | O_NOFOLLOW``
  relative to the copy's own folders; the kit's given data files (the toy
  model's weights) are added only there, only where the hand-in has none.

:func:`fingerprint` digests a hand-in by the same walk (a batch resumes on the
files it would grade, never on what a link points to). :func:`copy_tree` and
:func:`copy_from` copy a taken-in folder on into a sandbox's working copy by the
same rules. Standard library only: the sandbox's child and the notebook kernel
import it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.base import safefs
from autograder.base.text import clean
from autograder.handin import submission

MAX_DEPTH = 32
MAX_FILES = 2000  # names taken or left out, folders included
MAX_BYTES = 64 << 20
LEFT_OUT_FOLDERS = frozenset({*submission.SKIPPED, "node_modules"})
VENV_MARK = "pyvenv.cfg"

# Why a whole hand-in was not taken in (stable ids; autograder.judge.messages words them).
TOO_DEEP, TOO_MANY, TOO_LARGE = "too_deep", "too_many", "too_large"
NO_LAB_FILES, UNREADABLE = "no_lab_files", "unreadable"

Exclude = Callable[[tuple[str, ...], safefs.Entry], bool]  # (relative path, what it is) -> leave it out


@dataclass(frozen=True)
class Ignored:
    """A name of the hand-in the grader did not take: ``path`` (relative, ``/``-separated, control characters
    escaped) is a ``kind`` (:data:`autograder.base.safefs.LINK`, ``FIFO``, ``DEVICE``, ``SOCKET``, ``OTHER``), or
    :data:`autograder.base.safefs.UNREADABLE` (the grader's user may not read it)."""

    path: str
    kind: str


class HandInRefused(Exception):
    """The hand-in was not taken in at all: ``kind`` (:data:`TOO_DEEP`, ...), the ``limit`` it passed, where
    (``path``), or the finder's own ``detail`` (:data:`NO_LAB_FILES`)."""

    def __init__(self, kind: str, limit: int = 0, path: str = "", detail: str = "") -> None:
        super().__init__(detail or f"{kind} ({limit}) at {path}")
        self.kind, self.limit, self.path, self.detail = kind, limit, path, detail


@dataclass(frozen=True)
class TakenIn:
    """The grader's copy of a hand-in: where it is, what was left out, where the lab's files came from."""

    folder: Path
    ignored: tuple[Ignored, ...] = ()
    source: str = "files"  # "files" or "notebook"
    files: int = 0
    bytes: int = 0


@dataclass
class _Budget:
    """What a walk may still take: names, bytes."""

    names: int = 0
    bytes: int = 0
    ignored: list[Ignored] = field(default_factory=list)

    def name(self, parts: tuple[str, ...]) -> None:
        self.names += 1
        if self.names > MAX_FILES:
            raise HandInRefused(TOO_MANY, MAX_FILES, shown(parts))

    def spend(self, parts: tuple[str, ...], size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_BYTES:
            raise HandInRefused(TOO_LARGE, MAX_BYTES, shown(parts))

    @property
    def left(self) -> int:
        return max(MAX_BYTES - self.bytes, 0)


def shown(parts: tuple[str, ...]) -> str:
    """A relative path as a report shows it: ``/``-separated, control characters escaped, bounded."""
    return clean("/".join(parts), 300) or "."


# -- the walk -------------------------------------------------------------------------------------------------
class _Sink:
    """Where a walk puts what it takes."""

    def folder(self, parts: tuple[str, ...]) -> None:
        raise NotImplementedError

    def file(self, parts: tuple[str, ...], data: bytes) -> None:
        raise NotImplementedError


class _Copy(_Sink):
    """Writes into the folder descriptor ``root``, name by name, never over an existing name or through a link."""

    def __init__(self, root: int) -> None:
        self.root = root

    def folder(self, parts: tuple[str, ...]) -> None:
        with safefs.opened(safefs.open_below(self.root, parts[:-1])) as parent:
            os.close(safefs.make_folder(parent, parts[-1]))

    def file(self, parts: tuple[str, ...], data: bytes) -> None:
        with safefs.opened(safefs.open_below(self.root, parts[:-1])) as parent:
            safefs.write_new(parent, parts[-1], data)


class _Digest(_Sink):
    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def folder(self, parts: tuple[str, ...]) -> None:
        self.hash.update(b"D" + "/".join(parts).encode("utf-8", "surrogateescape") + b"\0")

    def file(self, parts: tuple[str, ...], data: bytes) -> None:
        self.hash.update(b"F" + "/".join(parts).encode("utf-8", "surrogateescape") + b"\0")
        self.hash.update(hashlib.sha256(data).digest())


def _left_out(folder: int, name: str) -> bool:
    """A folder a zip, an editor, a package manager or a virtual environment adds (never graded)."""
    if name in LEFT_OUT_FOLDERS or name.startswith("."):
        return True
    try:
        with safefs.opened(safefs.open_folder(folder, name)) as inner:
            os.stat(VENV_MARK, dir_fd=inner, follow_symlinks=False)
        return True
    except OSError:
        return False


def _walk(
    root: int, sink: _Sink, budget: _Budget, exclude: Exclude | None = None, prefix: tuple[str, ...] = ()
) -> None:
    """Take every regular file and folder under the folder descriptor ``root`` into ``sink``; record the rest.

    Iterative (a stack of relative paths, each reopened from ``root`` by descriptor), so neither the depth of a
    hand-in nor the number of its folders costs recursion or open descriptors.
    """
    pending: list[tuple[str, ...]] = [()]
    while pending:
        parts = pending.pop()
        try:
            folder = safefs.open_below(root, parts)
        except safefs.NotPlain as error:  # a folder swapped for a link after it was listed
            budget.ignored.append(Ignored(shown((*prefix, *parts)), error.kind))
            continue
        except OSError:  # a folder the grader's user may not open (a zip's mode-000 folder): left out, said
            budget.ignored.append(Ignored(shown((*prefix, *parts)), safefs.UNREADABLE))
            continue
        with safefs.opened(folder):
            try:
                names = safefs.entries(folder, MAX_FILES + 1)
            except safefs.TooBig:
                raise HandInRefused(TOO_MANY, MAX_FILES, shown((*prefix, *parts))) from None
            except OSError:  # opened but not listable (read without search permission)
                budget.ignored.append(Ignored(shown((*prefix, *parts)), safefs.UNREADABLE))
                continue
            later = []
            for entry in names:
                here = (*parts, entry.name)
                if entry.folder and _left_out(folder, entry.name):
                    continue
                if exclude is not None and exclude(here, entry):
                    continue
                budget.name((*prefix, *here))
                if entry.kind is not None:
                    budget.ignored.append(Ignored(shown((*prefix, *here)), entry.kind))
                elif entry.folder:
                    if len(here) > MAX_DEPTH:
                        raise HandInRefused(TOO_DEEP, MAX_DEPTH, shown((*prefix, *here)))
                    sink.folder(here)
                    later.append(here)
                else:
                    budget.spend((*prefix, *here), entry.size)
                    try:
                        data = safefs.read_file(folder, entry.name, budget.left + entry.size)
                    except safefs.NotPlain as error:
                        budget.ignored.append(Ignored(shown((*prefix, *here)), error.kind))
                        continue
                    except safefs.TooBig:
                        raise HandInRefused(TOO_LARGE, MAX_BYTES, shown((*prefix, *here))) from None
                    except OSError:  # a file the grader's user may not read (mode 000)
                        budget.ignored.append(Ignored(shown((*prefix, *here)), safefs.UNREADABLE))
                        continue
                    budget.spend((*prefix, *here), len(data) - entry.size)  # it grew since it was listed
                    sink.file(here, data)
            pending.extend(reversed(later))


# -- taking a hand-in in --------------------------------------------------------------------------------------
def take_in(hand_in: Path, into: Path, *, search: bool = False, given: Sequence[Path] = ()) -> TakenIn:
    """Copy the lab's files of ``hand_in`` into the new folder ``into`` by the rules above.

    ``into`` (mode 755, its files 644) belongs in a folder closed to other users: the sandbox's student uid reads
    the copy through a descriptor of ``into``, never by a path.

    Args:
        search: look for the lab's files below ``hand_in`` (a Gradescope upload, a batch's student folder);
            else ``hand_in`` is the lab folder itself (``attnlab grade FOLDER``, an nbgrader submission).
        given: the kit's data files, added into the copy where the hand-in has none.

    Raises:
        HandInRefused: no lab files, or a limit passed.
    """
    hand_in, into = Path(hand_in), Path(into)
    located = submission.locate(hand_in) if search else submission.located_at(hand_in)
    if not located.found:
        raise HandInRefused(NO_LAB_FILES, detail=located.problem)
    into.mkdir(mode=0o700, parents=True, exist_ok=True)
    into.chmod(0o755)
    budget = _Budget()
    try:
        top = safefs.open_root(hand_in)
    except OSError as error:
        raise HandInRefused(UNREADABLE, detail=clean(f"{type(error).__name__}: {error.strerror}", 200)) from None
    with safefs.opened(top), safefs.opened(safefs.open_root(into)) as copy:
        sink = _Copy(copy)
        if located.relative is not None:
            try:
                folder = safefs.open_below(top, located.relative)
            except OSError as error:
                raise HandInRefused(UNREADABLE, detail=clean(str(error), 200)) from None
            with safefs.opened(folder):
                _walk(folder, sink, budget)
        for name, text in located.notebook_modules:
            data = text.encode("utf-8")
            budget.name((name,))
            budget.spend((name,), len(data))
            _write_missing(copy, (name,), data)
        _take_report(top, copy, located, budget)
        for path in given:
            if not _exists(copy, path.name):
                _write_missing(copy, (path.name,), path.read_bytes())  # the kit's own file, trusted
    ignored = tuple(sorted(set(budget.ignored), key=lambda item: item.path))
    source = "notebook" if located.relative is None else "files"
    return TakenIn(into, ignored, source, budget.names, budget.bytes)


def _take_report(top: int, copy: int, located: submission.Located, budget: _Budget) -> None:
    """The timing report from wherever :func:`~autograder.handin.submission.locate` found it, into ``reports/``."""
    if located.notebook_report is not None and not _exists(copy, *submission.REPORT):
        data = located.notebook_report.encode("utf-8")
        budget.spend(submission.REPORT, len(data))
        _write_missing(copy, submission.REPORT, data)
        return
    if located.report is None or _exists(copy, *submission.REPORT):
        return
    parts = located.report
    budget.name(parts)
    try:
        with safefs.opened(safefs.open_below(top, parts[:-1])) as folder:
            data = safefs.read_file(folder, parts[-1], budget.left)
    except safefs.NotPlain as error:
        budget.ignored.append(Ignored(shown(parts), error.kind))
        return
    except safefs.TooBig:
        raise HandInRefused(TOO_LARGE, MAX_BYTES, shown(parts)) from None
    except OSError:
        budget.ignored.append(Ignored(shown(parts), safefs.UNREADABLE))
        return
    budget.spend(parts, len(data))
    _write_missing(copy, submission.REPORT, data)


def _exists(root: int, *parts: str) -> bool:
    try:
        with safefs.opened(safefs.open_below(root, parts[:-1])) as folder:
            os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        return True
    except OSError:
        return False


def _write_missing(root: int, parts: tuple[str, ...], data: bytes) -> None:
    """``data`` as the new file ``parts`` of the copy (its folders made as needed); an existing name is kept."""
    folder = os.dup(root)
    try:
        for part in parts[:-1]:
            inner = safefs.make_folder(folder, part)
            os.close(folder)
            folder = inner
        safefs.write_new(folder, parts[-1], data)
    except FileExistsError:
        pass
    finally:
        os.close(folder)


def lay_out(located: submission.Located, into: Path, given: Sequence[Path] = ()) -> Path:
    """``into`` holding the located lab files and the ``given`` data files the hand-in lacks (by
    :func:`take_in`'s rules); returns ``into``."""
    root = located.root if located.root is not None else Path(".")
    return take_in(root, into, search=True, given=given).folder


# -- copies of a taken-in folder ------------------------------------------------------------------------------
def copy_tree(source: Path, into: Path, exclude: Exclude | None = None) -> int:
    """Copy the folder ``source`` into the new or empty folder ``into`` by the intake's rules (no link followed,
    bounded); the bytes copied."""
    into = Path(into)
    into.mkdir(mode=0o700, parents=True, exist_ok=True)
    with safefs.opened(safefs.open_root(source)) as src, safefs.opened(safefs.open_root(into)) as dst:
        return copy_from(src, dst, exclude)


def copy_from(source: int, into: int, exclude: Exclude | None = None) -> int:
    """Copy the folder descriptor ``source`` into the folder descriptor ``into``; the bytes copied."""
    budget = _Budget()
    _walk(source, _Copy(into), budget, exclude)
    return budget.bytes


# -- fingerprints ---------------------------------------------------------------------------------------------
def fingerprint(hand_in: Path, *, search: bool = True) -> str:
    """A digest of what :func:`take_in` would take from ``hand_in`` (names and contents, what it leaves out, or
    why it refuses it): a changed hand-in gets a new one, a link's target never counts."""
    sink = _Digest()
    located = submission.locate(hand_in) if search else submission.located_at(hand_in)
    budget = _Budget()
    try:
        if not located.found:
            raise HandInRefused(NO_LAB_FILES, detail=located.problem)
        with safefs.opened(safefs.open_root(hand_in)) as top:
            if located.relative is not None:
                with safefs.opened(safefs.open_below(top, located.relative)) as folder:
                    _walk(folder, sink, budget)
            sink.hash.update(repr((located.notebook_modules, located.report, located.notebook_report)).encode())
            if located.report is not None:
                try:
                    with safefs.opened(safefs.open_below(top, located.report[:-1])) as folder:
                        sink.file(located.report, safefs.read_file(folder, located.report[-1], MAX_BYTES))
                except OSError as error:
                    sink.hash.update(type(error).__name__.encode())
    except HandInRefused as refused:
        sink.hash.update(f"refused:{refused.kind}:{refused.limit}:{refused.path}:{refused.detail}".encode())
    except OSError as error:
        sink.hash.update(f"unreadable:{type(error).__name__}".encode())
    for item in sorted(set(budget.ignored), key=lambda i: i.path):
        sink.hash.update(f"I{item.kind}:{item.path}\0".encode())
    return sink.hash.hexdigest()[:32]


def remove(folder: Path) -> None:
    """Remove a copy made here (it holds only folders and regular files)."""
    safefs.remove_tree(folder)
