"""``attnlab release OUT``: write the student bundle (stubs, notebook, handout, the public engine's wheel)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.cli import common, options

NAME, AUDIENCE = "release", common.INSTRUCTOR
HELP = "write the student bundle: stubs, notebook, handout and the grader's wheel, scanned for leaks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out", metavar="OUT", type=options.output_folder("the bundle"), help="the bundle's folder (empty or new)"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace OUT if it holds an earlier bundle (and nothing else)"
    )
    options.add_kit_argument(parser)


def run(args: argparse.Namespace) -> int:
    from autograder.deliver.release import bundle, leaks, wheel

    try:  # the student notebook is released with nbgrader's own steps
        import nbgrader.preprocessors  # noqa: F401
    except ImportError as error:
        return common.internal_error(NAME, common.NEEDS_NBGRADER.format(error=error))
    kit = common.instructor_kit(args.kit)
    if kit is None:
        return common.usage_error(NAME, common.NO_KIT)
    try:
        built = bundle.build(kit, Path(args.out), force=args.force)
    except bundle.ReleaseError as error:
        return common.usage_error(NAME, str(error))
    except leaks.ReleaseLeak as error:
        return common.leaked(NAME, error.problems)
    except wheel.WheelError as error:
        return common.internal_error(NAME, str(error))
    print(f"wrote {built.root}: {built.lab.name}/ (stubs, notebook, handout), {built.wheel.name}, README.md")
    print("checked: no solution region, hidden grader, reference module or model answer in the bundle")
    return common.EXIT_OK
