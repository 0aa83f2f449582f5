"""What the graders of a step check, read from the graders without running them.

The public checks (title, points, step) are collected by pytest itself,
``--collect-only``, so parametrized checks count once per case and the titles
are the ones the report prints. The chapter values a step compares with are
every literal ``chapter.value("ID")`` in its grader files, public and hidden
alike; a file belongs to a step through its ``pytestmark = pytest.mark.step("id")``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from autograder.grading import checklist

STEP_MARK = re.compile(r"""pytest\.mark\.step\(\s*["']([A-Za-z0-9_]+)["']\s*\)""")
CHAPTER_VALUE = re.compile(r"""chapter\.value\(\s*["']([^"']+)["']\s*\)""")


@dataclass(frozen=True)
class Check:
    """One public check: its title (the test's docstring) and its points."""

    title: str
    points: float


def step_of(source: str) -> str | None:
    """The step a grader file's module-level ``pytestmark`` names, if any."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            match = STEP_MARK.search(ast.unparse(node.value))
            if match:
                return match.group(1)
    return None


def grader_files(folder: Path | None) -> list[Path]:
    return sorted(folder.glob("test_*.py")) if folder and folder.is_dir() else []


@lru_cache(maxsize=8)
def checks_by_step(public: Path, lang: str = "en") -> dict[str, list[Check]]:
    """Each step's public checks as the report names them in ``lang`` (the active language: titles are
    translated as they are collected), collected (not run) from the public grader folder."""
    found: dict[str, list[Check]] = {}
    for check in checklist.collect(public, public / "pytest.ini"):
        found.setdefault(check.step, []).append(Check(check.title, check.points))
    return found


def chapter_ids_by_step(public: Path, hidden: Path | None) -> dict[str, dict[str, bool]]:
    """For each step, the chapter ids its graders check, each mapped to whether a public check uses it."""
    found: dict[str, dict[str, bool]] = {}
    for folder, is_public in ((public, True), (hidden, False)):
        for path in grader_files(folder):
            source = path.read_text(encoding="utf-8")
            step = step_of(source)
            if not step:
                continue
            ids = found.setdefault(step, {})
            for entry in CHAPTER_VALUE.findall(source):
                ids[entry] = ids.get(entry, False) or is_public
    return found
