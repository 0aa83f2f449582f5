"""Wrong ways to write the sinusoidal encoding, RoPE and ALiBi, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "pe_blocks_not_interleaved",
            "the sines and cosines are in two blocks (all sines, then all cosines); they must "
            "interleave: sin in dimension 2i, cos of the same angle in 2i+1",
        ),
        Mistake(
            "pe_sin_cos_swapped", "sin and cos are swapped: dimension 2i holds the sine and dimension 2i+1 the cosine"
        ),
        Mistake(
            "pe_exponent_i_over_d",
            "the exponent is i/d instead of 2i/d: pair i (dimensions 2i and 2i+1) uses the frequency base**(-2i/d)",
        ),
        Mistake("pe_exponent_doubled", "the exponent is doubled: dimension 2i uses base**(2i/d), not base**(2*(2i)/d)"),
        Mistake(
            "pe_exponent_per_dimension",
            "each dimension gets its own frequency; the cosine in dimension 2i+1 must use the same "
            "angle as the sine in 2i (exponent 2i/d, not (2i+1)/d)",
        ),
        Mistake(
            "rope_wrong_direction",
            "the pairs turn the wrong way: (x, y) at angle a becomes (x cos a - y sin a, x sin a + y cos a)",
        ),
        Mistake(
            "rope_exponent_i_over_d",
            "the exponent is i/d instead of 2i/d: pair i is turned by positions * base**(-2i/d)",
        ),
        Mistake(
            "rope_half_pairs", "the pairs are the two halves (i, i + d/2); the lab rotates consecutive pairs (2i, 2i+1)"
        ),
        Mistake(
            "rope_pair_angles_differ",
            "the two entries of a pair are turned by different angles (frequencies tiled instead of "
            "repeated), so the result is not a rotation",
        ),
        Mistake(
            "rope_position_offset",
            "the tokens are turned by the angles of other positions (their index in x, or the positions shifted by "
            "one); use the positions you are given: position p turns pair i by p * base**(-2i/d)",
        ),
        Mistake(
            "alibi_positive_bias",
            "the bias has the wrong sign: a key j <= i gets -slope * (i - j), a penalty that grows with the distance",
        ),
        Mistake(
            "alibi_wrong_triangle",
            "the bias is in the wrong triangle: keys j <= i get -slope * (i - j) and keys above the diagonal get -inf",
        ),
        Mistake("alibi_no_causal_mask", "the keys after the query (j > i) must get -inf, not a distance penalty"),
        Mistake(
            "alibi_slopes_fixed_ratio",
            "the slopes are 2**-h for every head count; they are 2**(-8h/n_heads), h = 1 .. n_heads",
        ),
        Mistake(
            "alibi_slopes_from_zero",
            "the heads are counted from h = 0; the slopes are 2**(-8h/n_heads) for h = 1 .. n_heads",
        ),
    )
}


def _distinct(right: np.ndarray, wrong: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The wrong answers that differ from the right one and from every earlier wrong one (the first of equals is
    kept)."""
    kept: dict = {}
    for mistake, value in wrong.items():
        if all(
            np.shape(value) != np.shape(other) or not np.allclose(value, other, rtol=1e-9, atol=1e-12)
            for other in (right, *kept.values())
        ):
            kept[mistake] = value
    return kept


def sinusoidal_variants(ref, n_positions: int, d_model: int, base: float = 10000.0) -> dict[str, np.ndarray]:
    """What each mistake returns for ``sinusoidal_encoding(n_positions, d_model, base)``."""
    PE = ref.positions.sinusoidal_encoding(n_positions, d_model, base)
    p = np.arange(n_positions, dtype=float)[:, None]  # (n_positions, 1)
    per_dimension = PE.copy()
    per_dimension[:, 1::2] = np.cos(p / base ** (np.arange(1, d_model, 2) / d_model))
    out = {
        "pe_blocks_not_interleaved": np.concatenate([PE[:, 0::2], PE[:, 1::2]], axis=1),
        "pe_exponent_i_over_d": ref.positions.sinusoidal_encoding(n_positions, d_model, base**0.5),
        "pe_exponent_doubled": ref.positions.sinusoidal_encoding(n_positions, d_model, base**2),
        "pe_exponent_per_dimension": per_dimension,
    }
    if d_model % 2 == 0:
        out["pe_sin_cos_swapped"] = PE.reshape(n_positions, d_model // 2, 2)[..., ::-1].reshape(n_positions, d_model)
    return _distinct(PE, out)


def _rope_tiled(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Consecutive pairs turned with the frequency list tiled (w_0 .. w_{d/2-1}, w_0 ..) over the d entries."""
    d = x.shape[-1]
    theta = np.tile(base ** (-np.arange(0, d, 2) / d), 2)  # (d,)
    angles = positions[..., None] * theta  # (..., n, d)
    turned = np.empty_like(x)
    turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return x * np.cos(angles) + turned * np.sin(angles)


def rope_variants(ref, x: np.ndarray, positions, base: float = 10000.0) -> dict[str, np.ndarray]:
    """What each mistake returns for ``rope(x, positions, base)`` (``d`` even)."""
    x, positions = np.asarray(x, dtype=float), np.asarray(positions, dtype=float)
    d = x.shape[-1]
    halves = np.ravel(np.stack([np.arange(d // 2), np.arange(d // 2, d)], axis=1))  # (d,) 0, d/2, 1, d/2+1, ...
    half_pairs = np.empty_like(x)
    half_pairs[..., halves] = ref.positions.rope(x[..., halves], positions, base)
    wrong = {
        "rope_wrong_direction": ref.positions.rope(x, -positions, base),
        "rope_exponent_i_over_d": ref.positions.rope(x, positions, base**0.5),
        "rope_half_pairs": half_pairs,
        "rope_pair_angles_differ": _rope_tiled(x, positions, base),
        "rope_position_offset+index": ref.positions.rope(x, np.arange(x.shape[-2]), base) if x.ndim >= 2 else x,
        "rope_position_offset+one_based": ref.positions.rope(x, positions + 1, base),
        "rope_position_offset+minus_one": ref.positions.rope(x, positions - 1, base),
        "rope_position_offset+restarted": ref.positions.rope(
            x, positions - (positions.min() if positions.size else 0), base
        ),
    }
    return _distinct(ref.positions.rope(x, positions, base), wrong)


def alibi_slopes_variants(ref, n_heads: int) -> dict[str, np.ndarray]:
    """What each mistake returns for ``alibi_slopes(n_heads)``."""
    slopes = ref.positions.alibi_slopes(n_heads)
    wrong = {
        "alibi_slopes_fixed_ratio": 2.0 ** -np.arange(1, n_heads + 1),
        "alibi_slopes_from_zero": slopes * 2.0 ** (8.0 / n_heads),
    }
    return _distinct(slopes, wrong)


def alibi_bias_variants(ref, n: int, slope: float) -> dict[str, np.ndarray]:
    """What each mistake returns for ``alibi_bias(n, slope)``."""
    bias = ref.positions.alibi_bias(n, slope)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # (n, n) |i - j|
    wrong = {
        "alibi_positive_bias": np.where(np.isinf(bias), bias, -bias),
        "alibi_wrong_triangle": bias.T,
        "alibi_no_causal_mask": -slope * distance,
    }
    return _distinct(bias, wrong)
