"""Who handed in what: the submissions of a folder, one per student.

Three layouts are recognised:

- nbgrader: a course folder (or its ``submitted/``): ``submitted/<student>/<lab>/``;
- a Gradescope "export submissions" folder: ``submission_metadata.yml`` and one
  ``submission_<id>/`` per submission, whose submitters (``:sid:``, else
  ``:email:``, else ``:name:``) name the student (a group: its ids joined by ``+``);
- otherwise a folder per student, named by the student's id.

Where the lab's files sit inside a student's folder is :mod:`autograder.handin.submission`'s job. A student id comes
from a folder name or an export's metadata, which students chose: it is control-character escaped here, once,
so every line, CSV cell and page after this shows it safely.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.base import safefs
from autograder.base.text import clean, escape_controls
from autograder.handin.submission import SKIPPED

GRADESCOPE_METADATA = "submission_metadata.yml"
NBGRADER_SUBMITTED = "submitted"
MAX_SUBMISSIONS = 100_000  # names read from the submissions folder
MAX_METADATA_BYTES = 64 << 20
UNLISTABLE = "cannot list the submissions in {folder} ({error})"
BAD_METADATA = (
    "cannot read the Gradescope export's {file} ({error}); fix it, or move it away to name students by their folders"
)


class NotListable(Exception):
    """The submissions folder (or its Gradescope metadata) cannot be read: the message says why, in one sentence."""


@dataclass(frozen=True)
class Submission:
    """One student's hand-in: their id and the folder as handed in."""

    student: str
    folder: Path


def discover(folder: Path) -> list[Submission]:
    """The submissions in ``folder``, sorted by student id; a student who appears twice keeps the last folder.

    The folder is listed by descriptor, each name as ``lstat`` sees it (a link is no submission, and a student's
    folder is never opened here: what it holds is each student's own pass). :class:`NotListable` when the folder
    itself, or an export's metadata, cannot be read.
    """
    folder = Path(folder)
    names = _listing(folder)
    if any(e.name == NBGRADER_SUBMITTED and e.folder and e.kind is None for e in names):
        folder = folder / NBGRADER_SUBMITTED
        names = _listing(folder)
    metadata = next((e for e in names if e.name == GRADESCOPE_METADATA and not e.folder and e.kind is None), None)
    ids = _gradescope_names(folder / GRADESCOPE_METADATA) if metadata is not None else {}
    found = {}
    for entry in names:
        if entry.folder and entry.kind is None and entry.name not in SKIPPED and not entry.name.startswith("."):
            found[escape_controls(ids.get(entry.name, entry.name))] = folder / entry.name
    return [Submission(student, path) for student, path in sorted(found.items())]


def _listing(folder: Path) -> list[safefs.Entry]:
    try:
        with safefs.opened(safefs.open_root(folder)) as fd:
            return safefs.entries(fd, MAX_SUBMISSIONS)
    except OSError as error:
        detail = f"more than {MAX_SUBMISSIONS} names" if isinstance(error, safefs.TooBig) else _why(error)
        raise NotListable(UNLISTABLE.format(folder=clean(str(folder), 300), error=detail)) from None


def _why(error: BaseException) -> str:
    return clean(f"{type(error).__name__}: {getattr(error, 'strerror', None) or error}", 200)


def _gradescope_names(metadata: Path) -> dict[str, str]:
    """Folder name -> student id, from a Gradescope export's metadata (PyYAML, which Jupyter already needs)."""
    import yaml

    try:
        with safefs.opened(safefs.open_root(metadata.parent)) as fd:
            text = safefs.read_file(fd, metadata.name, MAX_METADATA_BYTES).decode("utf-8")
        data = yaml.safe_load(text) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as error:
        raise NotListable(BAD_METADATA.format(file=GRADESCOPE_METADATA, error=_why(error))) from None
    names = {}
    for key, entry in data.items() if isinstance(data, dict) else ():
        submitters = entry.get(":submitters") if isinstance(entry, dict) else None
        ids = sorted(
            str(s.get(":sid") or s.get(":email") or s.get(":name"))
            for s in submitters or ()
            if isinstance(s, dict) and (s.get(":sid") or s.get(":email") or s.get(":name"))
        )
        if ids:
            names[str(key)] = "+".join(ids)
    return names
