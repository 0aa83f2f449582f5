"""Wrong ways to write scaled dot-product attention, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake("missing_scale", "the scores are not divided by sqrt(d_k)"),
        Mistake("divide_by_dk", "the scores are divided by d_k instead of sqrt(d_k)"),
        Mistake("kq_transposed", "the scores are K Q^T instead of Q K^T (rows must belong to queries)"),
        Mistake("softmax_query_axis", "the softmax runs over the query axis instead of the key axis"),
        Mistake("projections_swapped", "the projections are mixed up (Q must use W_Q, K must use W_K, V must use W_V)"),
        Mistake("weights_transposed", "the weights are transposed before they multiply V"),
    )
}


def _weights(ref, S: np.ndarray, mask, axis: int = -1) -> np.ndarray:
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    return ref.softmax.softmax(S, axis=axis)


def _unstable_weights(S: np.ndarray, mask) -> np.ndarray:
    """``exp(S) / sum(exp(S))`` without subtracting the row maximum: overflows to inf, then NaN."""
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(S)
        return e / e.sum(axis=-1, keepdims=True)


def attention_variants(
    ref, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What each mistake returns as ``(output, weights)`` for ``attention(Q, K, V, mask)``."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    d_k = Q.shape[-1]
    raw = ref.scaling.scores(Q, K)
    weights = {
        "missing_scale": _weights(ref, raw, mask),
        "divide_by_dk": _weights(ref, raw / d_k, mask),
        "softmax_query_axis": _weights(ref, raw / np.sqrt(d_k), mask, axis=-2),
    }
    if Q.shape[-2] == K.shape[-2]:
        weights["kq_transposed"] = _weights(ref, ref.scaling.scaled_scores(K, Q), mask)
    for key, S in (("softmax_no_max_shift", raw / np.sqrt(d_k)), ("softmax_no_max_shift+raw_scores", raw)):
        unstable = _unstable_weights(S, mask)
        if not np.isfinite(unstable).all():  # only large scores show it; small ones give the stable answer
            weights[key] = unstable
    with np.errstate(invalid="ignore"):
        out = {key: (w @ V, w) for key, w in weights.items()}
    if Q.shape[-2] == K.shape[-2] == V.shape[-2]:
        correct = ref.scaling.attention(Q, K, V, mask)[1]
        out["weights_transposed"] = (np.swapaxes(correct, -1, -2) @ V, correct)
    return out


def scaled_scores_variants(ref, Q: np.ndarray, K: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``scaled_scores(Q, K)``."""
    raw = ref.scaling.scores(Q, K)
    out = {"missing_scale": raw, "divide_by_dk": raw / np.shape(Q)[-1]}
    if np.shape(Q)[-2] == np.shape(K)[-2]:
        out["kq_transposed"] = ref.scaling.scaled_scores(K, Q)
    return out


def scores_variants(ref, Q: np.ndarray, K: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``scores(Q, K)``."""
    return {"kq_transposed": ref.scaling.scores(K, Q)} if np.shape(Q)[-2] == np.shape(K)[-2] else {}


def project_variants(ref, X, W_Q, W_K, W_V) -> dict[str, tuple[np.ndarray, ...]]:
    """Projections with the weight matrices in the wrong places."""
    return {"projections_swapped": ref.scaling.project(X, W_K, W_Q, W_V)}
