"""Wrong ways to write the KV cache, and what they return."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.answers import Answers

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "attend_before_append",
            "the new token attends before its key and value are appended, so it cannot see itself; "
            "append first, then attend over the whole cache",
        ),
        Mistake(
            "cache_keeps_last_only",
            "the cache keeps only the newest tokens instead of adding them after the cached ones "
            "(concatenate along the token axis, -2)",
        ),
        Mistake(
            "cache_wrong_axis",
            "the cache joins the new keys and values along another axis than the token axis; concatenate along "
            "-2, the axis of the tokens",
        ),
        Mistake(
            "kv_bytes_extra_heads_factor",
            "the KV heads are counted twice (2 * layers * heads * hidden, with hidden = heads * d_head); per token "
            "and layer the cache holds 2 * n_kv_heads * d_head values",
        ),
        Mistake(
            "kv_bytes_bits",
            "the size is in bits, 8 times the bytes (or the bytes were divided by 8 once too often)",
        ),
        Mistake(
            "kv_missing_factor_two",
            "the factor 2 for K and V is missing: every token stores a key and a value vector per KV head and layer",
        ),
    )
}


def _attend(ref, Q: np.ndarray, K: np.ndarray, V: np.ndarray, allowed: np.ndarray, scale: bool = True) -> np.ndarray:
    """``softmax(Q K^T [/ sqrt(d_k)])`` over the ``allowed`` keys times ``V``; a row with no allowed key gives 0."""
    S = ref.scaling.scaled_scores(Q, K) if scale else ref.scaling.scores(Q, K)  # (..., n_q, n_k)
    with np.errstate(invalid="ignore"):
        weights = ref.softmax.softmax(np.where(allowed, S, -np.inf), axis=-1)
    return np.nan_to_num(weights) @ V  # (..., n_q, d_v)


def incremental_variants(ref, Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``incremental_attention`` on tokens whose projections are ``Q, K, V``.

    Attending before appending, the first token sees an empty cache: torch's
    softmax over no keys times no values gives a row of zeros, and code that
    treats an empty cache apart returns the token's own value.
    """
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n = Q.shape[-2]
    causal = np.tril(np.ones((n, n), dtype=bool))
    before = _attend(ref, Q, K, V, np.tril(causal, k=-1))  # (..., n, d_v), row 0 sees nothing
    first_self = before.copy()
    first_self[..., 0, :] = V[..., 0, :]  # an empty cache handled by returning the token's own value
    return {
        "attend_before_append": before,
        "attend_before_append+first_self": first_self,
        "cache_keeps_last_only": V.copy(),  # each token sees only its own key
        "missing_scale": _attend(ref, Q, K, V, causal, scale=False),
    }


def decode_variants(ref, q: np.ndarray, K: np.ndarray, V: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``decode_step``: ``q [..., 1, d_k]`` is the new token's query,
    the last rows of ``K [..., n, d_k]`` and ``V [..., n, d_v]`` are its key and value (outputs ``[..., 1, d_v]``)."""
    q, K, V = (np.asarray(a, dtype=float) for a in (q, K, V))
    everything = np.ones((1, K.shape[-2]), dtype=bool)
    return {
        "attend_before_append": _attend(ref, q, K[..., :-1, :], V[..., :-1, :], everything[:, :-1]),
        "cache_keeps_last_only": V[..., -1:, :].copy(),
        "missing_scale": _attend(ref, q, K, V, everything, scale=False),
    }


def bytes_answers(got_args: tuple, got_kwargs: dict, quantity: Callable[[Any], Any] | None = None) -> Answers:
    """The wrong answers of a quantity computed from ``kv_cache_bytes(*got_args, **got_kwargs)`` (``quantity`` maps
    the bytes to it; None: the bytes themselves), with their twin: the call on doubled sizes."""

    def compute(args: tuple, kwargs: dict) -> dict[str, np.ndarray]:
        n_layers, n_kv_heads, d_head, n_tokens, *rest = args
        per_value = rest[0] if rest else kwargs.get("bytes_per_value", 2)
        batch = rest[1] if len(rest) > 1 else kwargs.get("batch", 1)
        correct = 2 * n_layers * n_kv_heads * d_head * n_tokens * per_value * batch  # the contract's count
        return kv_cache_bytes_variants(correct, n_kv_heads=n_kv_heads)

    answers = Answers.of_call(got_args, got_kwargs, compute)
    return answers.derived(quantity) if quantity is not None else answers


def kv_cache_bytes_variants(
    correct: ArrayLike, inverse: bool = False, n_kv_heads: int | None = None
) -> dict[str, np.ndarray]:
    """What each mistake gives for ``kv_cache_bytes``, or a quantity computed from it, whose right value is ``correct``.

    ``inverse``: the quantity is inversely proportional to the bytes (tokens that fit in a budget);
    ``n_kv_heads``: the call's KV heads, for the mistake that counts them twice.
    """
    correct = np.asarray(correct, dtype=float)
    factors = {"kv_bytes_extra_heads_factor": float(n_kv_heads)} if n_kv_heads not in (None, 1) else {}
    factors.update({"kv_missing_factor_two": 0.5, "kv_bytes_bits": 8.0, "kv_bytes_bits+divided": 1 / 8})
    return {mistake: correct / f if inverse else correct * f for mistake, f in factors.items()}
