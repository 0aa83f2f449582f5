"""Public checks of step 5, permutation equivariance: the worked example reordered to içti kedi sütü."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _
from autograder.judge import cases
from autograder.judge.cases import equivariance as ecases
from autograder.judge.checking import Lab, expect_close, expect_that
from autograder.judge.checks.equivariance import FLOAT64_GAP, expect_gap, expect_no_gap, gap_of

pytestmark = pytest.mark.step("equivariance")

X, W_Q, W_K, W_V = ecases.X, ecases.W_Q, ecases.W_K, ecases.W_V
PERM, IDENTITY, POSITIONS = ecases.PERM, ecases.IDENTITY, ecases.POSITIONS
WORKED = N_("{call} with the worked example reordered to {order} (perm {perm})")
WORKED_WITH_PE = N_("{call} with the worked example reordered to {order} (perm {perm}) and {positions}")
WITH_PE = "positions = 0.3 * sinusoidal_encoding(3, 4)"


def _worked(call: str, positions: bool = False) -> str:
    """How a call on the reordered worked example is described, with the chapter's positions if ``positions``."""
    template = _(WORKED_WITH_PE if positions else WORKED)
    return template.format(call=call, order=ecases.ORDER, perm=PERM.tolist(), positions=WITH_PE)


@pytest.mark.points(1)
def test_permuted_outputs_restored(lab: Lab) -> None:
    """Without positions or mask, the outputs on içti kedi sütü, put back in order, are the chapter's A V"""
    got = lab.call("restored_outputs", X, W_Q, W_K, W_V, PERM, text=_worked("restored_outputs(X, W_Q, W_K, W_V, perm)"))
    restored = expect_close(got, chapter.value("T741-perm-table"), wrong=cases.wrong("eq_perm"))
    original = lab.call(
        "restored_outputs",
        X,
        W_Q,
        W_K,
        W_V,
        IDENTITY,
        text=_("{call} with perm [0, 1, 2] (the original order)").format(
            call="restored_outputs(X, W_Q, W_K, W_V, perm)"
        ),
    )
    pooled_original, pooled_permuted = original.array((3, 2)).mean(axis=0), restored.mean(axis=0)
    cosine = float(
        pooled_original @ pooled_permuted / (np.linalg.norm(pooled_original) * np.linalg.norm(pooled_permuted))
    )
    expect_that(
        original,
        abs(cosine - chapter.value("T741-cos1")) < 1e-6,
        _("mean-pooled outputs of both orders with cosine {value}").format(value="1.0000"),
        _("cosine {value}").format(value=f"{cosine:.6f}"),
    )


@pytest.mark.points(1)
def test_gap_without_positions_is_rounding(lab: Lab) -> None:
    """Without positions or mask, permutation_gap is rounding noise (worked example and the two-token head)"""
    got = lab.call("permutation_gap", X, W_Q, W_K, W_V, PERM, text=_worked("permutation_gap(X, W_Q, W_K, W_V, perm)"))
    printed = float(chapter.value("T741-perm-maxdiff"))
    expect_no_gap(got, exact=_(FLOAT64_GAP).format(value=f"{printed:.2e}"), wrong=cases.wrong("eq_gap_plain"))
    Q, K, V = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V"))
    got = lab.call(
        "permutation_gap",
        np.eye(2),
        Q,
        K,
        V,
        np.array([1, 0]),
        text=_("{call} with the two-token head {head} and its tokens swapped").format(
            call="permutation_gap(I, Q, K, V, perm)",
            head="Q = [[0, 3], [2, -1]], K = [[3, 0], [-1, 2]], V = [[3, -3], [1, 3]]",
        ),
    )
    expect_no_gap(got, exact=_(FLOAT64_GAP).format(value=f"{float(chapter.value('RU-perm')):.1e}"))


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
        text=_("{call} with the original order and {positions}").format(
            call="restored_outputs(X, W_Q, W_K, W_V, perm, positions=...)", positions=WITH_PE
        ),
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
        text=_worked("restored_outputs(X, W_Q, W_K, W_V, perm, positions=...)", positions=True),
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
        text=_worked("permutation_gap(X, W_Q, W_K, W_V, perm, positions=...)", positions=True),
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
        text=_worked("permutation_gap(X, W_Q, W_K, W_V, perm, causal=True)"),
    )
    gap = gap_of(got)
    expect_that(
        got,
        gap > 1e-3,
        _("a gap clearly above 0"),
        f"{gap:.6g}",
        value=np.asarray(gap),
        wrong=cases.wrong("eq_gap_causal"),
    )
    expect_gap(got, cases.expected("eq_gap_causal"), wrong=cases.wrong("eq_gap_causal"))
