"""``attnlab timing [FOLDER]``: time the submission's timing.py in the sandbox; write the report and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder import i18n
from autograder.cli import options
from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, STUDENT, usage_error
from autograder.cli.grade import default_folder
from autograder.i18n import N_, _

NAME, AUDIENCE = "timing", STUDENT
HELP = "time your timing.py (in the sandbox); write reports/timing.json and the plots"
EXIT_NO_REPORT = 1  # the student's timing code failed: no report was written
NO_TIMING = N_("{folder} has no timing.py (give the folder that holds your lab files)")
NO_REPORT = N_("no report written: {reason}")
PRINTED = N_("your code printed:")
WROTE = N_("wrote {paths}")
KEPT = N_(
    "the earlier report {path} (written {when}) is kept as it was: `attnlab grade` grades that one until a run succeeds"
)
NO_EARLIER = N_("there is no earlier report: `attnlab grade` has no timing report to grade")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        nargs="?",
        type=options.folder,
        help="the submission folder (default: the one `attnlab grade` grades from here)",
    )
    parser.add_argument(
        "--device", choices=["cpu", "cuda"], help="where to measure (default: CUDA when available, else the CPU)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the reduced sweep (fewer sizes and repeats; same fit ranges)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--lang", choices=i18n.LANGUAGES, help=f"language of the output (default: ${i18n.ENV_LANG}, else the locale)"
    )


def run(args: argparse.Namespace) -> int:
    """Measure the submission's timing.py; write reports/timing.json and the plots; print the summary."""
    from autograder.judge.timing import analysis, report, runner

    try:
        i18n.activate(i18n.choose(args.lang))
    except ValueError as error:
        return usage_error(NAME, str(error))
    from autograder.base import versions

    missing = versions.torch_missing(["timing"])
    if missing:  # the machine's set-up, not the student's timing code (exit status 3)
        print(f"attnlab timing: {missing}", file=sys.stderr)
        return EXIT_INTERNAL
    folder = Path(args.folder) if args.folder else default_folder(Path.cwd())
    if not (folder / "timing.py").is_file():  # a folder that does not exist was refused when it was parsed
        return usage_error(NAME, _(NO_TIMING).format(folder=folder))
    try:
        data = runner.measure(folder, device=args.device, quick=args.quick, progress=not args.no_progress)
        written = runner.write(folder, data)
    except runner.MeasurementError as error:
        print(f"attnlab timing: {_(NO_REPORT).format(reason=error.message)}", file=sys.stderr)
        if error.output:
            print(f"{_(PRINTED)}\n{error.output}", file=sys.stderr)
        print(f"attnlab timing: {_earlier(folder)}", file=sys.stderr)
        return EXIT_NO_REPORT
    for line in analysis.summary(report.parse(data)):
        print(line)
    print(_(WROTE).format(paths=", ".join(str(path) for path in written)))
    return EXIT_OK


def _earlier(folder: Path) -> str:
    """What happens to the report an earlier run wrote (kept, or none), in one sentence."""
    import time

    from autograder.judge.timing import report

    path = folder / report.FOLDER / report.FILE
    if not path.is_file():
        return _(NO_EARLIER)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
    return _(KEPT).format(path=path, when=when)
