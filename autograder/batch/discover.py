"""Who handed in what: the submissions of a folder, one per student.

Three layouts are recognised:

- nbgrader: a course folder (or its ``submitted/``): ``submitted/<student>/<lab>/``;
- a Gradescope "export submissions" folder: ``submission_metadata.yml`` and one
  ``submission_<id>/`` per submission, whose submitters (``:sid:``, else
  ``:email:``, else ``:name:``) name the student (a group: its ids joined by ``+``);
- otherwise a folder per student, named by the student's id.

Where the lab's files sit inside a student's folder is :mod:`autograder.submission`'s job. A student id comes
from a folder name or an export's metadata, which students chose: it is control-character escaped here, once,
so every line, CSV cell and page after this shows it safely.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.submission import SKIPPED
from autograder.text import escape_controls

GRADESCOPE_METADATA = "submission_metadata.yml"
NBGRADER_SUBMITTED = "submitted"


@dataclass(frozen=True)
class Submission:
    """One student's hand-in: their id and the folder as handed in."""

    student: str
    folder: Path


def discover(folder: Path) -> list[Submission]:
    """The submissions in ``folder``, sorted by student id; a student who appears twice keeps the last folder."""
    folder = Path(folder)
    if (folder / NBGRADER_SUBMITTED).is_dir():
        folder = folder / NBGRADER_SUBMITTED
    names = _gradescope_names(folder / GRADESCOPE_METADATA) if (folder / GRADESCOPE_METADATA).is_file() else {}
    found = {}
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and child.name not in SKIPPED and not child.name.startswith("."):
            found[escape_controls(names.get(child.name, child.name))] = child
    return [Submission(student, path) for student, path in sorted(found.items())]


def _gradescope_names(metadata: Path) -> dict[str, str]:
    """Folder name -> student id, from a Gradescope export's metadata (PyYAML, which Jupyter already needs)."""
    import yaml

    data = yaml.safe_load(metadata.read_text(encoding="utf-8")) or {}
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
