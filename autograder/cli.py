"""``attnlab``: the kit's commands, a thin layer over the engine's functions.

Exit status: 0 whenever grading ran, whatever the score; 2 for usage errors;
3 when the graders themselves failed (a report is still written if possible).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from autograder import cases, engine, handout, nbgrader_course, stubs, tasks
from autograder.report import render
from autograder.sandbox import isolation
from autograder.sandbox.client import Limits

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3
DEFAULT_FOLDER = Path("assignments") / tasks.LAB


def kit_root() -> Path | None:
    """The instructor kit (holding ``hidden/`` and ``solutions/``): ATTNLAB_KIT, the source tree, or the current
    folder."""
    candidates = (
        [Path(os.environ["ATTNLAB_KIT"])]
        if os.environ.get("ATTNLAB_KIT")
        else [Path(__file__).resolve().parents[1], Path.cwd()]
    )
    return next((c for c in candidates if (c / "hidden" / tasks.LAB).is_dir()), None)


def _secret(args: argparse.Namespace) -> tuple[str, bool]:
    if args.secret_file:
        return Path(args.secret_file).read_text(encoding="utf-8").strip(), False
    if os.environ.get("ATTNLAB_SECRET"):
        return os.environ["ATTNLAB_SECRET"], False
    return engine.DEFAULT_SECRET, True


def grade_command(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        print(
            f"attnlab grade: {folder} is not a folder (give the folder that holds softmax.py, scaling.py, ...)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    root = kit_root()
    hidden = (
        None
        if args.public_only
        else Path(args.hidden)
        if args.hidden
        else (root / "hidden" / tasks.LAB if root else None)
    )
    reference = Path(args.reference) if args.reference else (root / "solutions" / tasks.LAB if root else None)
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
        isolation=args.isolation,
    )
    try:
        report = engine.grade(options)
    except engine.IsolationRefused as error:
        print(f"attnlab grade: not graded: {error}", file=sys.stderr)
        return EXIT_USAGE
    except engine.GradingError as error:
        print(f"attnlab grade: the graders failed: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    if hidden is not None and default_secret and args.seed is None:
        report = engine.with_note(report, engine.NOTE_DEFAULT_SECRET)
    print(render.table(report))
    if args.json:
        write_atomically(Path(args.json), render.gradescope_json(report))
    return EXIT_INTERNAL if report.internal_errors else EXIT_OK


def write_atomically(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a temporary file in the same folder, then renamed over it (a link
    already there is replaced, never followed)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def doctor_command(args: argparse.Namespace) -> int:
    """Print what isolation student code gets on this machine, and why."""
    for line in isolation.doctor_lines():
        print(line)
    return EXIT_OK


def stubs_command(args: argparse.Namespace) -> int:
    solutions, assignments = Path(args.solutions), Path(args.assignments)
    if args.check:
        stale = stubs.drift(solutions, assignments)
        for path in stale:
            print(f"stale stub: {path} (run: attnlab stubs)")
        return 1 if stale else EXIT_OK
    for path in stubs.write(solutions, assignments):
        print(f"wrote {path}")
    return EXIT_OK


def snapshot_command(args: argparse.Namespace) -> int:
    from autograder.reference import Reference

    ref = Reference(Path(args.reference), tasks.modules_present(Path(args.reference)))
    folder = Path(cases.__file__).parent.parent / "data" / cases.SNAPSHOT_DIR
    for name, module in cases.case_modules().items():
        if args.module and name not in args.module:
            continue
        target = folder / cases.snapshot_name(name)
        data = cases.snapshot_bytes(cases.build_snapshot(ref, module.CASES))
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            print(f"wrote {target}")
    return EXIT_OK


def timing_command(args: argparse.Namespace) -> int:
    """Measure the submission's timing.py; write reports/timing.json and the plots; print the summary."""
    from autograder.timing import analysis, report, runner

    folder = Path(args.folder)
    if not (folder / "timing.py").is_file():
        print(f"attnlab timing: {folder} has no timing.py (give the folder that holds your lab files)", file=sys.stderr)
        return EXIT_USAGE
    try:
        data = runner.measure(folder, device=args.device, quick=args.quick, progress=not args.no_progress)
        written = runner.write(folder, data)
    except runner.MeasurementError as error:
        print(f"attnlab timing: no report written: {error.message}", file=sys.stderr)
        if error.output:
            print(f"your code printed:\n{error.output}", file=sys.stderr)
        return 1
    for line in analysis.summary(report.parse(data)):
        print(line)
    print("wrote " + ", ".join(str(path) for path in written))
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="attnlab", description="Autograder kit for the attention lab (lab 7).")
    sub = main.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade a submission folder and print the per-step table")
    grade.add_argument(
        "folder", nargs="?", default=str(DEFAULT_FOLDER), help=f"the submission folder (default: {DEFAULT_FOLDER})"
    )
    grade.add_argument("--json", metavar="PATH", help="also write a Gradescope results.json to PATH")
    grade.add_argument(
        "--public-only", action="store_true", help="grade as a student's release would: public checks only"
    )
    grade.add_argument(
        "--hidden", metavar="DIR", help="folder of the hidden graders (default: the kit's hidden/lab07_attention)"
    )
    grade.add_argument(
        "--reference",
        metavar="DIR",
        help="folder of the reference solution (default: the kit's solutions/lab07_attention)",
    )
    grade.add_argument(
        "--secret-file", metavar="PATH", help="file holding the course secret (default: $ATTNLAB_SECRET)"
    )
    grade.add_argument(
        "--student", metavar="ID", help="the submission's identity for the hidden seed (default: the folder's name)"
    )
    grade.add_argument("--seed", type=int, help="hidden-input seed to reproduce a report (printed in every report)")
    grade.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    grade.add_argument("--timeout", type=float, help="seconds a single call into student code may take (default: 10)")
    grade.add_argument(
        "--isolation",
        choices=[level.label for level in isolation.Level],
        help="refuse to grade with weaker isolation of student code than this (see `attnlab doctor`)",
    )
    grade.set_defaults(run=grade_command)

    doctor = sub.add_parser("doctor", help="show the isolation of student code this machine gives, and why")
    doctor.set_defaults(run=doctor_command)

    stub = sub.add_parser("stubs", help="generate the student stubs from the solutions")
    stub.add_argument("--solutions", default=str(Path("solutions") / tasks.LAB))
    stub.add_argument("--assignments", default=str(DEFAULT_FOLDER))
    stub.add_argument("--check", action="store_true", help="only report stubs that differ from generation (exit 1)")
    stub.set_defaults(run=stubs_command)

    snap = sub.add_parser("snapshot", help="regenerate the public checks' snapshot of reference and wrong answers")
    snap.add_argument("--reference", default=str(Path("solutions") / tasks.LAB))
    snap.add_argument("--module", action="append", help="only this case module (repeatable; default: all)")
    snap.set_defaults(run=snapshot_command)

    timing = sub.add_parser(
        "timing", help="time your timing.py (in the sandbox); write reports/timing.json and the plots"
    )
    timing.add_argument(
        "folder", nargs="?", default=str(DEFAULT_FOLDER), help=f"the submission folder (default: {DEFAULT_FOLDER})"
    )
    timing.add_argument(
        "--device", choices=["cpu", "cuda"], help="where to measure (default: CUDA when available, else the CPU)"
    )
    timing.add_argument(
        "--quick", action="store_true", help="the reduced sweep (fewer sizes and repeats; same fit ranges)"
    )
    timing.add_argument("--no-progress", action="store_true", help="no progress bar")
    timing.set_defaults(run=timing_command)

    handout.register(sub)
    nbgrader_course.register(sub)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
