"""Cases of the first three steps: softmax, scaling, mask."""

from __future__ import annotations

import numpy as np

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose import mask as mask_mistakes
from autograder.judge.diagnose import scaling as scaling_mistakes
from autograder.judge.diagnose import softmax as softmax_mistakes


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260701)  # public, fixed: hidden checks draw their own
    return {
        "x_batch": rng.normal(size=(2, 3, 5)) * 3,
        "Qb": rng.normal(size=(2, 3, 4, 5)),
        "Kb": rng.normal(size=(2, 3, 6, 5)),
        "Vb": rng.normal(size=(2, 3, 6, 7)),
        "Q6": rng.normal(size=(6, 4)),
        "K6": rng.normal(size=(6, 4)),
        "V6": rng.normal(size=(6, 3)),
        "Q2": rng.normal(size=(2, 4)),
        "K5": rng.normal(size=(5, 4)),
        "V5": rng.normal(size=(5, 3)),
        "S45": rng.normal(size=(4, 5)),
    }


INPUTS = _rng_inputs()
X, W_Q, W_K, W_V = (chapter.inputs(n) for n in ("X", "WQ", "WK", "WV"))
Q_CH, K_CH, V_CH = X @ W_Q, X @ W_K, X @ W_V
LARGE = (40 * Q_CH, 40 * K_CH, V_CH)  # scores near 1000: exp overflows unless the row maximum is subtracted
CAUSAL3 = np.tril(np.ones((3, 3), dtype=bool))
CAUSAL6 = np.tril(np.ones((6, 6), dtype=bool))
CAUSAL25 = np.tril(np.ones((2, 5), dtype=bool), k=3)


def _causal_variants(ref, n_q, n_k=None):
    return mask_mistakes.causal_mask_variants(n_q, n_k)


def _apply_variants(ref, scores, mask):
    return mask_mistakes.apply_mask_variants(scores, mask)


CASES: tuple[Case, ...] = (
    Case("softmax_worked", "softmax", "softmax", (chapter.value("T72-scaled"),), softmax_mistakes.softmax_variants),
    Case("softmax_batch", "softmax", "softmax", (INPUTS["x_batch"],), softmax_mistakes.softmax_variants),
    Case("softmax_batch_axis0", "softmax", "softmax", (INPUTS["x_batch"], 0), softmax_mistakes.softmax_variants),
    Case("softmax_large", "softmax", "softmax", (INPUTS["x_batch"] + 1000.0,), softmax_mistakes.softmax_variants),
    Case("project_worked", "scaling", "project", (X, W_Q, W_K, W_V), scaling_mistakes.project_variants),
    Case("scores_worked", "scaling", "scores", (Q_CH, K_CH), scaling_mistakes.scores_variants),
    Case("scaled_worked", "scaling", "scaled_scores", (Q_CH, K_CH), scaling_mistakes.scaled_scores_variants),
    Case("attention_worked", "scaling", "attention", (Q_CH, K_CH, V_CH), scaling_mistakes.attention_variants),
    Case("attention_large", "scaling", "attention", LARGE, scaling_mistakes.attention_variants),
    Case(
        "attention_batch",
        "scaling",
        "attention",
        (INPUTS["Qb"], INPUTS["Kb"], INPUTS["Vb"]),
        scaling_mistakes.attention_variants,
    ),
    Case("causal_4", "mask", "causal_mask", (4,), _causal_variants),
    Case("causal_2_5", "mask", "causal_mask", (2, 5), _causal_variants),
    Case("apply_mask_25", "mask", "apply_mask", (INPUTS["S45"][:2], CAUSAL25), _apply_variants),
    Case("masked_worked", "scaling", "attention", (Q_CH, K_CH, V_CH, CAUSAL3), scaling_mistakes.with_mask_variants),
    Case(
        "masked_6",
        "scaling",
        "attention",
        (INPUTS["Q6"], INPUTS["K6"], INPUTS["V6"], CAUSAL6),
        scaling_mistakes.with_mask_variants,
    ),
    Case(
        "masked_2_5",
        "scaling",
        "attention",
        (INPUTS["Q2"], INPUTS["K5"], INPUTS["V5"], CAUSAL25),
        scaling_mistakes.with_mask_variants,
    ),
)
