"""The graders of step 5, permutation equivariance: full marks, zero, each known mistake diagnosed, valid
alternatives accepted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder.base import chapter
from autograder.base.reference import Reference
from autograder.grading.model import CheckResult, GradeReport
from autograder.judge import cases
from autograder.judge.cases import equivariance as ecases
from autograder.judge.diagnose import equivariance as mistakes
from tests import kit
from tests.kit import Variant

STEP = "equivariance"
TOKENS = "    tokens = X[perm] + slots  # slot s: word perm[s] plus slot s's position\n"
RESTORE = "    restored[perm] = out  # the output of slot s goes back to word perm[s]\n"
GAP_BODY = (
    "    original = np.asarray(restored_outputs(X, W_Q, W_K, W_V, np.arange(len(X)), causal, positions))"
    "  # (n, d_v)\n"
    "    permuted = np.asarray(restored_outputs(X, W_Q, W_K, W_V, perm, causal, positions))"
    "  # (n, d_v); a tensor is fine\n"
    "    return float(np.max(np.abs(permuted - original), initial=0.0))\n"
)

VARIANTS = (
    Variant(
        "positions_travel_with_word",
        STEP,
        STEP,
        TOKENS,
        "    tokens = (X + slots)[perm]\n",
        "positions_travel_with_word",
    ),
    Variant("positions_ignored", STEP, STEP, TOKENS, "    tokens = X[perm]\n", "positions_ignored"),
    Variant("rows_not_restored", STEP, STEP, RESTORE, "    restored[:] = out\n", "equivariance_rows_not_restored"),
    Variant("wrong_inverse", STEP, STEP, RESTORE, "    restored[:] = out[perm]\n", "equivariance_wrong_inverse"),
    Variant(
        "causal_ignored",
        STEP,
        STEP,
        "mask = causal_mask(len(tokens)) if causal else None",
        "mask = None",
        "equivariance_causal_ignored",
    ),
)

RESTORED_BODY = (
    "    X = np.asarray(X, dtype=float)\n"
    "    perm = np.asarray(perm, dtype=int)\n"
    "    slots = 0.0 if positions is None else np.asarray(positions, dtype=float)  # (n, d_model), by slot\n"
    + TOKENS
    + "    Q, K, V = project(tokens, W_Q, W_K, W_V)\n"
    "    mask = causal_mask(len(tokens)) if causal else None\n"
    "    out = np.asarray(attention(Q, K, V, mask)[0])  # (n, d_v), row s = slot s; a tensor is fine too\n"
    "    restored = np.empty_like(out)\n" + RESTORE + "    return restored\n"
)
# float32 throughout, with its own head; the gap then comes back as a numpy float32 scalar.
FLOAT32_RESTORED = """    order = np.asarray(perm)
    tokens = np.asarray(X, dtype=np.float32)[order]
    if positions is not None:
        tokens = tokens + np.asarray(positions, dtype=np.float32)
    Q, K, V = (tokens @ np.asarray(W, dtype=np.float32) for W in (W_Q, W_K, W_V))
    S = Q @ K.T / np.float32(np.sqrt(Q.shape[-1]))
    if causal:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, np.float32(-np.inf))
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    out = E / E.sum(axis=-1, keepdims=True) @ V
    return out[np.argsort(order)]
