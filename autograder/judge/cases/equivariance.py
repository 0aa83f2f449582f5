"""Cases of the equivariance step: the worked example reordered to içti kedi sütü, with and without positions and
mask."""

from __future__ import annotations

import numpy as np

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose import equivariance as mistakes

X, W_Q, W_K, W_V = (chapter.inputs(n) for n in ("X", "WQ", "WK", "WV"))
TOKENS = chapter.tokens()  # kedi, sütü, içti
PERM = np.array([2, 0, 1])  # slot s gets word PERM[s]: içti kedi sütü
IDENTITY = np.arange(3)
ORDER = " ".join(TOKENS[i] for i in PERM)
POSITIONS = 0.3 * chapter.value("T742-PE-d4")  # 0.3 x sinusoidal_encoding(3, 4), by slot

CASES: tuple[Case, ...] = (
    Case("eq_perm", "equivariance", "restored_outputs", (X, W_Q, W_K, W_V, PERM), mistakes.restored_outputs_variants),
    Case(
        "eq_pe_orig",
        "equivariance",
        "restored_outputs",
        (X, W_Q, W_K, W_V, IDENTITY),
        mistakes.restored_outputs_variants,
        {"positions": POSITIONS},
    ),
    Case(
        "eq_pe_perm",
        "equivariance",
        "restored_outputs",
        (X, W_Q, W_K, W_V, PERM),
        mistakes.restored_outputs_variants,
        {"positions": POSITIONS},
    ),
    Case(
        "eq_gap_plain", "equivariance", "permutation_gap", (X, W_Q, W_K, W_V, PERM), mistakes.permutation_gap_variants
    ),
    Case(
        "eq_gap_pe",
        "equivariance",
        "permutation_gap",
        (X, W_Q, W_K, W_V, PERM),
        mistakes.permutation_gap_variants,
        {"positions": POSITIONS},
    ),
    Case(
        "eq_gap_causal",
        "equivariance",
        "permutation_gap",
        (X, W_Q, W_K, W_V, PERM),
        mistakes.permutation_gap_variants,
        {"causal": True},
    ),
)
