"""Public checks of step 5, permutation equivariance: the worked example reordered to içti kedi sütü."""

from __future__ import annotations

import numpy as np
import pytest

from autograder import cases, chapter
from autograder.cases import equivariance as ecases
from autograder.checking import Lab, expect_close, expect_that
from autograder.checks.equivariance import expect_gap, expect_no_gap, gap_of

pytestmark = pytest.mark.step("equivariance")

X, W_Q, W_K, W_V = ecases.X, ecases.W_Q, ecases.W_K, ecases.W_V
PERM, IDENTITY, POSITIONS = ecases.PERM, ecases.IDENTITY, ecases.POSITIONS
WORKED = f"the worked example reordered to {ecases.ORDER} (perm {PERM.tolist()})"
WITH_PE = "positions = 0.3 * sinusoidal_encoding(3, 4)"


@pytest.mark.points(1)
def test_permuted_outputs_restored(lab: Lab) -> None:
    """Without positions or mask, the outputs on içti kedi sütü, put back in order, are the chapter's A V"""
    got = lab.call(
        "restored_outputs", X, W_Q, W_K, W_V, PERM, text=f"restored_outputs(X, W_Q, W_K, W_V, perm) with {WORKED}"
    )
    restored = expect_close(got, chapter.value("T741-perm-table"), wrong=cases.wrong("eq_perm"))
    original = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        IDENTITY,
        text="restored_outputs(X, W_Q, W_K, W_V, perm) with perm [0, 1, 2] (the original order)",
    )
    pooled_original, pooled_permuted = original.array((3, 2)).mean(axis=0), restored.mean(axis=0)
    cosine = float(
        pooled_original @ pooled_permuted / (np.linalg.norm(pooled_original) * np.linalg.norm(pooled_permuted))
    )
    expect_that(
        original,
        abs(cosine - chapter.value("T741-cos1")) < 1e-6,
        "mean-pooled outputs of both orders with cosine 1.0000",
        f"cosine {cosine:.6f}",
    )


@pytest.mark.points(1)
def test_gap_without_positions_is_rounding(lab: Lab) -> None:
    """Without positions or mask, permutation_gap is rounding noise (worked example and the two-token head)"""
    got = lab.call(
        "permutation_gap", X, W_Q, W_K, W_V, PERM, text=f"permutation_gap(X, W_Q, W_K, W_V, perm) with {WORKED}"
    )
    printed = float(chapter.value("T741-perm-maxdiff"))
    expect_no_gap(got, exact=f"; the chapter's float64 gap is {printed:.2e}", wrong=cases.wrong("eq_gap_plain"))
    Q, K, V = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V"))
    got = lab.call(
        "permutation_gap",
        np.eye(2),
        Q,
        K,
        V,
        np.array([1, 0]),
        text="permutation_gap(I, Q, K, V, perm) with the two-token head Q = [[0, 3], [2, -1]], K = [[3, "
        "0], [-1, 2]], V = [[3, -3], [1, 3]] and its tokens swapped",
    )
    expect_no_gap(got, exact=f"; the chapter's float64 gap is {float(chapter.value('RU-perm')):.1e}")


@pytest.mark.points(2)
def test_positions_stay_with_the_slot(lab: Lab) -> None:
    """With 0.3 x sinusoidal positions by slot, both of the chapter's tables: original order and içti kedi sütü put
    back"""
    got = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        IDENTITY,
        positions=POSITIONS,
        text=f"restored_outputs(X, W_Q, W_K, W_V, perm, positions=...) with the original order and {WITH_PE}",
    )
    expect_close(got, chapter.value("T742-PE-orig"), wrong=cases.wrong("eq_pe_orig"))
    got = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        PERM,
        positions=POSITIONS,
        text=f"restored_outputs(X, W_Q, W_K, W_V, perm, positions=...) with {WORKED} and {WITH_PE}",
    )
    expect_close(got, chapter.value("T742-PE-perm"), wrong=cases.wrong("eq_pe_perm"))


@pytest.mark.points(1)
def test_gap_with_positions(lab: Lab) -> None:
    """With 0.3 x sinusoidal positions the gap is the chapter's 0.3289"""
    got = lab.call(
        "permutation_gap",
        X,
        W_Q,
        W_K,
        W_V,
        PERM,
        positions=POSITIONS,
        text=f"permutation_gap(X, W_Q, W_K, W_V, perm, positions=...) with {WORKED} and {WITH_PE}",
    )
    expect_gap(got, chapter.value("T742-PE-maxdiff"), wrong=cases.wrong("eq_gap_pe"))


@pytest.mark.points(1)
def test_causal_mask_breaks_equivariance(lab: Lab) -> None:
    """The causal mask alone (no positions) breaks equivariance: the gap is clearly above 0"""
    got = lab.call(
        "permutation_gap",
        X,
        W_Q,
        W_K,
        W_V,
        PERM,
        causal=True,
        text=f"permutation_gap(X, W_Q, W_K, W_V, perm, causal=True) with {WORKED}",
    )
    gap = gap_of(got)
    expect_that(
        got,
        gap > 1e-3,
        "a gap clearly above 0",
        f"{gap:.6g}",
        value=np.asarray(gap),
        wrong=cases.wrong("eq_gap_causal"),
    )
    expect_gap(got, cases.expected("eq_gap_causal"), wrong=cases.wrong("eq_gap_causal"))
