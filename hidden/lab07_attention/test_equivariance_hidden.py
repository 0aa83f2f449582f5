"""Hidden checks of step 5, permutation equivariance: random heads and orders, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import _
from autograder.judge.checking import Lab, expect_close, with_inputs
from autograder.judge.checks.equivariance import expect_gap, expect_no_gap
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.equivariance import permutation_gap_variants, restored_outputs_variants

pytestmark = pytest.mark.step("equivariance")


def _head(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    n, d_model, d_k, d_v = (
        int(rng.integers(3, 8)),
        int(rng.integers(2, 7)),
        int(rng.integers(2, 6)),
        int(rng.integers(2, 6)),
    )
    X = rng.normal(size=(n, d_model))
    perm = rng.permutation(n)
    if np.array_equal(perm, np.arange(n)):
        perm = perm[::-1].copy()  # a real reordering
    return X, rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v)), perm


@pytest.mark.points(1)
def test_random_head_is_equivariant(lab: Lab, ref, rng: np.random.Generator) -> None:
    """A random head and order without positions or mask: outputs restored as the reference's, gap of rounding"""
    X, W_Q, W_K, W_V, perm = _head(rng)
    where = _("random X {shape}, W_V {w_v} and perm {perm}").format(shape=X.shape, w_v=W_V.shape, perm=perm.tolist())
    got = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        perm,
        text=with_inputs("restored_outputs(X, W_Q, W_K, W_V, perm)", where),
    )
    outputs = expect_close(
        got,
        ref.equivariance.restored_outputs(X, W_Q, W_K, W_V, perm),
        wrong=Answers.live(partial(restored_outputs_variants, ref), X, W_Q, W_K, W_V, perm),
    )
    got = lab.call(
        "permutation_gap",
        X,
        W_Q,
        W_K,
        W_V,
        perm,
        text=with_inputs("permutation_gap(X, W_Q, W_K, W_V, perm)", where),
    )
    expect_no_gap(
        got,
        scale=float(np.abs(outputs).max()),
        wrong=Answers.live(partial(permutation_gap_variants, ref), X, W_Q, W_K, W_V, perm),
    )


@pytest.mark.points(1)
def test_random_positions_and_mask(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random positions by slot, then the causal mask: gaps and restored outputs as the reference's"""
    X, W_Q, W_K, W_V, perm = _head(rng)
    positions = rng.normal(scale=0.5, size=X.shape)
    where = _("random X {shape}, perm {perm} and random positions").format(shape=X.shape, perm=perm.tolist())
    got = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        perm,
        positions=positions,
        text=with_inputs("restored_outputs(X, W_Q, W_K, W_V, perm, positions=...)", where),
    )
    expect_close(
        got,
        ref.equivariance.restored_outputs(X, W_Q, W_K, W_V, perm, positions=positions),
        wrong=Answers.live(partial(restored_outputs_variants, ref), X, W_Q, W_K, W_V, perm, positions=positions),
    )
    got = lab.call(
        "permutation_gap",
        X,
        W_Q,
        W_K,
        W_V,
        perm,
        positions=positions,
        text=with_inputs("permutation_gap(X, W_Q, W_K, W_V, perm, positions=...)", where),
    )
    expect_gap(
        got,
        ref.equivariance.permutation_gap(X, W_Q, W_K, W_V, perm, positions=positions),
        wrong=Answers.live(partial(permutation_gap_variants, ref), X, W_Q, W_K, W_V, perm, positions=positions),
    )
    got = lab.call(
        "permutation_gap",
        X,
        W_Q,
        W_K,
        W_V,
        perm,
        causal=True,
        text=with_inputs(
            "permutation_gap(X, W_Q, W_K, W_V, perm, causal=True)",
            _("random X {shape} and perm {perm}").format(shape=X.shape, perm=perm.tolist()),
        ),
    )
    expect_gap(
        got,
        ref.equivariance.permutation_gap(X, W_Q, W_K, W_V, perm, causal=True),
        wrong=Answers.live(partial(permutation_gap_variants, ref), X, W_Q, W_K, W_V, perm, causal=True),
    )