"""
ALTERNATIVES = (
    Variant("inverse_by_argsort", STEP, STEP, RESTORE, "    restored = out[np.argsort(perm)]\n", ""),
    Variant("float32", STEP, STEP, RESTORED_BODY, FLOAT32_RESTORED, ""),
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path, public_only=True)


def test_slot_mistake_is_named_by_both_position_checks(tmp_path: Path) -> None:
    """Positions that travel with the word: the tables and the gap (0 instead of 0.3289) both say so."""
    report = kit.grade(VARIANTS[0].build(tmp_path), steps=(STEP,), public_only=True)
    named = {c.name: c.mistake for c in report.step(STEP).failed}
    assert named == {
        "test_positions_stay_with_the_slot": "positions_travel_with_word",
        "test_gap_with_positions": "positions_travel_with_word",
    }


@pytest.mark.parametrize("variant", ALTERNATIVES, ids=lambda v: v.name)
def test_valid_alternative_scores_full_marks(variant: Variant, tmp_path: Path) -> None:
    """A float32 head is held to float32 rounding; its gap may come back as a numpy float32 scalar."""
    folder = variant.build(tmp_path)
    if variant.name == "float32":
        path = folder / "equivariance.py"
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace(
                "return float(np.max(np.abs(permuted - original), initial=0.0))",
                "return np.max(np.abs(permuted - original))",
            ),
            encoding="utf-8",
        )
    result = kit.grade(folder, steps=(STEP,)).step(STEP)
    assert result.earned == result.possible, [c.message for c in result.failed]


def test_gap_is_judged_by_the_rounding_achieved_not_the_dtype(tmp_path: Path) -> None:
    """A gap of float32 rounding (about 1e-7) passes with float32 and with float64 outputs (float32 inside, float64
    returned is common); a gap above float32 rounding fails either way."""
    float32 = Variant(
        "float32_outputs",
        STEP,
        STEP,
        RESTORE + "    return restored\n",
        RESTORE + "    return restored.astype(np.float32)\n",
        "",
    )
    for extra, passes in (("1e-7", True), ("1e-3", False)):
        noisy = GAP_BODY.replace("initial=0.0))", f"initial=0.0)) + {extra}")
        for variant in (float32, Variant("float64_outputs", STEP, STEP, GAP_BODY, GAP_BODY, "")):
            folder = variant.build(tmp_path / extra)
            path = folder / "equivariance.py"
            path.write_text(path.read_text(encoding="utf-8").replace(GAP_BODY, noisy), encoding="utf-8")
            check = gap_check(kit.grade(folder, steps=(STEP,), public_only=True))
            assert check.passed == passes, (variant.name, extra, check.message)
            assert passes or "rounding noise only" in check.message


def gap_check(report: GradeReport) -> CheckResult:
    """The result of the public check that the gap without positions or mask is rounding noise."""
    return next(c for c in report.step(STEP).checks if c.name == "test_gap_without_positions_is_rounding")


BAD_RETURNS = {
    "nan_outputs": (RESTORE, "    restored[perm] = np.nan\n"),
    "gap_as_string": (GAP_BODY, "    return 'small'\n"),
    "gap_as_array": (GAP_BODY, "    return np.abs(restored_outputs(X, W_Q, W_K, W_V, perm, causal, positions))\n"),
}


@pytest.mark.parametrize("bad", list(BAD_RETURNS))
def test_bad_returns_fail_cleanly(bad: str, tmp_path: Path) -> None:
    result = kit.grade(
        Variant(bad, STEP, STEP, *BAD_RETURNS[bad], "").build(tmp_path), steps=(STEP,), public_only=True
    ).step(STEP)
    assert result.earned < result.possible
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks if c.internal_error]


# -- the cases and mistakes --------------------------------------------------------


def test_positions_input_is_the_chapter_table() -> None:
    """The equivariance checks use 0.3 x the chapter's d = 4 table, which the reference's positions reproduce."""
    ref = Reference(kit.SOLUTIONS, ("positions",))
    np.testing.assert_allclose(ecases.POSITIONS, 0.3 * ref.positions.sinusoidal_encoding(3, 4), rtol=0, atol=1e-15)
    assert ecases.ORDER == "içti kedi sütü"


def test_slot_mistake_restores_equivariance() -> None:
    """The catalog's probe P-PE-slot: positions permuted with the words give a gap of rounding noise."""
    ref = Reference(kit.SOLUTIONS, ("softmax", "scaling", "mask", STEP))
    gaps = mistakes.permutation_gap_variants(
        ref, ecases.X, ecases.W_Q, ecases.W_K, ecases.W_V, ecases.PERM, positions=ecases.POSITIONS
    )
    assert gaps["positions_travel_with_word"] < 1e-12
    assert (
        abs(
            ref.equivariance.permutation_gap(
                ecases.X, ecases.W_Q, ecases.W_K, ecases.W_V, ecases.PERM, positions=ecases.POSITIONS
            )
            - chapter.value("T742-PE-maxdiff")
        )
        < 1e-12
    )


def test_wrong_answers_equal_to_the_right_one_are_left_out() -> None:
    """Without positions the slot mistake changes nothing, so it must not be offered as a diagnosis there."""
    assert "positions_travel_with_word" not in cases.wrong("eq_perm")
    assert "positions_travel_with_word" not in cases.wrong("eq_gap_plain")
    assert "positions_travel_with_word" in cases.wrong("eq_pe_perm")


def test_every_mistake_of_the_step_has_a_variant() -> None:
    assert {v.mistake for v in VARIANTS} == set(mistakes.MISTAKES)
