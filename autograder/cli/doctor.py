"""``attnlab doctor``: which isolation of student code this machine gives, and why."""

from __future__ import annotations

import argparse

from autograder.cli import options
from autograder.cli.common import EXIT_OK, INSTRUCTOR
from autograder.sandbox import isolation

NAME, AUDIENCE = "doctor", INSTRUCTOR
HELP = "show the isolation of student code this machine gives (namespaces, user or hook), and why; with a folder of "
HELP += "hand-ins, whether other users could read it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions",
        nargs="?",
        metavar="SUBMISSIONS",
        type=options.folder,
        help="a folder of hand-ins to grade here: warn when other users (student code at the user layer) can read it",
    )


def run(args: argparse.Namespace) -> int:
    for line in isolation.doctor_lines():
        print(line)
    for line in torch_lines():
        print(line)
    if args.submissions:
        warning = isolation.readable_warning(args.submissions)
        if warning is None:
            print(f"Hand-ins: {args.submissions} is closed to other users.")
        elif isolation.choose() == isolation.Level.USER:
            print(f"Warning: {warning}.")
        else:
            print(f"Hand-ins: {args.submissions} is readable by other users (harmless here: each child sees only "
                  "its own copy; at the user layer it would not be).")  # fmt: skip
    return EXIT_OK


def torch_lines() -> list[str]:
    """The installed torch, and a warning when it is not the release the kit is tested with."""
    from autograder import i18n
    from autograder.base import versions

    installed = versions.installed_torch()
    with i18n.using(i18n.choose_or_source()):
        warning = versions.torch_warning(installed)
    return [f"torch: {installed or '-'} (tested with {versions.TESTED_TORCH})"] + [f"  {warning}"] * bool(warning)
