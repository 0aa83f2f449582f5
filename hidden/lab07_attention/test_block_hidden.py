"""Hidden checks of step 9, the block: fresh heads, norms and blocks, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import N_, _, ngettext
from autograder.judge.checking import Lab, expect_close, with_inputs
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.block import (
    block_variants,
    feed_forward_variants,
    layer_norm_variants,
    multi_head_variants,
    rms_norm_variants,
)

pytestmark = pytest.mark.step("block")
RANDOM_ROWS = N_("{call} with random rows of shape {shape}")


def _heads(rng: np.random.Generator, d_model: int, n_heads: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    d_k, d_v = int(rng.integers(2, 5)), int(rng.integers(1, 5))  # d_k >= 2: sqrt(d_k) must matter
    return [
        (rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)))
        for _ in range(n_heads)
    ]


def _small_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Rows of spread 0.005 to 2 (the first one 0.01), so eps and the variance convention both show.

    Each row's offset is at most a few times its spread: float32 keeps enough digits after centring.
    """
    scale = np.exp(rng.uniform(np.log(0.005), np.log(2.0), size=(*shape[:-1], 1)))
    scale.reshape(-1)[0] = 0.01
    return (rng.normal(size=shape) + 3 * rng.normal(size=(*shape[:-1], 1))) * scale


@pytest.mark.points(1)
def test_random_multi_head(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random multi-head attention (2 to 4 heads, batch axis), compared with the reference"""
    n_heads, n, d_model = int(rng.integers(2, 5)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
    X, heads = rng.normal(size=(2, n, d_model)), _heads(rng, d_model, n_heads)
    W_O = rng.normal(size=(n_heads * heads[0][2].shape[1], d_model))
    got = lab.call(
        "multi_head",
        X,
        heads,
        W_O,
        text=ngettext(
            "{call} with random X {shape}, {count} head of d_k = {d_k}, d_v = {d_v}, W_O {w_o}",
            "{call} with random X {shape}, {count} heads of d_k = {d_k}, d_v = {d_v}, W_O {w_o}",
            n_heads,
        ).format(
            call="multi_head(X, heads, W_O)",
            shape=X.shape,
            count=n_heads,
            d_k=heads[0][0].shape[1],
            d_v=heads[0][2].shape[1],
            w_o=W_O.shape,
        ),
    )
    expect_close(
        got, ref.block.multi_head(X, heads, W_O), wrong=Answers.live(partial(multi_head_variants, ref), X, heads, W_O)
    )


@pytest.mark.points(1)
def test_random_norms(lab: Lab, ref, rng: np.random.Generator) -> None:
    """LayerNorm and RMSNorm of random rows, default and given eps, compared with the reference"""
    x = _small_rows(rng, (int(rng.integers(1, 4)), int(rng.integers(2, 6)), int(rng.integers(3, 9))))
    eps = float(rng.choice([1e-3, 1e-2]))
    got = lab.call(
        "layer_norm",
        x,
        text=_("{call} with random rows of shape {shape}, some of small variance").format(
            call="layer_norm(x)", shape=x.shape
        ),
    )
    expect_close(got, ref.block.layer_norm(x), wrong=Answers.live(partial(layer_norm_variants, ref), x))
    got = lab.call(
        "layer_norm", x, eps=eps, text=_(RANDOM_ROWS).format(call=f"layer_norm(x, eps={eps:g})", shape=x.shape)
    )
    expect_close(got, ref.block.layer_norm(x, eps), wrong=Answers.live(partial(layer_norm_variants, ref), x, eps))
    got = lab.call(
        "rms_norm",
        x,
        text=_("{call} with random rows of shape {shape}, some small").format(call="rms_norm(x)", shape=x.shape),
    )
    expect_close(got, ref.block.rms_norm(x), wrong=Answers.live(partial(rms_norm_variants, ref), x))
    got = lab.call("rms_norm", x, eps=eps, text=_(RANDOM_ROWS).format(call=f"rms_norm(x, eps={eps:g})", shape=x.shape))
    expect_close(got, ref.block.rms_norm(x, eps), wrong=Answers.live(partial(rms_norm_variants, ref), x, eps))


@pytest.mark.points(1)
def test_random_feed_forward(lab: Lab, ref, rng: np.random.Generator) -> None:
    """A random feed-forward network with nonzero biases and d_out != d_model, compared with the reference"""
    n, d_model, d_ff, d_out = (int(v) for v in rng.integers(2, 9, size=4))
    x, W1, b1 = rng.normal(size=(2, n, d_model)), rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff)
    W2, b2 = rng.normal(size=(d_ff, d_out)), rng.normal(size=d_out)
    got = lab.call(
        "feed_forward",
        x,
        W1,
        b1,
        W2,
        b2,
        text=with_inputs(
            "feed_forward(x, W1, b1, W2, b2)", f"x {x.shape}, d_ff = {d_ff}, d_out = {d_out}", random=True
        ),
    )
    expect_close(
        got,
        ref.block.feed_forward(x, W1, b1, W2, b2),
        wrong=Answers.live(partial(feed_forward_variants, ref), x, W1, b1, W2, b2),
    )


@pytest.mark.points(1)
def test_random_block(lab: Lab, ref, rng: np.random.Generator) -> None:
    """A random block (several heads, nonzero biases), compared with the reference"""
    n_heads, n, d_model, d_ff = (
        int(rng.integers(1, 4)),
        int(rng.integers(2, 7)),
        int(rng.integers(2, 7)),
        int(rng.integers(4, 12)),
    )
    X, heads = rng.normal(size=(n, d_model)), _heads(rng, d_model, n_heads)
    W_O = rng.normal(size=(n_heads * heads[0][2].shape[1], d_model)) * 0.5
    W1, b1, W2, b2 = (
        rng.normal(size=(d_model, d_ff)),
        rng.normal(size=d_ff) * 0.5,
        rng.normal(size=(d_ff, d_model)),
        rng.normal(size=d_model) * 0.5,
    )
    args = (X, heads, W_O, W1, b1, W2, b2)
    got = lab.call(
        "block",
        *args,
        text=ngettext(
            "{call} with random X {shape}, {count} head, d_ff = {d_ff}",
            "{call} with random X {shape}, {count} heads, d_ff = {d_ff}",
            n_heads,
        ).format(call="block(X, heads, W_O, W1, b1, W2, b2)", shape=X.shape, count=n_heads, d_ff=d_ff),
    )
    expect_close(got, ref.block.block(*args), wrong=Answers.live(partial(block_variants, ref), *args))
