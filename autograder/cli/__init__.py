"""``attnlab``: the kit's commands, a thin layer over the engine's functions.

Each command is one module of this package with ``NAME``, ``HELP``,
``AUDIENCE`` (student or instructor), ``add_arguments(parser)`` and
``run(args) -> int``. Exit statuses are in :mod:`autograder.cli.common`:
0 whenever the command ran (grading: whatever the score), 2 for usage errors,
3 when the graders themselves failed (a report is still written if possible).

A student's install (the release wheel, :mod:`autograder.deliver.release`) ships the
student commands only; an instructor command typed there is refused with one
sentence, never a traceback.

May import every other stage; nothing imports it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from autograder.base.kit import STUDENT_COMMANDS
from autograder.cli import options
from autograder.cli.common import EXIT_USAGE

# Module names, in the order `attnlab --help` lists them. The instructor ones are left out of the student wheel.
INSTRUCTOR_COMMANDS = {  # command name -> module
    "stubs": "stubs",
    "snapshot": "snapshot",
    "handout": "handout",
    "i18n": "catalogs",
    "nbgrader-course": "nbgrader_course",
    "release": "release",
    "gradescope": "gradescope",
    "grade-batch": "batch",
}
NOT_HERE = (
    "attnlab {command}: an instructor command, not part of the student's kit installed here "
    "(this install has: {commands})."
)


def commands() -> tuple[ModuleType, ...]:
    """The command modules this install holds (a student's wheel has no instructor ones)."""
    found = []
    for module in (*STUDENT_COMMANDS, *INSTRUCTOR_COMMANDS.values()):
        try:
            found.append(importlib.import_module(f"{__name__}.{module}"))
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{module}":
                raise  # the module is here but something it needs is not: a real error
    return tuple(found)


def parser(modules: tuple[ModuleType, ...] | None = None) -> argparse.ArgumentParser:
    """The ``attnlab`` parser with every command this install holds (each error one line, exit status 2)."""
    main = options.Parser(prog="attnlab", description="Autograder kit for the attention lab (lab 7).")
    sub = main.add_subparsers(dest="command", required=True)
    for command in modules if modules is not None else commands():
        command_parser = sub.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        command.add_arguments(command_parser)
        command_parser.set_defaults(run=command.run, parser=command_parser)
    return main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["grade"]:  # its fork servers load while the commands' modules (engine, pytest) import
        from autograder.base import threads
        from autograder.cli import early

        threads.one_thread()  # before the commands' modules load NumPy (see autograder.base.threads)
        early.start(argv)
    modules = commands()
    names = [module.NAME for module in modules]
    if argv and argv[0] in INSTRUCTOR_COMMANDS and argv[0] not in names:
        print(NOT_HERE.format(command=argv[0], commands=", ".join(names)), file=sys.stderr)
        return EXIT_USAGE
    with options.language_of_command_line(argv):  # the parser's sentences in the user's language
        args, extra = parser(modules).parse_known_args(argv)
        if extra:  # named by the command, not by "attnlab" (an unknown option of `attnlab grade`)
            args.parser.unknown(extra)
    problem = options.environment_problem()
    if problem:
        print(f"attnlab {args.command}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
