"""The graders of step 4, positions: full marks, zero, each known mistake diagnosed, valid alternatives accepted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder.base import chapter, tasks
from autograder.base.reference import Reference
from autograder.judge import cases, diagnose
from autograder.judge.cases import positions as pcases
from autograder.judge.diagnose import positions as mistakes
from tests import kit
from tests.kit import Variant

STEP = "positions"
PE_LINES = (
    "    PE[:, 0::2] = np.sin(angles)  # dimensions 2i\n    PE[:, 1::2] = np.cos(angles[:, : "
    "d_model // 2])  # dimensions 2i + 1, the same angle\n"
)
ROPE_TAIL = (
    "    theta = base ** (-np.arange(0, d, 2) / d)  # (d/2,) one frequency per pair (2i, 2i+1)\n"
    "    angles = np.asarray(positions, dtype=float)[..., None] * theta  # (..., n, d/2)\n"
    "    cos, sin = np.cos(angles), np.sin(angles)\n"
    "    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) the two entries of each pair\n"
    "    rotated = np.stack([x_even * cos - x_odd * sin, x_even * sin + x_odd * cos], axis=-1)  # (..., n, d/2, 2)\n"
    "    return rotated.reshape(*rotated.shape[:-2], d)  # pairs back to interleaved (..., n, d)\n"
)
ROPE_HALVES = (
    "    theta = base ** (-np.arange(0, d, 2) / d)\n"
    "    angles = np.asarray(positions, dtype=float)[..., None] * theta\n"
    "    cos, sin = np.cos(angles), np.sin(angles)\n"
    "    x_even, x_odd = x[..., : d // 2], x[..., d // 2 :]\n"
    "    return np.concatenate([x_even * cos - x_odd * sin, x_even * sin + x_odd * cos], axis=-1)\n"
)
ROPE_TILED = (
    "    theta = np.tile(base ** (-np.arange(0, d, 2) / d), 2)\n"
    "    angles = np.asarray(positions, dtype=float)[..., None] * theta\n"
    "    turned = np.empty_like(x)\n"
    "    turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]\n"
    "    return x * np.cos(angles) + turned * np.sin(angles)\n"
)
BIAS = "    return np.where(j <= i, -slope * (i - j), -np.inf)\n"

VARIANTS = (
    Variant(
        "rope_one_based_positions",
        STEP,
        "positions",
        "    angles = np.asarray(positions, dtype=float)[..., None] * theta",
        "    angles = (np.asarray(positions, dtype=float)[..., None] + 1) * theta",
        "rope_position_offset",
    ),
    Variant(
        "pe_blocks",
        STEP,
        "positions",
        PE_LINES,
        "    PE[:, : len(two_i)] = np.sin(angles)\n    PE[:, len(two_i) :] = np.cos(angles[:, : d_model // 2])\n",
        "pe_blocks_not_interleaved",
    ),
    Variant(
        "pe_sin_cos_swapped",
        STEP,
        "positions",
        PE_LINES,
        "    PE[:, 0::2] = np.cos(angles)\n    PE[:, 1::2] = np.sin(angles[:, : d_model // 2])\n",
        "pe_sin_cos_swapped",
    ),
    Variant(
        "pe_exponent_i_over_d",
        STEP,
        "positions",
        "angles = p / base ** (two_i / d_model)",
        "angles = p / base ** (two_i / 2 / d_model)",
        "pe_exponent_i_over_d",
    ),
    Variant(
        "pe_exponent_doubled",
        STEP,
        "positions",
        "angles = p / base ** (two_i / d_model)",
        "angles = p / base ** (2 * two_i / d_model)",
        "pe_exponent_doubled",
    ),
    Variant(
        "pe_exponent_per_dimension",
        STEP,
        "positions",
        "np.cos(angles[:, : d_model // 2])",
        "np.cos(p / base ** ((two_i[: d_model // 2] + 1) / d_model))",
        "pe_exponent_per_dimension",
    ),
    Variant(
        "rope_wrong_direction",
        STEP,
        "positions",
        "[x_even * cos - x_odd * sin, x_even * sin + x_odd * cos]",
        "[x_even * cos + x_odd * sin, -x_even * sin + x_odd * cos]",
        "rope_wrong_direction",
    ),
    Variant(
        "rope_exponent_i_over_d",
        STEP,
        "positions",
        "theta = base ** (-np.arange(0, d, 2) / d)",
        "theta = base ** (-np.arange(d // 2) / d)",
        "rope_exponent_i_over_d",
    ),
    Variant("rope_half_pairs", STEP, "positions", ROPE_TAIL, ROPE_HALVES, "rope_half_pairs"),
    Variant("rope_tiled_frequencies", STEP, "positions", ROPE_TAIL, ROPE_TILED, "rope_pair_angles_differ"),
    Variant(
        "alibi_positive_bias",
        STEP,
        "positions",
        BIAS,
        "    return np.where(j <= i, slope * (i - j), -np.inf)\n",
        "alibi_positive_bias",
    ),
    Variant(
        "alibi_wrong_triangle",
        STEP,
        "positions",
        BIAS,
        "    return np.where(j >= i, -slope * (j - i), -np.inf)\n",
        "alibi_wrong_triangle",
    ),
    Variant(
        "alibi_no_causal_mask", STEP, "positions", BIAS, "    return -slope * np.abs(i - j)\n", "alibi_no_causal_mask"
    ),
    Variant(
        "alibi_slopes_fixed_ratio",
        STEP,
        "positions",
        "return 2.0 ** (-8.0 * h / n_heads)",
        "return 2.0 ** (-1.0 * h)",
        "alibi_slopes_fixed_ratio",
    ),
    Variant(
        "alibi_slopes_from_zero",
        STEP,
        "positions",
        "h = np.arange(1, n_heads + 1)",
        "h = np.arange(n_heads)",
        "alibi_slopes_from_zero",
    ),
    Variant(
        "pe_denominator_d_minus_2",
        "positions",
        "positions",
        "    angles = p / base ** (two_i / d_model)",
        "    angles = p / base ** (two_i / (d_model - 2))",
        "pe_exponent_denominator",
    ),
    Variant(
        "pe_from_one",
        "positions",
        "positions",
        "    p = np.arange(n_positions, dtype=float)[:, None]",
        "    p = np.arange(1, n_positions + 1, dtype=float)[:, None]",
        "pe_positions_from_one",
    ),
    Variant(
        "alibi_closest_power_of_two",
        "positions",
        "positions",
        "    h = np.arange(1, n_heads + 1)\n    return 2.0 ** (-8.0 * h / n_heads)\n",
        (
            "    if not float(np.log2(n_heads)).is_integer():\n"
            "        closest = 2 ** int(np.floor(np.log2(n_heads)))\n"
            "        extra = alibi_slopes(2 * closest)[0::2][: n_heads - closest]\n"
            "        return np.concatenate([alibi_slopes(closest), extra])\n    h = np.arange(1, n_heads + 1)\n"
            "    return 2.0 ** (-8.0 * h / n_heads)\n"
        ),
        "alibi_slopes_closest_power_of_two",
    ),
    Variant(
        "alibi_key_position",
        "positions",
        "positions",
        "    return np.where(j <= i, -slope * (i - j), -np.inf)\n",
        "    return np.where(j <= i, slope * j + 0.0 * i, -np.inf)\n",
        "alibi_bias_row_constant",
    ),
)

PE_BODY = (
    "    p = np.arange(n_positions, dtype=float)[:, None]  # (n_positions, 1)\n"
    "    two_i = np.arange(0, d_model, 2, dtype=float)  # (ceil(d_model / 2),) the even dimensions 2i\n"
    "    angles = p / base ** (two_i / d_model)  # (n_positions, ceil(d_model / 2))\n"
    "    PE = np.empty((n_positions, d_model))\n" + PE_LINES + "    return PE\n"
)
FLOAT32_PE = (
    "    p = np.arange(n_positions, dtype=np.float32)[:, None]\n"
    "    div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-np.log(base) / d_model))\n"
    "    PE = np.zeros((n_positions, d_model), dtype=np.float32)\n"
    "    PE[:, 0::2], PE[:, 1::2] = np.sin(p * div), np.cos(p * div)\n"
    "    return PE\n"
)
LOOP_PE = (
    "    import math\n"
    "    PE = [[0.0] * d_model for _ in range(n_positions)]\n"
    "    for p in range(n_positions):\n"
    "        for i in range(0, d_model, 2):\n"
    "            angle = p / math.pow(base, i / d_model)\n"
    "            PE[p][i], PE[p][i + 1] = math.sin(angle), math.cos(angle)\n"
    "    return np.array(PE)\n"
)
FLOAT32_ROPE = (
    "    theta = (base ** (-np.arange(0, d, 2) / d)).astype(np.float32)\n"
    "    angles = np.asarray(positions).astype(np.float32)[..., None] * theta\n"
    "    even, odd = x[..., 0::2].astype(np.float32), x[..., 1::2].astype(np.float32)\n"
    "    turned = np.stack([even * np.cos(angles) - odd * np.sin(angles), even * "
    "np.sin(angles) + odd * np.cos(angles)], axis=-1)\n"
    "    return turned.reshape(x.shape)\n"
)
COMPLEX_ROPE = (
    "    pairs = x[..., 0::2] + 1j * x[..., 1::2]\n"
    "    turn = np.exp(1j * np.outer(np.asarray(positions, dtype=float), 1.0 / base ** (np.arange(0, d, 2) / d)))\n"
    "    turned = pairs * turn\n"
    "    return np.stack([turned.real, turned.imag], axis=-1).reshape(x.shape)\n"
)
ALTERNATIVES = {  # each a set of replacements graded together (one grading run per set)
    "float32": ((PE_BODY, FLOAT32_PE), (ROPE_TAIL, FLOAT32_ROPE)),
    "loops_complex_tril": (
        (PE_BODY, LOOP_PE),
        (ROPE_TAIL, COMPLEX_ROPE),
        (BIAS, "    return np.tril(-slope * (i - j)) + np.triu(np.full((n, n), -np.inf), k=1)\n"),
        (
            "return 2.0 ** (-8.0 * h / n_heads)",
            "return np.array([2 ** (-8 * k / n_heads) for k in h], dtype=np.float32)",
        ),
    ),
}
BAD_RETURNS = {  # wrong kinds of result: failed checks with clear messages, never a grader error
    "nan_and_wrong_shapes": (
        (PE_BODY, "    return np.full((n_positions, d_model), np.nan)\n"),
        (ROPE_TAIL, "    return x[..., :-1]\n"),
        (BIAS, "    return np.full((n, n), np.nan)\n"),
        ("return 2.0 ** (-8.0 * h / n_heads)", "return np.zeros((n_heads, 2))"),
    ),
    "wrong_types": (
        (PE_BODY, "    return 'a table'\n"),
        (ROPE_TAIL, "    return None\n"),
        (BIAS, "    return [[0.0] * n] * n\n"),
        ("return 2.0 ** (-8.0 * h / n_heads)", "return 2.0 ** (-8.0 * h / n_heads) + 1j"),
    ),
    "transposed_and_integer": (
        (PE_BODY, "    return np.zeros((d_model, n_positions))\n"),
        (ROPE_TAIL, "    return np.rint(x).astype(int)\n"),
    ),
}


def build(name: str, replacements: tuple[tuple[str, str], ...], into: Path) -> Path:
    """The reference with several replacements in positions.py."""
    folder = Variant(name, STEP, "positions", *replacements[0], "").build(into)
    path = folder / "positions.py"
    text = path.read_text(encoding="utf-8")
    for old, new in replacements[1:]:
        assert old in text, f"{name}: {old!r} is not in positions.py any more"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path, public_only=True)


@pytest.mark.parametrize("name", list(ALTERNATIVES))
def test_valid_alternatives_score_full_marks(name: str, tmp_path: Path) -> None:
    result = kit.grade(build(name, ALTERNATIVES[name], tmp_path), steps=(STEP,)).step(STEP)
    assert result.earned == result.possible, [c.message for c in result.failed]


@pytest.mark.parametrize("name", list(BAD_RETURNS))
def test_bad_returns_fail_cleanly(name: str, tmp_path: Path) -> None:
    result = kit.grade(build(name, BAD_RETURNS[name], tmp_path), steps=(STEP,), public_only=True).step(STEP)
    assert result.earned < result.possible
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks if c.internal_error]
    assert all(c.message.startswith(tasks.step(STEP).title + ": ") for c in result.failed)


# -- the helpers of the cases ---------------------------------------------------


def test_dot_products_equal_the_closed_form() -> None:
    """PE_p . PE_(p+k) = sum_i cos(k w_i): the grader's summary reproduces the chapter's means."""
    ref = Reference(kit.SOLUTIONS, (STEP,))
    means = pcases.dot_products(ref.positions.sinusoidal_encoding(pcases.DOT_ROWS, pcases.DOT_WIDTH)).mean(axis=1)
    w = 10000.0 ** (-np.arange(0, pcases.DOT_WIDTH, 2) / pcases.DOT_WIDTH)
    closed = [np.cos(k * w).sum() for k in pcases.DOT_OFFSETS]
    np.testing.assert_allclose(means, closed, rtol=0, atol=1e-12)
    np.testing.assert_allclose(means, chapter.value("T743-PEdot-mean"), rtol=0, atol=1e-12)


def test_rope_pairs_put_the_query_after_the_key() -> None:
    """At start 0 the pair scores are the catalog's own seed-0 instance (query `shift` tokens after the key)."""
    ref = Reference(kit.SOLUTIONS, (STEP,))
    scores = pcases.pair_scores(ref.positions.rope(pcases.ROPE_PAIR_X, pcases.ROPE_PAIR_POSITIONS))
    instance = chapter.value("T745-rope")["example_seed0_scores"]
    np.testing.assert_allclose(scores[0], [instance[str(s)] for s in pcases.ROPE_SHIFTS], rtol=1e-12)
    assert np.ptp(scores, axis=0).max() < 1e-10


def test_summary_case_drops_wrong_answers_with_the_right_summary() -> None:
    """Interleaving does not change any dot product, so the blocks mistake is no diagnosis for the means."""
    assert "pe_blocks_not_interleaved" not in cases.wrong("pe_dots_64")
    assert "pe_exponent_i_over_d" in cases.wrong("pe_dots_64")
    named = {part for key in cases.wrong("rope_norms") for part in diagnose.parts(key)}
    assert "rope_pair_angles_differ" in named  # tiled angles change lengths; a rotation by other angles does not
    assert not {"rope_half_pairs", "rope_wrong_direction", "rope_exponent_i_over_d"} & set(cases.wrong("rope_norms"))


def test_every_mistake_of_the_step_has_a_variant() -> None:
    assert {v.mistake for v in VARIANTS} == set(mistakes.MISTAKES)
