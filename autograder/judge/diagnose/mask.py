"""Wrong ways to write the causal mask, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "mask_inverted",
            "the mask is inverted: True must mean the query may attend to that key (j <= i), not that it is blocked",
        ),
        Mistake("mask_off_by_one", "the mask is off by one: a token must attend to itself (j <= i, not j < i)"),
        Mistake(
            "mask_ignores_offset",
            "the mask ignores the offset n_k - n_q: with a cache the queries are the last n_q positions",
        ),
        Mistake(
            "mask_after_softmax",
            "the mask is applied after the softmax; masked scores must become -inf before it, so each "
            "row still sums to 1",
        ),
        Mistake("mask_fill_zero", "masked scores are set to 0 instead of -inf, so masked keys still get weight"),
        Mistake(
            "mask_allows_everything",
            "every key is allowed (the mask is all True, or not applied), so a query sees the tokens after it; the "
            "mask is True only where j <= i + (n_k - n_q)",
        ),
        Mistake(
            "mask_square",
            "the mask is square (n_k x n_k) when there are fewer queries than keys; decoding against a cache, the "
            "n_q queries are the last n_q positions, so causal_mask(n_q, n_k) has n_q rows: j <= i + (n_k - n_q)",
        ),
    )
}


def causal_mask_variants(n_q: int, n_k: int | None = None) -> dict[str, np.ndarray]:
    """What each mistake returns for ``causal_mask(n_q, n_k)``."""
    n_k = n_q if n_k is None else n_k
    offset = n_k - n_q
    ones = np.ones((n_q, n_k), dtype=bool)
    return {
        "mask_inverted": ~np.tril(ones, k=offset),
        "mask_off_by_one": np.tril(ones, k=offset - 1),
        "mask_ignores_offset": np.tril(ones, k=0),
        "mask_allows_everything": ones,
        **({"mask_square": np.tril(np.ones((n_k, n_k), dtype=bool))} if n_k != n_q else {}),
    }


def apply_mask_variants(scores: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``apply_mask(scores, mask)``."""
    scores, mask = np.asarray(scores, dtype=float), np.asarray(mask, dtype=bool)
    return {"mask_inverted": np.where(mask, -np.inf, scores), "mask_fill_zero": np.where(mask, scores, 0.0)}


def masked_attention_variants(ref, Q, K, V, mask) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What each mistake returns as ``(output, weights)`` for ``attention(Q, K, V, mask)``."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    mask = np.asarray(mask, dtype=bool)
    S = ref.scaling.scaled_scores(Q, K)
    after = ref.softmax.softmax(S) * mask
    after_inf = np.where(mask, ref.softmax.softmax(S), -np.inf)  # masked_fill(-inf) on the weights
    zero = ref.softmax.softmax(np.where(mask, S, 0.0))
    with np.errstate(invalid="ignore"):
        inverted = ref.softmax.softmax(np.where(mask, -np.inf, S))
    weights = {
        "mask_after_softmax": after,
        "mask_after_softmax+minus_inf": after_inf,
        "mask_fill_zero": zero,
        "mask_inverted": inverted,
        "mask_allows_everything": ref.softmax.softmax(S),
    }
    n_q, n_k = mask.shape[-2:]
    if mask.shape == (n_q, n_k) and np.array_equal(mask, np.tril(np.ones((n_q, n_k), bool), k=n_k - n_q)):
        with np.errstate(invalid="ignore"):
            weights["mask_off_by_one"] = ref.softmax.softmax(
                np.where(np.tril(np.ones((n_q, n_k), bool), k=n_k - n_q - 1), S, -np.inf)
            )
        if n_k != n_q:
            weights["mask_ignores_offset"] = ref.softmax.softmax(
                np.where(np.tril(np.ones((n_q, n_k), bool)), S, -np.inf)
            )
    with np.errstate(invalid="ignore"):
        return {key: (w @ V, w) for key, w in weights.items()}
