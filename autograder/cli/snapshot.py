"""``attnlab snapshot``: regenerate the public checks' snapshots of reference and wrong answers."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import cases, tasks
from autograder.cli.common import EXIT_OK, INSTRUCTOR
from autograder.kit import PACKAGE, Kit

NAME, AUDIENCE = "snapshot", INSTRUCTOR
HELP = "regenerate the public checks' snapshot of reference and wrong answers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reference", default=str(Kit.source_tree().solutions), help="the reference folder (default: the kit's)"
    )
    parser.add_argument("--module", action="append", help="only this case module (repeatable; default: all)")


def run(args: argparse.Namespace) -> int:
    from autograder.reference import Reference

    ref = Reference(Path(args.reference), tasks.modules_present(Path(args.reference)))
    for name, module in cases.case_modules().items():
        if args.module and name not in args.module:
            continue
        target = PACKAGE / "data" / cases.SNAPSHOT_DIR / cases.snapshot_name(name)
        data = cases.snapshot_bytes(cases.build_snapshot(ref, module.CASES))
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            print(f"wrote {target}")
    return EXIT_OK
