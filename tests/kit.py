"""Shared helpers of the kit's own tests: grade a folder, build a buggy variant."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.grading import engine
from autograder.grading.model import GradeReport
from autograder.judge import diagnose
from autograder.sandbox.client import Limits

KIT = Kit.source_tree()
ROOT, SOLUTIONS, STUBS, HIDDEN = KIT.root, KIT.solutions, KIT.assignments, KIT.hidden
TEST_SEED = 20261129


def grade(
    folder: Path,
    *,
    steps: tuple[str, ...] | None = None,
    public_only: bool = False,
    limits: Limits | None = None,
    seed: int = TEST_SEED,
    reference: Path | None = SOLUTIONS,
) -> GradeReport:
    """Grade ``folder`` with the kit's public and hidden graders (``reference=None``: as a student's own run does,
    with no reference anywhere)."""
    return engine.grade(
        engine.GradeOptions(
            submission=folder,
            hidden=None if public_only else HIDDEN,
            reference=reference,
            seed=seed,
            public_only=public_only,
            steps=steps,
            limits=limits or Limits(),
        )
    )


@dataclass(frozen=True)
class Variant:
    """A known wrong answer: the reference with ``old`` replaced by ``new`` in ``module``.py.

    Grading it must cost points in ``step`` and name ``mistake`` in a failed check.
    """

    name: str
    step: str
    module: str
    old: str
    new: str
    mistake: str

    def build(self, into: Path) -> Path:
        folder = into / self.name
        shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
        path = folder / f"{self.module}.py"
        text = path.read_text(encoding="utf-8")
        if self.old not in text:
            raise AssertionError(
                f"variant {self.name}: {self.old!r} is not in {self.module}.py any more; update the variant"
            )
        path.write_text(text.replace(self.old, self.new), encoding="utf-8")
        return folder


def assert_diagnosed(report: GradeReport, variant: Variant) -> None:
    """The variant lost points in its step, and a failed check named its mistake."""
    result = report.step(variant.step)
    assert result.earned < result.possible, f"{variant.name} scored full marks on {variant.step}"
    named = {part for c in result.failed if c.mistake for part in diagnose.parts(c.mistake)}
    wanted = [diagnose.parts(alternative) for alternative in variant.mistake.split("|")]
    assert any(all(part in named for part in parts) for parts in wanted), (
        f"{variant.name}: expected diagnosis {variant.mistake!r}, got {named}; messages: "
        f"{[c.message for c in result.failed]}"
    )
    assert not any(c.internal_error for s in report.steps for c in s.checks), "a grader broke on this variant"


def check_variant(variant: Variant, into: Path, *, public_only: bool = False) -> None:
    """Grade the wrong variant on its step alone and require its diagnosis."""
    assert_diagnosed(grade(variant.build(into), steps=(variant.step,), public_only=public_only), variant)


def steps_using(module: str) -> tuple[str, ...]:
    """The steps whose reference modules import ``module`` (``from softmax import ...``), directly or not."""
    imports = {
        path.stem: {
            a or b for a, b in re.findall(r"^(?:from (\w+) import|import (\w+))", path.read_text("utf-8"), re.M)
        }
        for path in SOLUTIONS.glob("*.py")
    }
    using, grew = {module}, True
    while grew:
        more = {name for name, imported in imports.items() if imported & using} - using
        using, grew = using | more, bool(more)
    return tuple(s.id for s in tasks.STEPS if s.module in using - {module} and s.id != "timing")


def steps_touching(modules: Iterable[str]) -> tuple[str, ...]:
    """The steps (timing aside) whose module is one of ``modules`` or imports one of them, directly or not: the
    only steps a change to those modules can change (every other step's child never runs them)."""
    touched = {m for module in modules for m in (module, *steps_using(module))}
    return tuple(s.id for s in tasks.STEPS if s.module in touched and s.id != "timing")


def check_alternative(variant: Variant, into: Path) -> None:
    """Grade a valid alternative on its step and on the steps whose modules use it: full marks everywhere."""
    steps = (variant.step, *[s for s in steps_using(variant.module) if s != variant.step])
    report = grade(variant.build(into), steps=steps)
    lost = {s.step.id: [c.message for c in s.failed] for s in report.steps if s.earned < s.possible}
    assert not lost, lost


def variant_tests(
    variants: tuple[Variant, ...], alternatives: tuple[Variant, ...]
) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two tests of a step's variants, for its test file to bind at module level (pytest collects them by name)."""

    @pytest.mark.parametrize("variant", variants, ids=lambda v: v.name)
    def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
        check_variant(variant, tmp_path)

    @pytest.mark.parametrize("variant", alternatives, ids=lambda v: v.name)
    def test_valid_alternative_scores_full_marks(variant: Variant, tmp_path: Path) -> None:
        check_alternative(variant, tmp_path)

    return test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks
