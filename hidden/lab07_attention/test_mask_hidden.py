"""Hidden checks of step 3, the causal mask: fresh sizes and heads, compared with the reference."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import _
from autograder.judge.checking import Lab, expect_close, with_inputs
from autograder.judge.checks.mask import expect_prefix_unchanged
from autograder.judge.checks.weights import WEIGHT_AXES, expect_head
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.mask import causal_mask_variants
from autograder.judge.diagnose.scaling import with_mask_variants

pytestmark = pytest.mark.step("mask")


@pytest.mark.points(1)
def test_random_sizes(lab: Lab, ref, rng: np.random.Generator) -> None:
    """causal_mask(n_q, n_k) for random n_q <= n_k, compared with the reference"""
    n_q = int(rng.integers(1, 8))
    n_k = n_q + int(rng.integers(1, 6))
    got = lab.call("causal_mask", n_q, n_k, text=f"causal_mask({n_q}, {n_k})")
    expect_close(got, ref.mask.causal_mask(n_q, n_k), wrong=Answers.live(causal_mask_variants, n_q, n_k), **WEIGHT_AXES)
    got = lab.call("causal_mask", 0, n_k, text=_("{call} (no new queries yet)").format(call=f"causal_mask(0, {n_k})"))
    expect_close(got, np.zeros((0, n_k), dtype=bool))


@pytest.mark.points(2)
def test_random_causal_heads(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random causal heads against a cache (n_k > n_q), compared with the reference"""
    n_q = int(rng.integers(2, 6))
    n_k, d_k, d_v = n_q + int(rng.integers(1, 5)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    Q, K, V = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))
    mask = ref.mask.causal_mask(n_q, n_k)
    got = lab.probe(
        "causal_attention",
        Q,
        K,
        V,
        text=with_inputs(
            f"attention(Q, K, V, causal_mask({n_q}, {n_k}))", f"Q {Q.shape}, K {K.shape}, V {V.shape}", random=True
        ),
    )
    wrong = Answers.of_call(
        (Q, K, V), {}, lambda a, k: with_mask_variants(ref, *a, ref.mask.causal_mask(len(a[0]), len(a[1])))
    )
    expect_head(got, ref.scaling.attention(Q, K, V, mask), wrong)


@pytest.mark.points(1)
def test_random_prefix_change(lab: Lab, ref, rng: np.random.Generator) -> None:
    """prefix_change on random tokens: 0 with the mask, as the reference says without it"""
    n, d_model, d_k = int(rng.integers(3, 7)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    X, x_next = rng.normal(size=(n, d_model)), rng.normal(size=d_model)
    W_Q, W_K, W_V = (rng.normal(size=(d_model, d_k)) for _ in range(3))
    inputs = f"X ({n}, {d_model})"
    got = expect_prefix_unchanged(
        lab, X, W_Q, W_K, W_V, x_next, text=lambda call: with_inputs(call, inputs, random=True)
    )
    expected = ref.mask.prefix_change(X, W_Q, W_K, W_V, x_next, causal=False)
    expect_close(got.with_value(np.asarray(got.number())), expected)
