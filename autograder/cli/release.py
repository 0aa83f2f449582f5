"""``attnlab release OUT``: write the student bundle (stubs, notebook, handout, the public engine's wheel)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, INSTRUCTOR, usage_error
from autograder.kit import Kit

NAME, AUDIENCE = "release", INSTRUCTOR
HELP = "write the student bundle: stubs, notebook, handout and the grader's wheel, scanned for leaks"
EXIT_LEAK = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="the bundle's folder (empty or new)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it is not empty")
    parser.add_argument("--kit", metavar="DIR", help="the instructor kit (default: the one attnlab finds)")


def run(args: argparse.Namespace) -> int:
    from autograder.release import bundle, leaks, wheel

    kit = Kit(Path(args.kit).resolve()) if args.kit else Kit.find()
    if kit is None or not kit.is_kit():
        return usage_error(NAME, "no instructor kit here (solutions/ and hidden/); run it in the kit or pass --kit")
    try:
        built = bundle.build(kit, Path(args.out), force=args.force)
    except bundle.ReleaseError as error:
        return usage_error(NAME, str(error))
    except leaks.ReleaseLeak as error:
        for problem in error.problems:
            print(f"attnlab release: leak: {problem}", file=sys.stderr)
        print("attnlab release: nothing was written; fix the kit and run it again", file=sys.stderr)
        return EXIT_LEAK
    except wheel.WheelError as error:
        print(f"attnlab release: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    print(f"wrote {built.root}: {built.lab.name}/ (stubs, notebook, handout), {built.wheel.name}, README.md")
    print("checked: no solution region, hidden grader, reference module or model answer in the bundle")
    return EXIT_OK
