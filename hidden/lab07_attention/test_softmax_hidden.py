"""Hidden checks of step 1, softmax: fresh random inputs, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import N_, _
from autograder.judge.checking import Lab, expect_close
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.softmax import softmax_variants

pytestmark = pytest.mark.step("softmax")
RANDOM_X = N_("{call} with random x of shape {shape}")


@pytest.mark.points(1)
def test_random_matrices(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random score matrices of random shape, compared with the reference"""
    shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
    x = rng.normal(scale=rng.uniform(0.5, 8.0), size=shape)
    got = lab.call("softmax", x, text=_(RANDOM_X).format(call="softmax(x)", shape=shape))
    expect_close(got, ref.softmax.softmax(x), wrong=Answers.live(partial(softmax_variants, ref), x))


@pytest.mark.points(1)
def test_random_axis(lab: Lab, ref, rng: np.random.Generator) -> None:
    """A random axis of a 3-d array, compared with the reference"""
    x = rng.normal(scale=3.0, size=tuple(rng.integers(2, 6, size=3)))
    axis = int(rng.integers(-3, 3))
    got = lab.call("softmax", x, axis, text=_(RANDOM_X).format(call=f"softmax(x, axis={axis})", shape=x.shape))
    expect_close(got, ref.softmax.softmax(x, axis=axis), wrong=Answers.live(partial(softmax_variants, ref), x, axis))


@pytest.mark.points(1)
def test_random_large_and_masked(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Large random scores with some -inf entries, compared with the reference"""
    x = rng.normal(scale=50.0, size=(4, 6)) + rng.uniform(500, 5000)
    x[rng.random(x.shape) < 0.3] = -np.inf
    x[:, int(rng.integers(0, 6))] = rng.uniform(500, 5000)  # every row keeps a finite entry
    got = lab.call(
        "softmax",
        x,
        text=_("{call} with random large scores around {value} and some -inf").format(
            call="softmax(x)", value=f"{np.nanmax(x[np.isfinite(x)]):.0f}"
        ),
    )
    expect_close(got, ref.softmax.softmax(x), wrong=Answers.live(partial(softmax_variants, ref), x))
