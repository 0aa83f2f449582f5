"""Wrong ways to test permutation equivariance, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake, search

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "positions_travel_with_word",
            "the position vectors move with the words; a position belongs to the slot: slot s gets "
            "positions[s] whichever word sits there",
        ),
        Mistake(
            "positions_ignored",
            "the positions are not added to the token vectors (add positions[s] to the word in slot s, "
            "before the projections)",
        ),
        Mistake(
            "equivariance_rows_not_restored",
            "the outputs on the permuted tokens are not put back in the original order before comparing",
        ),
        Mistake(
            "equivariance_wrong_inverse",
            "the rows are put back with perm instead of its inverse: the output of slot s belongs to word perm[s]",
        ),
        Mistake(
            "equivariance_causal_ignored", "the causal flag is ignored: with causal=True both runs use the causal mask"
        ),
    )
}


def _all_restored(ref, X, W_Q, W_K, W_V, perm, causal: bool, positions) -> dict[str, np.ndarray]:
    """Every mistake's restored outputs, most telling first (the first of equal answers names the mistake)."""
    X, perm = np.asarray(X, dtype=float), np.asarray(perm, dtype=int)
    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)  # (n, d_model), by slot
    restored = ref.equivariance.restored_outputs
    Q, K, V = ref.scaling.project(X[perm] + slots, W_Q, W_K, W_V)
    on_permuted = ref.scaling.attention(Q, K, V, ref.mask.causal_mask(len(X)) if causal else None)[
        0
    ]  # (n, d_v), row s = slot s
    return {
        "positions_travel_with_word": restored(X + slots, W_Q, W_K, W_V, perm, causal),
        "positions_ignored": restored(X, W_Q, W_K, W_V, perm, causal),
        "equivariance_rows_not_restored": on_permuted,
        "equivariance_wrong_inverse": on_permuted[perm],
        "equivariance_causal_ignored": restored(X, W_Q, W_K, W_V, perm, False, positions),
    }


def restored_outputs_variants(
    ref, X, W_Q, W_K, W_V, perm, causal: bool = False, positions=None
) -> dict[str, np.ndarray]:
    """What each mistake returns for ``restored_outputs(X, W_Q, W_K, W_V, perm, causal, positions)``."""
    right = ref.equivariance.restored_outputs(X, W_Q, W_K, W_V, perm, causal, positions)
    return search.distinct(right, _all_restored(ref, X, W_Q, W_K, W_V, perm, causal, positions))


def permutation_gap_variants(ref, X, W_Q, W_K, W_V, perm, causal: bool = False, positions=None) -> dict[str, float]:
    """What each mistake returns for ``permutation_gap(X, W_Q, W_K, W_V, perm, causal, positions)``."""
    permuted = _all_restored(ref, X, W_Q, W_K, W_V, perm, causal, positions)
    original = _all_restored(ref, X, W_Q, W_K, W_V, np.arange(len(X)), causal, positions)
    gaps = {mistake: float(np.max(np.abs(permuted[mistake] - original[mistake]), initial=0.0)) for mistake in permuted}
    return search.distinct(ref.equivariance.permutation_gap(X, W_Q, W_K, W_V, perm, causal, positions), gaps)
