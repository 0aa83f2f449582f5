"""``attnlab grade [FOLDER]``: grade a submission folder and print the per-step table."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder import engine, tasks
from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, STUDENT, usage_error
from autograder.kit import Kit
from autograder.report import render
from autograder.sandbox.client import Limits

NAME, AUDIENCE = "grade", STUDENT
HELP = "grade a submission folder and print the per-step table"
DEFAULT_FOLDER = Path("assignments") / tasks.LAB


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", nargs="?", default=str(DEFAULT_FOLDER), help=f"the submission folder (default: {DEFAULT_FOLDER})"
    )
    parser.add_argument("--json", metavar="PATH", help="also write a Gradescope results.json to PATH")
    parser.add_argument(
        "--public-only", action="store_true", help="grade as a student's release would: public checks only"
    )
    parser.add_argument(
        "--hidden", metavar="DIR", help="folder of the hidden graders (default: the kit's hidden/lab07_attention)"
    )
    parser.add_argument(
        "--reference",
        metavar="DIR",
        help="folder of the reference solution (default: the kit's solutions/lab07_attention)",
    )
    parser.add_argument(
        "--secret-file", metavar="PATH", help="file holding the course secret (default: $ATTNLAB_SECRET)"
    )
    parser.add_argument(
        "--student", metavar="ID", help="the submission's identity for the hidden seed (default: the folder's name)"
    )
    parser.add_argument("--seed", type=int, help="hidden-input seed to reproduce a report (printed in every report)")
    parser.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    parser.add_argument("--timeout", type=float, help="seconds a single call into student code may take (default: 10)")


def _secret(args: argparse.Namespace) -> tuple[str, bool]:
    """The course secret and whether it is the kit's public default."""
    if args.secret_file:
        return Path(args.secret_file).read_text(encoding="utf-8").strip(), False
    if os.environ.get("ATTNLAB_SECRET"):
        return os.environ["ATTNLAB_SECRET"], False
    return engine.DEFAULT_SECRET, True


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        return usage_error(NAME, f"{folder} is not a folder (give the folder that holds softmax.py, scaling.py, ...)")
    kit = Kit.find()
    hidden = None if args.public_only else Path(args.hidden) if args.hidden else (kit.hidden if kit else None)
    reference = Path(args.reference) if args.reference else (kit.solutions if kit else None)
    secret, default_secret = _secret(args)
    identity = args.student or folder.resolve().name
    seed = args.seed if args.seed is not None else engine.seed_for(secret, identity)
    limits = Limits(call_timeout_s=args.timeout) if args.timeout else Limits()
    options = engine.GradeOptions(
        submission=folder,
        hidden=hidden,
        reference=reference,
        seed=seed,
        public_only=hidden is None,
        steps=tuple(args.step) if args.step else None,
        limits=limits,
    )
    try:
        report = engine.grade(options)
    except engine.GradingError as error:
        print(f"attnlab grade: the graders failed: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    if hidden is not None and default_secret and args.seed is None:
        report = engine.with_note(report, engine.NOTE_DEFAULT_SECRET)
    print(render.table(report))
    if args.json:
        Path(args.json).write_text(render.gradescope_json(report), encoding="utf-8")
    return EXIT_INTERNAL if report.internal_errors else EXIT_OK
