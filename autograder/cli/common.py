"""What every ``attnlab`` command shares: exit statuses, audiences, the one way to report a usage error."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from autograder.base.kit import Kit
from autograder.i18n import N_, _

# 0: the command ran (for grade: grading ran, whatever the score); 2: a usage error (bad folder, no lab files,
# an option the command cannot honour); 3: the graders themselves failed (never the student's fault).
EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3

STUDENT, INSTRUCTOR = "student", "instructor"  # who a command is for


def student_install() -> bool:
    """Whether this is a student's install (the release wheel): it holds no instructor command."""
    import importlib.util

    return importlib.util.find_spec("autograder.cli.batch") is None


def usage_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the usage-error exit status."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_USAGE


def internal_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the exit status of a failure that is the kit's, not the user's."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_INTERNAL


def instructor_kit(folder: str | None) -> Kit | None:
    """The kit at ``folder`` (``--kit``), else the one :meth:`Kit.find` finds; None when it is not a kit."""
    kit = Kit(Path(folder).resolve()) if folder else Kit.find()
    return kit if kit is not None and kit.is_kit() else None


NEEDS_NBGRADER = (
    "needs nbgrader ({error}); install the kit with its course extra: python3 -m pip install -e '.[course]'"
)
NO_KIT = "no instructor kit here (solutions/ and hidden/); run it in the kit or pass --kit"

EXIT_LEAK = 1  # release, gradescope: the bundle or zip would leak; nothing was written


def leaked(command: str, problems: list[str]) -> int:
    """Print each leak on stderr; the leak exit status."""
    for problem in problems:
        print(f"attnlab {command}: leak: {problem}", file=sys.stderr)
    print(f"attnlab {command}: nothing was written; fix the kit and run it again", file=sys.stderr)
    return EXIT_LEAK


# An output file that cannot be written is a usage error found before any work starts (no folder is ever made).
OUTPUT_IS_A_FOLDER = N_("cannot write {option} {path}: it is a folder, so give a file name in it (e.g. {example})")
OUTPUT_NO_FOLDER = N_(
    "cannot write {option} {path}: the folder {folder} does not exist, so make it first or give another path"
)
OUTPUT_NOT_A_FOLDER = N_("cannot write {option} {path}: {folder} is not a folder")
OUTPUT_NOT_WRITABLE = N_("cannot write {option} {path}: the folder {folder} is not writable, so give another path")


def output_problem(path: Path, option: str, example: str) -> str | None:
    """Why the file ``path`` (given with ``option``) cannot be written, in one sentence; None when it can.

    ``example`` is a file name to suggest when ``path`` is a folder. Nothing is created or changed.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fields = {"option": option, "path": path, "folder": folder}
    if path.is_dir():
        return _(OUTPUT_IS_A_FOLDER).format(example=path / example, **fields)
    if not folder.exists():
        return _(OUTPUT_NO_FOLDER).format(**fields)
    if not folder.is_dir():
        return _(OUTPUT_NOT_A_FOLDER).format(**fields)
    if not _can_create_in(folder):
        return _(OUTPUT_NOT_WRITABLE).format(**fields)
    return None


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be made in ``folder``: tried, as permissions do not tell (root, /proc, read-only mounts)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".attnlab-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True
