"""Cases of the gradients step: the chapter's two-token head (the Russian section) and a rectangular head."""

from __future__ import annotations

import numpy as np

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose.gradients import attention_backward_variants

RU_Q, RU_K, RU_V, RU_dO = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V", "RU_dO"))
ROW_0 = np.array([[1.0, 1.0], [0.0, 0.0]])  # dO that reads query row 0 only: dV[j] = A[0, j] * [1, 1]
ROW_1 = np.array([[0.0, 0.0], [1.0, 1.0]])
SINGLE = (np.array([[0.3, -1.2]]), np.array([[2.0, 0.7]]), np.array([[5.0, -2.0]]), np.array([[0.7, -1.3]]))


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260710)  # public, fixed: hidden checks draw their own
    return {
        "Q": rng.normal(size=(3, 4)),
        "K": rng.normal(size=(5, 4)),
        "V": rng.normal(size=(5, 2)),
        "dO": rng.normal(size=(3, 2)),
    }


INPUTS = _rng_inputs()
RECTANGULAR = (INPUTS["Q"], INPUTS["K"], INPUTS["V"], INPUTS["dO"])

CASES: tuple[Case, ...] = (
    Case("grad_russian", "gradients", "attention_backward", (RU_Q, RU_K, RU_V, RU_dO), attention_backward_variants),
    Case(
        "grad_russian_row0", "gradients", "attention_backward", (RU_Q, RU_K, RU_V, ROW_0), attention_backward_variants
    ),
    Case(
        "grad_russian_row1", "gradients", "attention_backward", (RU_Q, RU_K, RU_V, ROW_1), attention_backward_variants
    ),
    Case("grad_single", "gradients", "attention_backward", SINGLE, attention_backward_variants),
    Case("grad_rectangular", "gradients", "attention_backward", RECTANGULAR, attention_backward_variants),
)
