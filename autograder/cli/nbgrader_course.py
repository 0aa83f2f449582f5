"""``attnlab nbgrader-course DIR``: write an nbgrader course folder for the lab (needs the course extra)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder import i18n
from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.cli import options
from autograder.cli.common import EXIT_OK, INSTRUCTOR, NEEDS_NBGRADER, internal_error, usage_error
from autograder.deliver.nbgrader_course.private import DEFAULT_DEADLINE_S
from autograder.deliver.release import stubs

NAME, AUDIENCE = "nbgrader-course", INSTRUCTOR
HELP = "write an nbgrader course folder for the lab (needs the course extra)"
NEXT_STEPS = (  # (command, what it produces), printed after the course is written
    ("nbgrader generate_assignment {lab}", "release/{lab}/: stubs, the notebook without hidden tests or model answers"),
    ("nbgrader release_assignment {lab}", "the release in the exchange, for students' fetch_assignment"),
    ("nbgrader collect {lab}", "submitted/<student>/{lab}/: each student's last submission"),
    ("nbgrader autograde {lab}", "autograded/<student>/{lab}/ and the scores in gradebook.db"),
    ("nbgrader formgrader (Jupyter)", "the written answers and any review cell, graded by hand"),
    ("nbgrader generate_feedback {lab}", "feedback/<student>/{lab}/{lab}.html"),
    ("nbgrader release_feedback {lab}", "the feedback in the exchange, for students' fetch_feedback"),
    ("nbgrader export", "grades.csv, a row with its reason for every hand-in nbgrader could not autograde"),
)
UNREACHABLE = (
    "warning: other users cannot pass through {folders}, so students cannot reach the exchange {exchange}; "
    "open them (chmod o+x) or give an exchange they can reach with --exchange"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        type=options.output_folder("the course"),
        help="the course folder to write: new, empty, or a course it made (--force); run nbgrader from there",
    )
    parser.add_argument(
        "--course-id", metavar="ID", help="nbgrader's course id (default: the folder's name; kept by --force)"
    )
    parser.add_argument(
        "--exchange",
        metavar="DIR",
        help="nbgrader's exchange folder, made world-writable with the sticky bit (default: FOLDER/exchange)",
    )
    parser.add_argument(
        "--kit",
        metavar="DIR",
        type=options.kit,
        help="the instructor kit holding solutions/ and hidden/ (default: this source tree or $ATTNLAB_KIT)",
    )
    parser.add_argument(
        "--timeout",
        type=options.seconds(),
        metavar="S",
        help="seconds a call into student code may take while grading (default: 10)",
    )
    parser.add_argument(
        "--import-timeout",
        type=options.seconds(),
        metavar="S",
        help="seconds importing a student module may take (default: 30)",
    )
    parser.add_argument(
        "--deadline",
        type=options.seconds(),
        default=DEFAULT_DEADLINE_S,
        metavar="S",
        help=f"seconds one student's whole grading may take (default: {DEFAULT_DEADLINE_S:g})",
    )
    parser.add_argument(
        "--isolation",
        choices=("namespaces", "user", "hook"),
        help="refuse to grade with weaker isolation of student code than this (see `attnlab doctor`)",
    )
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        default=i18n.SOURCE,
        help="the course's language: the notebook's texts and every student's feedback (default: en)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="rewrite a course this command made: its config, source and private files (the secret, gradebook, "
        "exchange and students' work are kept); never another folder",
    )


WRITTEN_BY = "written by `attnlab nbgrader-course`"  # the first line of every course config the kit writes


def _not_ours(folder: Path, kit: Path) -> str | None:
    """Why ``--force`` may not rewrite the course at ``folder`` (its config is not the kit's, or the folder holds the
    kit, the current folder or a home), in one sentence; None when it may."""
    from autograder.deliver.release import guard

    config = folder / "nbgrader_config.py"
    if not config.exists():
        return None  # nothing to rewrite: the course is written as new
    reason = guard.never_removed(folder / "private", kit)
    if reason:
        return f"{reason}: --force never rewrites it"
    try:
        ours = WRITTEN_BY in config.read_text(encoding="utf-8").partition("\n")[0]
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        return f"{config} was not written by attnlab nbgrader-course: --force rewrites only a course the kit wrote"
    return None


def run(args: argparse.Namespace) -> int:
    """Write the course; print what to run next."""
    try:
        from autograder.deliver.nbgrader_course import course
    except ImportError as error:
        return internal_error(NAME, NEEDS_NBGRADER.format(error=error))  # the machine's set-up (exit status 3)
    found = Kit.find()
    kit = Path(args.kit) if args.kit else (found.root if found else None)
    if kit is None:
        return usage_error(NAME, "no instructor kit found (solutions/ and hidden/); pass --kit DIR")
    problem = _not_ours(Path(args.folder), kit) if args.force else None
    if problem:
        return usage_error(NAME, problem)
    options = course.CourseOptions(
        folder=Path(args.folder),
        kit=kit,
        course_id=args.course_id,
        exchange=Path(args.exchange) if args.exchange else None,
        call_timeout_s=args.timeout,
        import_timeout_s=args.import_timeout,
        deadline_s=args.deadline,
        isolation=args.isolation,
        force=args.force,
        language=args.lang,
    )
    try:
        course.write_course(options)
    except (course.CourseError, stubs.MarkerError, ValueError) as error:
        return usage_error(NAME, str(error))
    stamp = course.Stamp.read(Path(args.folder).resolve())
    exchange = Path(stamp.exchange) if stamp else None
    print(f"wrote the course {stamp.course_id if stamp else ''} in {options.folder}; next, from that folder:")
    width = max(len(command.format(lab=tasks.LAB)) for command, _ in NEXT_STEPS)
    for command, produces in NEXT_STEPS:
        print(f"  {command.format(lab=tasks.LAB):<{width}}  -> {produces.format(lab=tasks.LAB)}")
    print(f"students need {course.STUDENTS_CONFIG} (the exchange and the course id) as their nbgrader config")
    blocked = course.unreachable(exchange) if exchange else []
    if blocked:
        print(UNREACHABLE.format(folders=", ".join(map(str, blocked)), exchange=exchange), file=sys.stderr)
    return EXIT_OK
