"""``attnlab doctor``: which isolation of student code this machine gives, and why."""

from __future__ import annotations

import argparse

from autograder.cli.common import EXIT_OK, INSTRUCTOR
from autograder.sandbox import isolation

NAME, AUDIENCE = "doctor", INSTRUCTOR
HELP = "show the isolation of student code this machine gives (namespaces, user or hook), and why"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    for line in isolation.doctor_lines():
        print(line)
    for line in torch_lines():
        print(line)
    return EXIT_OK


def torch_lines() -> list[str]:
    """The installed torch, and a warning when it is not the release the kit is tested with."""
    from autograder import i18n, versions

    installed = versions.installed_torch()
    with i18n.using(i18n.choose_or_source()):
        warning = versions.torch_warning(installed)
    return [f"torch: {installed or '-'} (tested with {versions.TESTED_TORCH})"] + [f"  {warning}"] * bool(warning)
