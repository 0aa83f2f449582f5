"""Hidden checks of step 10, gradients: fresh random heads against torch autograd, run on the grader's trusted side."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import N_, _
from autograder.judge.checking import Lab, expect_close, with_inputs
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.gradients import attention_backward_variants, difference_answers, gradcheck_answers
from autograder.judge.oracle import Oracle
from autograder.sandbox.probes.gradients import smooth_gradient

pytestmark = pytest.mark.step("gradients")

GRAD_ATOL = 1e-5  # float32 rounding in dS = A * (dA - rowsum) stays far below this


def _head(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n_q, n_k, d_k, d_v = (int(v) for v in rng.integers(2, 7, size=4))  # two tokens and d_k >= 2: every term matters
    return (
        rng.normal(size=(n_q, d_k)),
        rng.normal(size=(n_k, d_k)),
        rng.normal(size=(n_k, d_v)),
        rng.normal(size=(n_q, d_v)),
    )


def _autograd(oracle: Oracle, Q: np.ndarray, K: np.ndarray, V: np.ndarray, dO: np.ndarray) -> tuple[np.ndarray, ...]:
    """dQ, dK, dV from torch autograd in float64, on the grader's trusted torch side (never the student's child)."""
    return tuple(np.asarray(part, dtype=float) for part in oracle.probe("oracle_head_gradients", Q, K, V, dO))


@pytest.mark.points(1.5)
def test_random_head_against_autograd(lab: Lab, ref, oracle: Oracle, rng: np.random.Generator) -> None:
    """attention_backward on a random head (n_q, n_k, d_k, d_v drawn apart) agrees with torch autograd"""
    Q, K, V, dO = _head(rng)
    got = lab.call(
        "attention_backward",
        Q,
        K,
        V,
        dO,
        text=with_inputs(
            "attention_backward(Q, K, V, dO)", f"Q {Q.shape}, K {K.shape}, V {V.shape}, dO {dO.shape}", random=True
        ),
    )
    wrong = Answers.live(partial(attention_backward_variants, ref), Q, K, V, dO)
    for index, (part, expected) in enumerate(zip(got.parts("dQ", "dK", "dV"), _autograd(oracle, Q, K, V, dO))):
        expect_close(part, expected, wrong=wrong.part(index), atol=GRAD_ATOL)


@pytest.mark.points(1)
def test_random_gradcheck(lab: Lab, oracle: Oracle, rng: np.random.Generator) -> None:
    """central_difference of L = sum(O * dO) on a random head agrees with torch autograd"""
    Q, K, V, dO = _head(rng)
    got = lab.probe(
        "head_gradcheck",
        Q,
        K,
        V,
        dO,
        text=_("{call} with the default h for {loss}, random {inputs}").format(
            call="central_difference(L, ·)",
            loss="L = sum(attention(Q, K, V)[0] * dO)",
            inputs=f"Q {Q.shape}, K {K.shape}, V {V.shape}",
        ),
    )
    for index, (part, expected) in enumerate(zip(got.parts("dQ", "dK", "dV"), _autograd(oracle, Q, K, V, dO))):
        expect_close(part, expected, wrong=gradcheck_answers(Q, K, V, dO, index), rtol=0, atol=2e-6)


@pytest.mark.points(0.5)
def test_random_smooth_function(lab: Lab, rng: np.random.Generator) -> None:
    """central_difference of a known smooth function at a random 3-d point with a random step"""
    shape = tuple(int(v) for v in rng.integers(2, 4, size=3))
    x, w, u = (rng.normal(size=shape) for _ in range(3))
    h = float(rng.uniform(5e-4, 2e-3))  # central error h^2/6 stays below 1e-6, a forward difference's h/2 does not
    got = lab.probe(
        "numerical_gradient",
        x,
        w,
        u,
        h,
        text=_("{call} with {function} and random x of shape {shape}").format(
            call=f"central_difference(f, x, h={h:.2g})",
            function="f(x) = sum(sin(x) * w) + (sum(x * u))**2 / 2",
            shape=shape,
        ),
    )
    grad, _x_after = got.parts("gradient", N_("x after the call"))
    expect_close(grad, smooth_gradient(x, w, u), wrong=difference_answers(x, w, u, h), atol=1e-5)
