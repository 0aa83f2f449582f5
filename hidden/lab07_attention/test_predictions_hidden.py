"""Hidden checks of the predict-first step: each answer in PREDICTIONS against the value the reference computes.

One check per question of ``data/predictions.toml``, worth the hidden share of
its points (``tasks.PREDICTION_HIDDEN_SHARE``): the question's ``compute`` code
runs against the reference on the checks' trusted side (the ``oracle``; the
reference never ships to students), and a prediction that agrees only with a wrong function of the
student's loses this half, with the likely misconception named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from autograder.base import tasks
from autograder.i18n import N_, _
from autograder.judge import predictions
from autograder.judge.checking import Lab
from autograder.judge.checks.predictions import agrees_with_reference
from autograder.judge.oracle import Oracle
from autograder.judge.predictions import Question

pytestmark = pytest.mark.step("predictions")
AGAINST_REFERENCE = N_("{short}, against the reference")


def _check(question: Question) -> Callable[[Lab, Any], None]:
    """The hidden check of one question."""

    def check(lab: Lab, oracle: Oracle) -> None:
        agrees_with_reference(lab, question, oracle)

    check.__name__ = check.__qualname__ = f"test_{question.id}_against_reference"
    check.__doc__ = AGAINST_REFERENCE.format(short=question.short)  # the English title; ``title`` translates
    check.title = lambda: _(AGAINST_REFERENCE).format(short=_(question.short))  # type: ignore[attr-defined]
    return pytest.mark.points(question.points * tasks.PREDICTION_HIDDEN_SHARE)(check)


for _question in predictions.load():
    globals()[f"test_{_question.id}_against_reference"] = _check(_question)
del _question
