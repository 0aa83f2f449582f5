"""Hidden checks of step 2, attention: fresh random heads, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import _
from autograder.judge.checking import Lab, expect_close, with_inputs
from autograder.judge.checks.weights import WEIGHT_AXES, expect_head
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.mask import masked_attention_variants
from autograder.judge.diagnose.scaling import attention_variants, project_variants, scaled_scores_variants

pytestmark = pytest.mark.step("scaling")


def _head(rng: np.random.Generator, batch: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_q, n_k, d_k, d_v = (int(v) for v in rng.integers(1, 7, size=4))
    return rng.normal(size=(*batch, n_q, d_k)), rng.normal(size=(*batch, n_k, d_k)), rng.normal(size=(*batch, n_k, d_v))


@pytest.mark.points(1)
def test_random_projection(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random tokens and projections, compared with the reference"""
    n, d_model, d_k, d_v = (int(v) for v in rng.integers(2, 7, size=4))
    X, W_Q, W_K, W_V = (
        rng.normal(size=(n, d_model)),
        rng.normal(size=(d_model, d_k)),
        rng.normal(size=(d_model, d_k)),
        rng.normal(size=(d_model, d_v)),
    )
    got = lab.call(
        "project",
        X,
        W_Q,
        W_K,
        W_V,
        text=with_inputs("project(X, W_Q, W_K, W_V)", f"X ({n}, {d_model})", random=True),
    )
    wrong = Answers.live(partial(project_variants, ref), X, W_Q, W_K, W_V)
    for index, (part, expected) in enumerate(zip(got.parts("Q", "K", "V"), ref.scaling.project(X, W_Q, W_K, W_V))):
        expect_close(part, expected, wrong=wrong.part(index))


@pytest.mark.points(1)
def test_random_scaled_scores(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random Q and K, compared with the reference"""
    Q, K, _V = _head(rng, (2,))
    got = lab.call(
        "scaled_scores", Q, K, text=with_inputs("scaled_scores(Q, K)", f"Q {Q.shape}, K {K.shape}", random=True)
    )
    expect_close(
        got,
        ref.scaling.scaled_scores(Q, K),
        wrong=Answers.live(partial(scaled_scores_variants, ref), Q, K),
        **WEIGHT_AXES,
    )


@pytest.mark.points(2)
def test_random_batched_heads(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random batched heads with d_v != d_k, compared with the reference"""
    Q, K, V = _head(rng, tuple(int(b) for b in rng.integers(1, 4, size=2)))
    got = lab.call(
        "attention",
        Q,
        K,
        V,
        text=with_inputs("attention(Q, K, V)", f"Q {Q.shape}, K {K.shape}, V {V.shape}", random=True),
    )
    expect_head(got, ref.scaling.attention(Q, K, V), Answers.live(partial(attention_variants, ref), Q, K, V))


@pytest.mark.points(1)
def test_random_mask(lab: Lab, ref, rng: np.random.Generator) -> None:
    """A random mask (every row keeps a key), compared with the reference"""
    Q, K, V = _head(rng, (2,))
    mask = rng.random((Q.shape[-2], K.shape[-2])) < 0.6
    mask[np.arange(len(mask)), rng.integers(0, K.shape[-2], size=len(mask))] = True
    got = lab.call(
        "attention",
        Q,
        K,
        V,
        mask,
        text=_("{call} with random {inputs} and a random mask").format(
            call="attention(Q, K, V, mask)", inputs=f"Q {Q.shape}, K {K.shape}, V {V.shape}"
        ),
    )
    expected = ref.scaling.attention(Q, K, V, mask)
    wrong = Answers.live(
        lambda *a: {**attention_variants(ref, *a), **masked_attention_variants(ref, *a)}, Q, K, V, mask
    )
    expect_head(got, expected, wrong)
