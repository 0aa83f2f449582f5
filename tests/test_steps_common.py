"""What every step's graders must do: full marks for the reference, 0 for the stubs, and need their own module."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.grading.model import GradeReport
from tests import kit

# The timing step grades a measured report, not function values: tests/test_step_timing.py covers it.
FUNCTION_STEPS = [step.id for step in tasks.STEPS if step.id != "timing"]


@pytest.mark.parametrize("step", FUNCTION_STEPS)
def test_reference_scores_full_marks(step: str, reference_report: GradeReport) -> None:
    result = reference_report.step(step)
    assert result.earned == pytest.approx(result.possible) and result.possible == pytest.approx(
        tasks.step(step).points
    ), [c.message for c in result.failed]


@pytest.mark.parametrize("step", [step.id for step in tasks.STEPS])
def test_stubs_score_zero_and_name_their_step(step: str, stubs_report: GradeReport) -> None:
    result = stubs_report.step(step)
    assert result.earned == 0
    for check in result.checks:
        assert check.message.startswith(tasks.step(step).title + ":"), check.message
        assert not check.internal_error, check.message


@pytest.mark.slow
@pytest.mark.parametrize("step", FUNCTION_STEPS)
def test_every_check_needs_its_own_module(step: str, tmp_path: Path) -> None:
    """The reference with only this step's module left as the stub scores 0 on the step."""
    folder = tmp_path / f"only_{step}_stubbed"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    shutil.copy(kit.STUBS / f"{step}.py", folder / f"{step}.py")
    result = kit.grade(folder, steps=(step,)).step(step)
    assert result.earned == 0, [c.title for c in result.checks if c.passed]
