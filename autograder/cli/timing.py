"""``attnlab timing [FOLDER]``: time the submission's timing.py in the sandbox; write the report and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.cli.common import EXIT_OK, STUDENT, usage_error
from autograder.cli.grade import DEFAULT_FOLDER

NAME, AUDIENCE = "timing", STUDENT
HELP = "time your timing.py (in the sandbox); write reports/timing.json and the plots"
EXIT_NO_REPORT = 1  # the student's timing code failed: no report was written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", nargs="?", default=str(DEFAULT_FOLDER), help=f"the submission folder (default: {DEFAULT_FOLDER})"
    )
    parser.add_argument(
        "--device", choices=["cpu", "cuda"], help="where to measure (default: CUDA when available, else the CPU)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the reduced sweep (fewer sizes and repeats; same fit ranges)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Measure the submission's timing.py; write reports/timing.json and the plots; print the summary."""
    from autograder.timing import analysis, report, runner

    folder = Path(args.folder)
    if not (folder / "timing.py").is_file():
        return usage_error(NAME, f"{folder} has no timing.py (give the folder that holds your lab files)")
    try:
        data = runner.measure(folder, device=args.device, quick=args.quick, progress=not args.no_progress)
        written = runner.write(folder, data)
    except runner.MeasurementError as error:
        print(f"attnlab timing: no report written: {error.message}", file=sys.stderr)
        if error.output:
            print(f"your code printed:\n{error.output}", file=sys.stderr)
        return EXIT_NO_REPORT
    for line in analysis.summary(report.parse(data)):
        print(line)
    print("wrote " + ", ".join(str(path) for path in written))
    return EXIT_OK
