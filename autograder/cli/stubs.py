"""``attnlab stubs``: generate the student stubs from the solutions (``--check`` only reports drift)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.base.kit import Kit
from autograder.cli import options
from autograder.cli.common import EXIT_OK, INSTRUCTOR
from autograder.deliver.release import stubs
from autograder.handin.pristine import DIGESTS

NAME, AUDIENCE = "stubs", INSTRUCTOR
HELP = "generate the student stubs from the solutions"
EXIT_STALE = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    tree = Kit.source_tree()
    parser.add_argument(
        "--solutions",
        default=str(tree.solutions),
        type=options.folder,
        help="the reference folder (default: the kit's)",
    )
    parser.add_argument(
        "--assignments",
        default=str(tree.assignments),
        type=options.output_folder("--assignments"),
        help="the stubs folder (default: the kit's)",
    )
    parser.add_argument("--check", action="store_true", help="only report stubs that differ from generation (exit 1)")


def run(args: argparse.Namespace) -> int:
    solutions, assignments = Path(args.solutions), Path(args.assignments)
    if args.check:
        stale = stubs.drift(solutions, assignments)
        if stubs.digests_drift(solutions):
            stale.append(DIGESTS)
        for path in stale:
            print(f"stale stub: {path} (run: attnlab stubs)")
        if not stale:
            print(f"up to date: the stubs in {assignments} and {DIGESTS.name} follow {solutions}")
        return EXIT_STALE if stale else EXIT_OK
    for path in stubs.write(solutions, assignments):
        print(f"wrote {path}")
    if stubs.write_digests(solutions):  # the grader's test of an untouched step (autograder.handin.pristine)
        print(f"wrote {DIGESTS}")
    from autograder.i18n import catalogs  # Babel (instructor tooling): the shipped .mo follows the .po

    for path in catalogs.compile_all():
        print(f"wrote {path}")
    return EXIT_OK
