"""Hidden checks of step 4, positions: fresh sizes, bases and positions, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import N_, _
from autograder.judge.cases.positions import angle_scale, pair_lengths
from autograder.judge.checking import Lab, expect_close, expect_rounding, rounding_limit
from autograder.judge.checks.weights import WEIGHT_AXES
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.positions import (
    alibi_bias_variants,
    alibi_slopes_variants,
    rope_variants,
    sinusoidal_variants,
)

pytestmark = pytest.mark.step("positions")


@pytest.mark.points(1)
def test_random_tables(lab: Lab, ref, rng: np.random.Generator) -> None:
    """sinusoidal_encoding with a random size, even width and base, compared with the reference"""
    n, d, base = int(rng.integers(2, 40)), 2 * int(rng.integers(1, 17)), float(rng.uniform(50.0, 20000.0))
    got = lab.call("sinusoidal_encoding", n, d, base=base, text=f"sinusoidal_encoding({n}, {d}, base={base:.1f})")
    expect_close(
        got,
        ref.positions.sinusoidal_encoding(n, d, base),
        wrong=Answers.live(partial(sinusoidal_variants, ref), n, d, base=base),
    )


@pytest.mark.points(2)
def test_random_rope(lab: Lab, ref, rng: np.random.Generator) -> None:
    """rope on random batched vectors at random positions, and its offset-only scores far out, compared with the
    reference"""
    batch, n, d = int(rng.integers(1, 4)), int(rng.integers(2, 7)), 2 * int(rng.integers(1, 9))
    x, positions, base = rng.normal(size=(batch, n, d)), rng.integers(0, 50, size=n), float(rng.uniform(100.0, 20000.0))
    got = lab.call(
        "rope",
        x,
        positions,
        base=base,
        text=_("{call} with random x of shape {shape} and positions {positions}").format(
            call=f"rope(x, positions, base={base:.1f})", shape=x.shape, positions=positions.tolist()
        ),
    )
    expect_close(
        got, ref.positions.rope(x, positions, base), wrong=Answers.live(partial(rope_variants, ref), x, positions, base)
    )
    q, k, offset = rng.normal(size=d), rng.normal(size=d), int(rng.integers(0, 50))
    starts = np.sort(rng.integers(0, 3000, size=4))
    pairs = np.vstack([np.tile(q, (4, 1)), np.tile(k, (4, 1))])  # q at start + offset, k at start
    pair_positions = np.concatenate([starts + offset, starts])
    got = lab.call(
        "rope",
        pairs,
        pair_positions,
        text=_("{call} with a random q at {q_at} and k at {k_at} (d = {d}); raw scores q . k").format(
            call="rope(x, positions)", q_at=(starts + offset).tolist(), k_at=starts.tolist(), d=d
        ),
    )
    rotated = got.array(pairs.shape)
    scores = np.einsum("nd,nd->n", rotated[:4].astype(float), rotated[4:].astype(float))
    scale = angle_scale(pair_positions.max(), d, pair_sizes=pair_lengths(q, k))
    expect_rounding(
        got,
        float(np.ptp(scores)),
        N_("the same score at every start: a spread over the starts"),
        scale=scale,
        value=rotated,
        wrong=Answers.live(partial(rope_variants, ref), pairs, pair_positions),
    )
    expected = ref.positions.rope(pairs, pair_positions)
    expect_close(got.with_value(scores), np.einsum("nd,nd->n", expected[:4], expected[4:]), atol=rounding_limit(scale))


@pytest.mark.points(1)
def test_random_alibi(lab: Lab, ref, rng: np.random.Generator) -> None:
    """alibi_slopes for another power of two and alibi_bias with a random size and slope, compared with the reference"""
    n_heads = int(rng.choice([2, 4, 16, 32]))
    got = lab.call("alibi_slopes", n_heads, text=f"alibi_slopes({n_heads})")
    expect_close(
        got, ref.positions.alibi_slopes(n_heads), wrong=Answers.live(partial(alibi_slopes_variants, ref), n_heads)
    )
    n, slope = int(rng.integers(2, 10)), float(rng.uniform(0.01, 2.0))
    got = lab.call("alibi_bias", n, slope, text=f"alibi_bias({n}, {slope:.4f})")
    expect_close(
        got,
        ref.positions.alibi_bias(n, slope),
        wrong=Answers.live(partial(alibi_bias_variants, ref), n, slope),
        **WEIGHT_AXES,
    )
