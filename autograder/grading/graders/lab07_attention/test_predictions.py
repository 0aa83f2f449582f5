"""Public checks of the predict-first step: each answer in PREDICTIONS against what the student's own code computes.

One check per question of ``data/predictions.toml`` (the registry's
``tasks.QUESTIONS``), titled with the question's short form and worth the
public share of its points (``tasks.PREDICTION_HIDDEN_SHARE``). The question's
``compute`` code runs in the sandbox with the student's modules in place of the
reference ("predict, then test"); the student kit holds no expected answer.
Where a reference is available (an instructor's grading) the value of the
student's own code must also be the reference's: two values from the student's
process agreeing proves nothing on its own. The comparison of the prediction
itself with the reference is the hidden check's
(``hidden/lab07_attention/test_predictions_hidden.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from autograder.base import tasks
from autograder.judge import predictions
from autograder.judge.checking import Lab
from autograder.judge.checks.predictions import agrees_with_own_code
from autograder.judge.predictions import Question

pytestmark = pytest.mark.step("predictions")


def _check(question: Question) -> Callable[[Lab, Any], None]:
    """The public check of one question, titled with its short form."""

    def check(lab: Lab, oracle: Any) -> None:
        agrees_with_own_code(lab, question, oracle)

    check.__name__ = check.__qualname__ = f"test_{question.id}"
    check.__doc__ = question.short
    return pytest.mark.points(question.points * (1 - tasks.PREDICTION_HIDDEN_SHARE))(check)


# One function per question (not parametrize): the report titles a check with its function's docstring.
for _question in predictions.load():
    globals()[f"test_{_question.id}"] = _check(_question)
del _question
