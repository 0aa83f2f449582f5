"""The public engine: the ``autograder`` package without what only instructors run.

A student's wheel (and the Gradescope zip's) holds the grader, the public
checks and their snapshots, the sandbox, the timing tools, the workbench (its
modules, its page's script and style under ``deliver/workbench/static``, and its
probes), the notebook's grade cells and the Gradescope runner. It leaves out
the instructor's commands and what they need: stub generation (it names the
solution markers), the handout builder (the workbench's screenshot for the
handout included, ``deliver/handout/workbench_figure.py``), the nbgrader course writer
(its notebook source holds the hidden-test blocks and the model answers), the
release and Gradescope builders, batch grading, the catalogs' tools and sources
(the compiled ``.mo`` catalogs ship). A kit test checks that no public module
imports a left-out one.
"""

from __future__ import annotations

from pathlib import Path

from autograder.base.kit import PACKAGE

# Paths relative to the package folder; a trailing "/" leaves out a whole subpackage.
INSTRUCTOR_ONLY = (
    "cli/batch.py",
    "cli/catalogs.py",
    "cli/gradescope.py",
    "cli/handout.py",
    "cli/nbgrader_course.py",
    "cli/release.py",
    "cli/snapshot.py",
    "cli/stubs.py",
    "deliver/batch/",
    "deliver/handout/",
    "deliver/release/",
    "i18n/catalogs.py",
    "locale/attnlab.pot",
    "locale/babel.cfg",
    "deliver/gradescope/build.py",
    "deliver/gradescope/scripts.py",
    "deliver/nbgrader_course/config.py",
    "deliver/nbgrader_course/course.py",
    "deliver/nbgrader_course/exchange.py",
    "deliver/nbgrader_course/export.py",
    "deliver/nbgrader_course/notebook.py",
    "deliver/nbgrader_course/preprocessors.py",
    "deliver/nbgrader_course/release.py",
    "deliver/nbgrader_course/sanitise.py",
)
LEFT_OUT = ("__pycache__", ".pyc", ".po")  # the catalogs' sources: the wheel ships the compiled .mo


def is_public(relative: str) -> bool:
    """Whether the package file at ``relative`` (a POSIX path inside the package) belongs to the public engine."""
    if any(part in LEFT_OUT or part.endswith(LEFT_OUT[1:]) for part in relative.split("/")):
        return False
    return not any(
        relative == entry or (entry.endswith("/") and relative.startswith(entry)) for entry in INSTRUCTOR_ONLY
    )


def public_files(package: Path = PACKAGE) -> list[Path]:
    """The public engine's files under ``package`` (sources, graders, data, snapshots)."""
    return sorted(
        path
        for path in Path(package).rglob("*")
        if path.is_file() and not path.is_symlink() and is_public(path.relative_to(package).as_posix())
    )
