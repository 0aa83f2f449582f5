"""``attnlab grade-batch SUBMISSIONS --csv grades.csv -j N``: grade every submission of a folder, in parallel.

Run as root at the ``user`` layer (a container without namespaces), the command first starts itself again with
its arguments in a descriptor instead of on its command line: every process of the machine, student code
included, can read a command line in ``/proc``, and this one names the folder of every student's hand-in.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.base import isolated, tasks
from autograder.base.kit import Kit
from autograder.base.text import clean
from autograder.cli import options
from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, INSTRUCTOR, internal_error, usage_error
from autograder.cli.options import environment_secret
from autograder.grading import engine

if TYPE_CHECKING:  # the batch's modules load only when the command runs
    from autograder.deliver.batch.run import BatchOptions, BatchRun

NAME, AUDIENCE = "grade-batch", INSTRUCTOR
MOST_JOBS = 1024  # students at once on one machine: more is a typo (a Dask cluster takes the larger courses)
NEEDS_DASK = 'grading with --dask needs Dask distributed; install it: python3 -m pip install "attnlab[cluster]"'
CONNECT_S = 5.0  # seconds a Dask scheduler has to answer before the batch is refused
EXIT_INTERRUPTED = 128 + 2  # after SIGINT (128 + the signal's number after another)
HELP = "grade every submission of a folder in parallel: CSV, results and feedback per student, class summary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions",
        metavar="SUBMISSIONS",
        type=options.folder,
        help="a folder per student, an nbgrader course (or its submitted/), or a Gradescope export",
    )
    parser.add_argument(
        "--csv", default="grades.csv", type=options.output_file("--csv", "grades.csv", make_folder=True),
        help="the gradebook CSV to write (default: grades.csv)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=options.output_folder("--out", make_folder=True),
        help="where each student's results and feedback go (default: graded/ by the CSV)",
    )  # fmt: skip
    parser.add_argument(
        "-j", "--jobs", type=options.whole(1, MOST_JOBS), default=2, help="students graded at once on this machine (2)"
    )
    parser.add_argument("--force", action="store_true", help="grade again the students already graded")
    parser.add_argument(
        "--dask", metavar="ADDRESS", type=dask_address,
        help="run the jobs on a Dask cluster: scheduler address or scheduler file (it must answer within "
        f"{CONNECT_S:g} s)",
    )  # fmt: skip
    parser.add_argument("--public-only", action="store_true", help="public checks only")
    parser.add_argument(
        "--hidden",
        metavar="DIR",
        type=options.hidden_graders,
        help="the hidden graders (default: the course's or the kit's)",
    )
    parser.add_argument(
        "--reference", metavar="DIR", type=options.reference, help="the reference (default: the course's or the kit's)"
    )
    parser.add_argument(
        "--secret-file", metavar="PATH", type=options.secret, help="the course secret (default: $ATTNLAB_SECRET)"
    )
    parser.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    parser.add_argument(
        "--timeout", type=options.seconds(), help="seconds a single call into student code may take (default: 10)"
    )
    parser.add_argument(
        "--deadline", type=options.seconds(), default=900.0, help="seconds one student's grading may take (900)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--private-copies",
        action="store_true",
        help="copy every hand-in into a folder only the grader can read before grading, and close SUBMISSIONS to "
        "other users while the batch runs (for the user layer, where student code can read what other users can)",
    )
    parser.add_argument(
        "--isolation",
        choices=["namespaces", "user", "hook"],
        help="refuse to grade with weaker isolation of student code than this (see `attnlab doctor`)",
    )


def dask_address(text: str) -> str:
    """A Dask scheduler's address or scheduler file that answers within :data:`CONNECT_S` seconds."""
    from autograder.deliver.batch import cluster

    try:
        cluster.reachable(text, CONNECT_S)
    except cluster.Unreachable as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _course_private(submissions: Path) -> Path | None:
    """The nbgrader course's private folder when ``submissions`` is a course (or its ``submitted/``)."""
    for root in (submissions, submissions.parent):
        if (root / "private" / "settings.json").is_file() and (root / "submitted").is_dir():
            return root / "private"
    return None


def _visible_in_proc(args: argparse.Namespace) -> bool:
    """Whether this process's own command line names the submissions (student code at the user layer could read
    it in ``/proc`` and go looking for its classmates' hand-ins)."""
    given = [Path(item) for item in sys.argv[1:]]  # the options are parsed into paths: compared as paths
    return any(arg and Path(arg) in given for arg in (args.submissions, args.out, args.csv))


def _hidden_rerun(argv: list[str]) -> int:
    """Start this command again with ``argv`` in an inherited descriptor, so its command line names no hand-in."""
    fd = os.memfd_create("attnlab-batch-args", 0) if hasattr(os, "memfd_create") else None
    if fd is None:
        return -1
    os.write(fd, json.dumps(argv).encode())
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    sys.stdout.flush()
    sys.stderr.flush()
    command = isolated.command(__name__, "rerun", str(fd))
    os.execv(command[0], command)
    return -1  # not reached


