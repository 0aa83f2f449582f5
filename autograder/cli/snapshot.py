"""``attnlab snapshot``: regenerate the public checks' snapshots of reference and wrong answers."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np

from autograder.base import tasks
from autograder.base.kit import PACKAGE, Kit
from autograder.base.numerics import same_up_to_rounding
from autograder.cli import options
from autograder.cli.common import EXIT_OK, INSTRUCTOR
from autograder.judge import cases

NAME, AUDIENCE = "snapshot", INSTRUCTOR
HELP = "regenerate the public checks' snapshot of reference and wrong answers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reference",
        default=str(Kit.source_tree().solutions),
        type=options.reference,
        help="the reference folder (default: the kit's)",
    )
    parser.add_argument(
        "--module",
        action="append",
        type=case_module,
        help="only this case module (repeatable; default: all)",
    )


def case_module(text: str) -> str:
    """The name of one of the public checks' case modules."""
    names = sorted(cases.case_modules())
    if text not in names:
        raise argparse.ArgumentTypeError(f"no case module {text!r}; the kit has {', '.join(names)}")
    return text


def run(args: argparse.Namespace) -> int:
    from autograder.base.reference import Reference

    ref = Reference(Path(args.reference), tasks.modules_present(Path(args.reference)))
    for name, module in cases.case_modules().items():
        if args.module and name not in args.module:
            continue
        target = PACKAGE / "data" / cases.SNAPSHOT_DIR / cases.snapshot_name(name)
        fresh = cases.build_snapshot(ref, module.CASES)
        if target.exists():
            with np.load(io.BytesIO(target.read_bytes()), allow_pickle=False) as stored:
                if same_up_to_rounding(dict(stored), fresh):
                    continue  # another machine's last bits are not a change
        target.write_bytes(cases.snapshot_bytes(fresh))
        print(f"wrote {target}")
    return EXIT_OK
