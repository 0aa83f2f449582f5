"""``attnlab``: the kit's commands, a thin layer over the engine's functions.

Each command is one module of this package with ``NAME``, ``HELP``,
``AUDIENCE`` (student or instructor), ``add_arguments(parser)`` and
``run(args) -> int``. Exit statuses are in :mod:`autograder.cli.common`:
0 whenever the command ran (grading: whatever the score), 2 for usage errors,
3 when the graders themselves failed (a report is still written if possible).
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from autograder.cli import catalogs, doctor, grade, handout, nbgrader_course, snapshot, stubs, timing

COMMANDS: tuple[ModuleType, ...] = (grade, timing, doctor, stubs, snapshot, handout, catalogs, nbgrader_course)


def parser() -> argparse.ArgumentParser:
    """The ``attnlab`` parser with every command of :data:`COMMANDS`."""
    main = argparse.ArgumentParser(prog="attnlab", description="Autograder kit for the attention lab (lab 7).")
    sub = main.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command_parser = sub.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        command.add_arguments(command_parser)
        command_parser.set_defaults(run=command.run)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
