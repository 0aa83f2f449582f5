"""The predict-first questions as snapshot cases: each question's value, computed from the reference.

Students grade without the reference, so ``attnlab snapshot --module predictions``
stores what each question's ``compute`` code gives, and the public checks read
it back with :func:`autograder.predictions.expected`. A question added to
``data/predictions.toml`` needs a fresh snapshot (the kit's snapshot test says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder import predictions
from autograder.cases import Case


@dataclass(frozen=True)
class QuestionCase(Case):
    """A case whose answer is a question's computed value (no wrong answers: those are in the data file)."""

    question: predictions.Question | None = None

    def run(self, ref: Any) -> tuple[np.ndarray, dict[str, Any]]:
        return predictions.as_array(self.question, predictions.compute(self.question, ref)), {}


CASES: tuple[Case, ...] = tuple(
    QuestionCase(predictions.case_name(q), "predictions", "compute", (), question=q) for q in predictions.load()
)
