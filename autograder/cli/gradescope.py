"""``attnlab gradescope OUT.zip``: build the Gradescope autograder (setup.sh, run_autograder, wheel, lock, kit)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import i18n
from autograder.base import tasks
from autograder.cli import common, options

NAME, AUDIENCE = "gradescope", common.INSTRUCTOR
GRADESCOPE_MOST_S = 2400.0  # Gradescope's longest autograder timeout (40 minutes)
HELP = "build the Gradescope autograder zip (public and hidden checks, the kit's wheel and pinned requirements)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT.zip", type=zip_file, help="where to write the zip")
    options.add_kit_argument(parser)
    parser.add_argument(
        "--secret-file",
        metavar="PATH",
        type=options.secret,
        help="the course secret of the hidden inputs (default: $ATTNLAB_SECRET, else OUT.zip's course.secret beside "
        "it, made once with a new random secret and reused by every rebuild)",
    )
    parser.add_argument(
        "--deadline", type=options.seconds(GRADESCOPE_MOST_S), default=900.0,
        help="seconds one submission's grading may take (at most Gradescope's 40 minutes)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=options.seconds(), help="seconds a single call into student code may take (default: 10)"
    )
    parser.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help="the language of every student's feedback in this course (results.json; default: en)",
    )


def zip_file(text: str) -> Path:
    """A ``.zip`` file that can be written."""
    if not text.endswith(".zip"):
        raise argparse.ArgumentTypeError(f"{text} does not end in .zip (Gradescope takes a zip)")
    return options.output_file("the zip", "autograder.zip")(text)


def run(args: argparse.Namespace) -> int:
    from autograder.deliver.gradescope import build
    from autograder.deliver.release import leaks, wheel

    kit = common.instructor_kit(args.kit)
    if kit is None:
        return common.usage_error(NAME, common.NO_KIT)
    try:
        secret, kept = build.course_secret(args.out, args.secret_file or options.environment_secret())
    except build.ZipError as error:
        return common.usage_error(NAME, str(error))
    zipped = build.ZipOptions(
        out=args.out,
        kit=kit,
        secret=secret,
        deadline_s=args.deadline,
        call_timeout_s=args.timeout,
        steps=tuple(args.step) if args.step else None,
        language=args.lang,
    )
    try:
        out = build.build(zipped)
    except build.ZipError as error:
        return common.usage_error(NAME, str(error))
    except leaks.ReleaseLeak as error:
        return common.leaked(NAME, error.problems)
    except wheel.WheelError as error:
        return common.internal_error(NAME, str(error))
    print(f"wrote {out}: upload it as the assignment's autograder (Ubuntu 22.04 base image)")
    if kept is not None:
        print(f"course secret: {kept} (mode 600): keep it, and keep it private; every rebuild here reads it")
    return common.EXIT_OK