def rerun(fd: str) -> int:
    """The command started again by :func:`_hidden_rerun`: its arguments from the descriptor ``fd``."""
    from autograder import cli

    with os.fdopen(int(fd), "rb") as source:
        argv = json.loads(source.read())
    sys.argv = [sys.argv[0]]  # nothing of the arguments on this process's own command line
    return cli.main(argv)


def _must_hide(args: argparse.Namespace) -> bool:
    from autograder.sandbox import isolation

    if not isolation.running_as_root() or not _visible_in_proc(args) or not hasattr(os, "memfd_create"):
        return False
    try:
        return isolation.choose() == isolation.Level.USER
    except isolation.IsolationRefused:
        return False


def run(args: argparse.Namespace) -> int:
    from autograder.deliver.batch import run as batch
    from autograder.deliver.nbgrader_course.private import Private
    from autograder.deliver.nbgrader_course.run import limits_from
    from autograder.sandbox.client import IsolationRefused, Limits

    if _must_hide(args):
        return _hidden_rerun(sys.argv[1:])  # the process's own arguments: ["grade-batch", SUBMISSIONS, ...]
    import importlib.util

    from autograder.base import versions

    if args.dask and importlib.util.find_spec("distributed") is None:  # the machine's set-up (exit status 3)
        print(f"attnlab {NAME}: {NEEDS_DASK}", file=sys.stderr)
        return EXIT_INTERNAL
    missing = versions.torch_missing(args.step or tasks.BY_ID)
    if missing:  # the machine's set-up: no student graded, none given a 0 for it (exit status 3)
        print(f"attnlab {NAME}: {missing}", file=sys.stderr)
        return EXIT_INTERNAL
    submissions = Path(args.submissions).resolve()
    try:
        batch.found(submissions)  # none, or a folder that cannot be listed: one sentence before anything else
    except batch.BatchRefused as error:
        return usage_error(NAME, str(error))
    private = _course_private(submissions)
    kit = Kit.find()
    limits = limits_from(Private(private).settings().limits) if private else Limits()
    hidden = Private(private).hidden if private else (kit.hidden if kit else None)
    reference = Private(private).reference if private else (kit.solutions if kit else None)
    hidden = Path(args.hidden) if args.hidden else hidden
    reference = Path(args.reference) if args.reference else reference
    if args.public_only:
        hidden = None
    if hidden is not None and reference is None:
        return usage_error(NAME, "the hidden checks need the reference; pass --reference")
    secret = (
        args.secret_file  # read and checked (not empty) when the option was parsed
        if args.secret_file
        else environment_secret() or (Private(private).secret() if private else None)
    )
    if hidden is not None and not secret:
        print(f"attnlab grade-batch: note: {engine.NOTE_DEFAULT_SECRET}", file=sys.stderr)
    csv = Path(args.csv).resolve()
    options = batch.BatchOptions(
        submissions=submissions,
        csv=csv,
        out=Path(args.out).resolve() if args.out else csv.parent / "graded",
        hidden=hidden,
        reference=reference,
        secret=secret or engine.DEFAULT_SECRET,
        given=reference or (kit.assignments if kit else None),
        steps=tuple(args.step) if args.step else None,
        limits=Limits(**{**vars(limits), "call_timeout_s": args.timeout}) if args.timeout else limits,
        deadline_s=args.deadline,
        workers=args.jobs,
        force=args.force,
        dask=args.dask,
        progress=not args.no_progress,
        private_copies=args.private_copies,
        isolation=args.isolation,
    )
    try:
        for line in batch.first_lines(options, batch.layer(options)):
            print(f"attnlab {NAME}: {line}", file=sys.stderr)
        done = batch.run(options)
    except IsolationRefused as error:
        return usage_error(NAME, f"not graded: {error}")
    except batch.BatchRefused as error:
        return usage_error(NAME, str(error))
    except OSError as error:  # the CSV itself could not be written: every student's result is on disk
        return internal_error(NAME, batch.NO_CSV.format(csv=csv, out=options.out, error=clean(str(error), 300)))
    except KeyboardInterrupt:  # a second interrupt: stopped at once
        print(f"attnlab {NAME}: {batch.STOPPED_AT_ONCE.format(out=options.out)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return report(done, options)


def report(done: BatchRun, options: BatchOptions) -> int:
    """Print what the batch did; its exit status: 0, 3 when the grader failed on a student, 128 + the signal's
    number after an interrupt."""
    from autograder.deliver.batch import run as batch
    from autograder.deliver.batch import summary

    for note in done.notes:
        print(f"attnlab {NAME}: {note}", file=sys.stderr)
    if done.interrupted is not None:
        print(f"attnlab {NAME}: {batch.stopped_text(done)}", file=sys.stderr)
        return 128 + done.interrupted
    print(summary.table(done.class_summary))
    print(f"\n{batch.run_text(done)}; wrote {done.csv}, {options.out}/students/, {done.summary.get('page', '')}")
    for result in sorted(done.results, key=lambda r: r.student):
        if not result.graded:
            kind = "the grader failed on" if result.grader_failed else "not graded"
            print(f"{kind}: {clean(result.student, 200)}: {clean(result.reason, 600)}")
    if done.grader_failures:
        print(
            f"attnlab {NAME}: the grader itself failed on {done.grader_failures} submission(s), each graded twice; "
            "their rows have status 'grader failed' and no points",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return EXIT_OK
