"""Hidden checks of step 7, the KV cache: fresh chunks, heads and model sizes, compared with the reference."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import _, ngettext
from autograder.judge.checking import Lab, expect_that, with_inputs
from autograder.judge.checks.kv_cache import (
    AFTERWARDS,
    APPENDS,
    DECODE,
    expect_appends,
    expect_decoded,
    expect_incremental,
)
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.kv_cache import decode_variants, incremental_variants, kv_cache_bytes_variants
from autograder.judge.oracle import Oracle
from autograder.sandbox.protocol import AsTorch

pytestmark = pytest.mark.step("kv_cache")


def _causal(ref, X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray) -> tuple[np.ndarray, Answers]:
    """Causal full attention of the tokens ``X`` (the reference's numpy head), and the wrong answers (of the call
    ``incremental_attention(X, W_Q, W_K, W_V)``, its twin too)."""
    Q, K, V = ref.scaling.project(X, W_Q, W_K, W_V)

    def wrong(args: tuple, kwargs: dict) -> dict:
        return incremental_variants(ref, *ref.scaling.project(*(a.array for a in args)))

    call = tuple(AsTorch(a) for a in (X, W_Q, W_K, W_V))
    return ref.scaling.attention(Q, K, V, ref.mask.causal_mask(X.shape[-2]))[0], Answers.of_call(call, {}, wrong)


@pytest.mark.points(1)
def test_random_appends(lab: Lab, rng: np.random.Generator) -> None:
    """Random chunks appended to a KVCache: its length, keys and values after each append"""
    batch = tuple(int(b) for b in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    d_k, d_v = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    sizes = [int(t) for t in rng.integers(1, 5, size=int(rng.integers(2, 5)))]
    keys, values = (
        [rng.normal(size=(*batch, t, d_k)) for t in sizes],
        [rng.normal(size=(*batch, t, d_v)) for t in sizes],
    )
    text = _(APPENDS).format(
        sizes=", ".join(map(str, sizes)),
        shapes=_("batch axes {batch}").format(batch=batch) + f", d_k = {d_k}, d_v = {d_v}",
    )
    got = lab.probe("kv_cache_appends", [AsTorch(k) for k in keys], [AsTorch(v) for v in values], text=text)
    expect_appends(got, keys, values)


@pytest.mark.points(1.5)
def test_random_incremental(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random batched heads with d_v != d_k: token by token equals causal full attention (float64 in and out)"""
    batch = tuple(int(b) for b in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    n, d_model, d_k = (int(v) for v in rng.integers(2, 9, size=3))
    d_v = d_k + int(rng.integers(1, 4))
    X, W_Q, W_K, W_V = (
        rng.normal(size=(*batch, n, d_model)),
        rng.normal(size=(d_model, d_k)),
        rng.normal(size=(d_model, d_k)),
        rng.normal(size=(d_model, d_v)),
    )
    got = lab.call(
        "incremental_attention",
        AsTorch(X),
        AsTorch(W_Q),
        AsTorch(W_K),
        AsTorch(W_V),
        text=with_inputs(
            "incremental_attention(X, W_Q, W_K, W_V)", f"X {X.shape}, d_k = {d_k}, d_v = {d_v} (float64)", random=True
        ),
    )
    expect_incremental(got, *_causal(ref, X, W_Q, W_K, W_V), float64_inputs=True)


@pytest.mark.points(0.5)
def test_random_decode_step(lab: Lab, ref, rng: np.random.Generator) -> None:
    """decode_step on a random cache: the new token sees every cached token and itself"""
    n_cached, d_model, d_k, d_v = (int(v) for v in rng.integers(1, 7, size=4))
    batch = (int(rng.integers(1, 4)),)
    K_cached, V_cached, x_t = (
        rng.normal(size=(*batch, n_cached, d_k)),
        rng.normal(size=(*batch, n_cached, d_v)),
        rng.normal(size=(*batch, d_model)),
    )
    W_Q, W_K, W_V = rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    text = _(DECODE).format(
        x_t=_("random {inputs}").format(inputs=f"x_t {x_t.shape}"), keys=K_cached.shape, values=V_cached.shape
    )
    got = lab.probe("decode_with_cache", *(AsTorch(a) for a in (K_cached, V_cached, x_t, W_Q, W_K, W_V)), text=text)
    out_t = got.parts("out_t", *AFTERWARDS)[0]
    q = (x_t @ W_Q)[..., None, :]  # (batch, 1, d_k)
    K, V = (
        np.concatenate([K_cached, (x_t @ W_K)[..., None, :]], axis=-2),
        np.concatenate([V_cached, (x_t @ W_V)[..., None, :]], axis=-2),
    )

    def wrong(args: tuple, kwargs: dict) -> dict:
        K_cached, V_cached, x_t, W_Q, W_K, W_V = (a.array for a in args)
        keys = np.concatenate([K_cached, (x_t @ W_K)[..., None, :]], axis=-2)
        values = np.concatenate([V_cached, (x_t @ W_V)[..., None, :]], axis=-2)
        return decode_variants(ref, (x_t @ W_Q)[..., None, :], keys, values)

    call = tuple(AsTorch(a) for a in (K_cached, V_cached, x_t, W_Q, W_K, W_V))
    expect_decoded(out_t, ref.scaling.attention(q, K, V)[0], Answers.of_call(call, {}, wrong))


@pytest.mark.points(1)
def test_random_cache_bytes(lab: Lab, oracle: Oracle, rng: np.random.Generator) -> None:
    """kv_cache_bytes for random model sizes, precisions and batches, compared with the reference"""
    n_layers, n_kv_heads = int(rng.integers(1, 97)), int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
    d_head, n_tokens = int(rng.choice([64, 80, 96, 128, 256])), int(rng.integers(1, 300_000))
    bytes_per_value, batch = int(rng.choice([1, 2, 4])), int(rng.integers(1, 17))
    args = (n_layers, n_kv_heads, d_head, n_tokens)
    text = (
        f"kv_cache_bytes({n_layers}, {n_kv_heads}, {d_head}, {n_tokens}, "
        f"bytes_per_value={bytes_per_value}, batch={batch})"
    )
    got = lab.call("kv_cache_bytes", *args, bytes_per_value=bytes_per_value, batch=batch, text=text)
    expected = int(oracle.call("kv_cache", "kv_cache_bytes", *args, bytes_per_value=bytes_per_value, batch=batch))
    value = got.number()
    expect_that(
        got,
        abs(value - expected) <= 0.5,
        ngettext("{bytes} byte", "{bytes} bytes", expected).format(bytes=f"{expected:,}"),
        ngettext("{bytes} byte", "{bytes} bytes", round(value)).format(bytes=f"{value:,.0f}"),
        value=np.asarray(value),
        wrong=Answers.of_call(
            args,
            {"bytes_per_value": bytes_per_value, "batch": batch},
            lambda a, k: kv_cache_bytes_variants(
                int(oracle.call("kv_cache", "kv_cache_bytes", *a, **k)), n_kv_heads=a[1]
            ),
        ),
    )
