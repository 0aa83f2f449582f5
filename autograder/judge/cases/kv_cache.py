"""Cases of the KV cache step: tokens run through the cache, and their causal full attention.

The answer a cache must reproduce is causal full attention, so the snapshot of
every case is ``scaling.attention`` with the causal mask on the projected
tokens (float64), and the wrong answers are those of
:mod:`autograder.judge.diagnose.kv_cache`. The graders send the tokens and weights
below to the student's torch code as tensors.
"""

from __future__ import annotations

import numpy as np

from autograder.judge.cases import Case, core
from autograder.judge.diagnose import kv_cache as kv_mistakes


def _head(
    rng: np.random.Generator, batch: tuple[int, ...], n: int, d_model: int, d_k: int, d_v: int
) -> dict[str, np.ndarray]:
    return {
        "X": rng.normal(size=(*batch, n, d_model)),
        "W_Q": rng.normal(size=(d_model, d_k)),
        "W_K": rng.normal(size=(d_model, d_k)),
        "W_V": rng.normal(size=(d_model, d_v)),
    }


def _rng_inputs() -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(20260707)  # public, fixed: hidden checks draw their own
    heads = {
        "one": _head(rng, (), 1, 4, 3, 2),
        "six": _head(rng, (), 6, 5, 3, 4),
        "batch": _head(rng, (2, 3), 5, 4, 2, 6),
        "float32": {k: v.astype(np.float32) for k, v in _head(rng, (), 7, 6, 4, 3).items()},
    }
    heads["worked"] = {"X": core.X, "W_Q": core.W_Q, "W_K": core.W_K, "W_V": core.W_V}
    decode = {
        "single": {
            "K_cached": rng.normal(size=(4, 3)),
            "V_cached": rng.normal(size=(4, 4)),
            "x_t": rng.normal(size=5),
            **_head(rng, (), 1, 5, 3, 4),
        },
        "batch": {
            "K_cached": rng.normal(size=(2, 3, 2)),
            "V_cached": rng.normal(size=(2, 3, 5)),
            "x_t": rng.normal(size=(2, 4)),
            **_head(rng, (), 1, 4, 2, 5),
        },
    }
    for inputs in decode.values():
        del inputs["X"]
    appends = {
        "keys": [rng.normal(size=(2, t, 3)) for t in (1, 2, 3)],
        "values": [rng.normal(size=(2, t, 5)) for t in (1, 2, 3)],
    }
    return {
        **{f"head_{k}": v for k, v in heads.items()},
        **{f"decode_{k}": v for k, v in decode.items()},
        "appends": appends,
    }


INPUTS = _rng_inputs()


def causal_qkv(head: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(Q, K, V, causal mask)`` of a head's tokens, in float64 (the exact answer for float32 inputs too)."""
    X, W_Q, W_K, W_V = (np.asarray(head[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V"))
    n = X.shape[-2]
    return X @ W_Q, X @ W_K, X @ W_V, np.tril(np.ones((n, n), dtype=bool))


def decode_qkv(inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q [..., 1, d_k], K, V)``: the new token's query, and the cached keys and values with its own appended last."""
    x_t = np.asarray(inputs["x_t"], dtype=float)[..., None, :]  # (..., 1, d_model)
    K = np.concatenate([inputs["K_cached"], x_t @ inputs["W_K"]], axis=-2)  # (..., n_cached + 1, d_k)
    V = np.concatenate([inputs["V_cached"], x_t @ inputs["W_V"]], axis=-2)  # (..., n_cached + 1, d_v)
    return x_t @ inputs["W_Q"], K, V


def _incremental_variants(ref, Q, K, V, mask):
    return kv_mistakes.incremental_variants(ref, Q, K, V)


def _decode_variants(ref, q, K, V):
    return kv_mistakes.decode_variants(ref, q, K, V)


HEAD_KEYS = ("X", "W_Q", "W_K", "W_V")
DECODE_KEYS = ("K_cached", "V_cached", "x_t", "W_Q", "W_K", "W_V")


def _head_arguments(*inputs: np.ndarray) -> tuple:
    """The case arguments ``(Q, K, V, causal mask)`` from ``incremental_attention``'s inputs."""
    return causal_qkv(dict(zip(HEAD_KEYS, inputs)))


def _decode_arguments(*inputs: np.ndarray) -> tuple:
    """The case arguments ``(q, K, V)`` from the probe ``decode_with_cache``'s inputs."""
    return decode_qkv(dict(zip(DECODE_KEYS, inputs)))


CASES: tuple[Case, ...] = (
    *(
        Case(
            f"incremental_{name}",
            "scaling",
            "attention",
            causal_qkv(INPUTS[f"head_{name}"]),
            _incremental_variants,
            inputs=tuple(INPUTS[f"head_{name}"][k] for k in HEAD_KEYS),
            from_inputs=_head_arguments,
        )
        for name in ("worked", "one", "six", "batch", "float32")
    ),
    *(
        Case(
            f"decode_{name}",
            "scaling",
            "attention",
            decode_qkv(INPUTS[f"decode_{name}"]),
            _decode_variants,
            inputs=tuple(INPUTS[f"decode_{name}"][k] for k in DECODE_KEYS),
            from_inputs=_decode_arguments,
        )
        for name in ("single", "batch")
    ),
)
