"""Wrong ways to write scaled dot-product attention, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.mask import MISTAKES as MASK_MISTAKES
from autograder.judge.diagnose.mask import masked_attention_variants
from autograder.judge.diagnose.search import edit, generate

MISTAKES = {
    m.id: m
    for m in (
        Mistake("missing_scale", "the scores are not divided by sqrt(d_k)"),
        Mistake("divide_by_dk", "the scores are divided by d_k instead of sqrt(d_k)"),
        Mistake("kq_transposed", "the scores are K Q^T instead of Q K^T (rows must belong to queries)"),
        Mistake("softmax_query_axis", "the softmax runs over the query axis instead of the key axis"),
        Mistake("projections_swapped", "the projections are mixed up (Q must use W_Q, K must use W_K, V must use W_V)"),
        Mistake("weights_transposed", "the weights are transposed before they multiply V"),
        Mistake("scale_multiplied", "the scores are multiplied by sqrt(d_k) instead of divided by it"),
        Mistake(
            "scale_by_value_width",
            "the scores are divided by sqrt(d_v), the width of the values, instead of sqrt(d_k), that of the keys",
        ),
        Mistake("softmax_batch_axis", "the softmax runs over the first (batch) axis instead of the key axis"),
    )
}


def _softmax(S: np.ndarray, axis: int, stable: bool) -> np.ndarray:
    top = np.max(S, axis=axis, keepdims=True) if stable and S.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(S - top)
        return e / np.sum(e, axis=axis, keepdims=True)


def model(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask=None,
    *,
    scale: str = "sqrt_dk",
    order: str = "qk",
    axis: str = "keys",
    stable: bool = True,
    fill: str = "inf",
    combine: str = "av",
) -> tuple[np.ndarray, np.ndarray]:
    """The reference head with its choices as knobs (the defaults are the reference's): ``(output, weights)``.

    ``scale``: what the scores are divided by; ``order``: ``Q K^T`` or ``K Q^T``; ``axis``: what the softmax
    normalises; ``stable``: the max shift; ``fill``: how the mask is applied; ``combine``: ``A V`` or ``A^T V``.
    """
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    d_k = Q.shape[-1]
    S = K @ np.swapaxes(Q, -1, -2) if order == "kq" else Q @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    divisor = {
        "sqrt_dk": np.sqrt(d_k),
        "none": 1.0,
        "dk": float(d_k),
        "times": 1 / np.sqrt(d_k),
        "sqrt_dv": np.sqrt(V.shape[-1]),
    }[scale]
    S = S / divisor
    allowed = None if mask is None else np.asarray(mask, dtype=bool)
    if allowed is not None and fill in ("inf", "zero"):
        S = np.where(allowed, S, -np.inf if fill == "inf" else 0.0)
    if allowed is not None and fill == "inverted":
        S = np.where(allowed, -np.inf, S)
    weights = _softmax(S, {"keys": -1, "queries": -2, "first": 0}[axis], stable)
    if allowed is not None and fill == "after":
        weights = weights * allowed
    if allowed is not None and fill == "after_inf":
        weights = np.where(allowed, weights, -np.inf)
    with np.errstate(invalid="ignore"):
        output = (np.swapaxes(weights, -1, -2) if combine == "av_t" else weights) @ V
    return output, weights


EDITS = (
    edit(MISTAKES["missing_scale"], "scale", "none"),
    edit(MISTAKES["divide_by_dk"], "scale", "dk"),
    edit(MISTAKES["scale_multiplied"], "scale", "times"),
    edit(MISTAKES["scale_by_value_width"], "scale", "sqrt_dv"),
    edit(MISTAKES["kq_transposed"], "order", "kq"),
    edit(MISTAKES["softmax_query_axis"], "axis", "queries"),
    edit(MISTAKES["softmax_batch_axis"], "axis", "first"),
    edit(MISTAKES["weights_transposed"], "combine", "av_t"),
    edit(MASK_MISTAKES["mask_fill_zero"], "fill", "zero"),
    edit(MASK_MISTAKES["mask_after_softmax"], "fill", "after"),
    edit(MASK_MISTAKES["mask_after_softmax"], "fill", "after_inf", "minus_inf"),
    edit(MASK_MISTAKES["mask_inverted"], "fill", "inverted"),
    edit(MASK_MISTAKES["mask_allows_everything"], "fill", "ignored"),
)


def generated_attention(Q, K, V, mask=None, known: dict | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The generated variants of ``attention(Q, K, V, mask)`` (compositions of :data:`EDITS`)."""
    return generate(model, EDITS, (Q, K, V, mask), known=known)


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
    return {**out, **generated_attention(Q, K, V, mask, known=out)}


def scaled_scores_variants(ref, Q: np.ndarray, K: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``scaled_scores(Q, K)``."""
    raw = ref.scaling.scores(Q, K)
    d_k = np.shape(Q)[-1]
    out = {"missing_scale": raw, "divide_by_dk": raw / d_k, "scale_multiplied": raw * np.sqrt(d_k)}
    if np.shape(Q)[-2] == np.shape(K)[-2]:
        out["kq_transposed"] = ref.scaling.scaled_scores(K, Q)
        out["kq_transposed&missing_scale"] = ref.scaling.scores(K, Q)
    return out


def scores_variants(ref, Q: np.ndarray, K: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``scores(Q, K)``."""
    return {"kq_transposed": ref.scaling.scores(K, Q)} if np.shape(Q)[-2] == np.shape(K)[-2] else {}


def project_variants(ref, X, W_Q, W_K, W_V) -> dict[str, tuple[np.ndarray, ...]]:
    """Projections with the weight matrices in the wrong places."""
    return {"projections_swapped": ref.scaling.project(X, W_K, W_Q, W_V)}


def with_mask_variants(ref, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask) -> dict[str, tuple[np.ndarray, ...]]:
    """The mask step's wrong answers for ``attention(Q, K, V, mask)`` and the generated ones composed with them."""
    known = masked_attention_variants(ref, Q, K, V, mask)
    return {**known, **generated_attention(Q, K, V, mask, known=known)}
