"""``attnlab gradescope OUT.zip``: build the Gradescope autograder (setup.sh, run_autograder, wheel, lock, kit)."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import i18n, tasks
from autograder.cli import common

NAME, AUDIENCE = "gradescope", common.INSTRUCTOR
HELP = "build the Gradescope autograder zip (public and hidden checks, the kit's wheel and pinned requirements)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT.zip", help="where to write the zip")
    common.add_kit_argument(parser)
    parser.add_argument(
        "--secret-file",
        metavar="PATH",
        help="the course secret of the hidden inputs (default: $ATTNLAB_SECRET, else a new random one kept in the zip)",
    )
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds one submission's grading may take")
    parser.add_argument("--timeout", type=float, help="seconds a single call into student code may take (default: 10)")
    parser.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help="the language of every student's feedback in this course (results.json; default: en)",
    )


def run(args: argparse.Namespace) -> int:
    import os

    from autograder.gradescope import build
    from autograder.release import leaks, wheel

    kit = common.instructor_kit(args.kit)
    if kit is None:
        return common.usage_error(NAME, common.NO_KIT)
    if not args.out.endswith(".zip"):
        return common.usage_error(NAME, f"{args.out} does not end in .zip (Gradescope takes a zip)")
    problem = common.output_problem(Path(args.out), "the zip", "autograder.zip")
    if problem:
        return common.usage_error(NAME, problem)
    secret = Path(args.secret_file).read_text(encoding="utf-8").strip() if args.secret_file else None
    options = build.ZipOptions(
        out=Path(args.out),
        kit=kit,
        secret=secret or os.environ.get("ATTNLAB_SECRET") or None,
        deadline_s=args.deadline,
        call_timeout_s=args.timeout,
        steps=tuple(args.step) if args.step else None,
        language=args.lang,
    )
    try:
        out = build.build(options)
    except build.ZipError as error:
        return common.usage_error(NAME, str(error))
    except leaks.ReleaseLeak as error:
        return common.leaked(NAME, error.problems)
    except wheel.WheelError as error:
        return common.internal_error(NAME, str(error))
    print(f"wrote {out}: upload it as the assignment's autograder (Ubuntu 22.04 base image)")
    return common.EXIT_OK
