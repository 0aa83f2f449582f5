"""What every ``attnlab`` command shares: exit statuses, audiences, the one way to report a usage error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.kit import Kit

# 0: the command ran (for grade: grading ran, whatever the score); 2: a usage error (bad folder, no lab files,
# an option the command cannot honour); 3: the graders themselves failed (never the student's fault).
EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3

STUDENT, INSTRUCTOR = "student", "instructor"  # who a command is for


def usage_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the usage-error exit status."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_USAGE


def internal_error(command: str, message: str) -> int:
    """Print ``attnlab COMMAND: message`` on stderr; the exit status of a failure that is the kit's, not the user's."""
    print(f"attnlab {command}: {message}", file=sys.stderr)
    return EXIT_INTERNAL


def add_kit_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kit", metavar="DIR", help="the instructor kit (default: the one attnlab finds)")


def instructor_kit(folder: str | None) -> Kit | None:
    """The kit at ``folder`` (``--kit``), else the one :meth:`Kit.find` finds; None when it is not a kit."""
    kit = Kit(Path(folder).resolve()) if folder else Kit.find()
    return kit if kit is not None and kit.is_kit() else None


NO_KIT = "no instructor kit here (solutions/ and hidden/); run it in the kit or pass --kit"

EXIT_LEAK = 1  # release, gradescope: the bundle or zip would leak; nothing was written


def leaked(command: str, problems: list[str]) -> int:
    """Print each leak on stderr; the leak exit status."""
    for problem in problems:
        print(f"attnlab {command}: leak: {problem}", file=sys.stderr)
    print(f"attnlab {command}: nothing was written; fix the kit and run it again", file=sys.stderr)
    return EXIT_LEAK
