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
    return EXIT_OK
