"""Wrong ways to write the sinusoidal encoding, RoPE and ALiBi, and what they return."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake, search
from autograder.judge.diagnose.general import MISTAKES as GENERAL
from autograder.judge.diagnose.search import edit, generate

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
        Mistake(
            "pe_exponent_denominator",
            "the exponent divides by d - 2 (a frequency step of log(base) / (d/2 - 1)); pair i uses "
            "base**(-2i/d), with d itself below the fraction",
        ),
        Mistake("pe_positions_from_one", "the positions start at 1; the first row of the table is position 0"),
        Mistake(
            "alibi_slopes_closest_power_of_two",
            "for a head count that is not a power of two the slopes follow the paper's code (the closest power of "
            "two, then every other slope of the next one); the lab's slopes are 2**(-8h/n_heads) for every count",
        ),
        Mistake(
            "alibi_bias_row_constant",
            "the bias grows with the key's position (slope * j) instead of the distance back from the query, "
            "-slope * (i - j); the softmax would not notice the difference of a constant per row, but the bias "
            "itself is -slope * (i - j)",
        ),
    )
}


def sinusoidal_model(
    n_positions: int,
    d_model: int,
    base: float = 10000.0,
    *,
    layout: str = "interleaved",
    numerator: float = 1.0,
    denominator: int = 0,
    own_index: bool = False,
    start: int = 0,
    swap: bool = False,
) -> np.ndarray:
    """The sinusoidal table with its choices as knobs (the defaults are the reference's).

    Dimension ``j`` of position ``p`` is ``sin`` (even ``j``) or ``cos`` (odd ``j``) of
    ``p / base**(numerator * k / (d + denominator))``, where ``k`` is the pair's even dimension ``2i``
    (or ``j`` itself with ``own_index``); ``layout`` puts the sines and cosines ``"interleaved"`` or in
    two ``"blocks"``; ``swap`` exchanges sin and cos; ``start`` is the first position.
    """
    p = np.arange(start, start + n_positions, dtype=float)[:, None]  # (n, 1)
    j = np.arange(d_model)  # (d,)
    k = j if own_index else j - j % 2
    angles = p / float(base) ** (numerator * k / (d_model + denominator))  # (n, d)
    even = (j % 2 == 0) != swap
    table = np.where(even, np.sin(angles), np.cos(angles))
    if layout == "blocks":
        table = np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)
    return table


SINUSOIDAL_EDITS = (
    edit(MISTAKES["pe_blocks_not_interleaved"], "layout", "blocks"),
    edit(MISTAKES["pe_exponent_i_over_d"], "numerator", 0.5),
    edit(MISTAKES["pe_exponent_doubled"], "numerator", 2.0),
    edit(MISTAKES["pe_exponent_denominator"], "denominator", -2),
    edit(MISTAKES["pe_exponent_per_dimension"], "own_index", True),
    edit(MISTAKES["pe_positions_from_one"], "start", 1),
    edit(MISTAKES["pe_sin_cos_swapped"], "swap", True),
)


def rope_model(
    x: np.ndarray,
    positions,
    base: float = 10000.0,
    *,
    pairs: str = "interleaved",
    angles: str = "pair",
    direction: float = 1.0,
    exponent: float = 1.0,
    offset: str = "given",
    tables: str = "float64",
) -> np.ndarray:
    """RoPE with its choices as knobs (the defaults are the reference's).

    ``pairs``: consecutive ``(2i, 2i+1)`` or the ``"halves"`` ``(i, i + d/2)``; ``angles``: each entry turned by
    its pair's angle, or by the table ``"repeat"``-ed (``w0 w0 w1 w1 ..``) or ``"tiled"`` (``w0 w1 .. w0 w1 ..``)
    over the entries; ``direction``: the sense of the turn; ``exponent``: the frequencies are
    ``base**(-exponent * 2i/d)``; ``offset``: the positions used (``"given"``, the token ``"index"``, ``"+1"``,
    ``"-1"``, ``"restart"`` at 0); ``tables``: the precision of the cos/sin tables.
    """
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd width")
    pos = np.asarray(positions, dtype=float)
    pos = {
        "given": pos,
        "index": np.arange(x.shape[-2], dtype=float) if x.ndim >= 2 else pos,
        "+1": pos + 1,
        "-1": pos - 1,
        "restart": pos - (pos.min() if pos.size else 0.0),
    }[offset]
    theta = float(base) ** (-exponent * np.arange(0, d, 2) / d)  # (d/2,)
    half = d // 2
    j = np.arange(d)
    if pairs == "halves":
        partner, first, pair_of = (j + half) % d, j < half, j % half
    else:
        partner, first, pair_of = j ^ 1, j % 2 == 0, j // 2
    column = {"pair": pair_of, "repeat": j // 2, "tiled": j % half}[angles]
    a = direction * pos[..., None] * theta[column]  # (..., n, d): the angle each entry turns by
    cos, sin = np.cos(a), np.sin(a)
    if tables != "float64":
        cos, sin = (_rounded(t, tables) for t in (cos, sin))
    sign = np.where(first, -1.0, 1.0)
    return x * cos + sign * x[..., partner] * sin


def _rounded(table: np.ndarray, precision: str) -> np.ndarray:
    """``table`` rounded to ``"float16"`` or ``"bfloat16"`` (by dropping the low 16 bits of float32, rounded)."""
    if precision == "float16":
        return table.astype(np.float16).astype(float)
    bits = table.astype(np.float32).view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return rounded.view(np.float32).astype(float)


ROPE_EDITS = (
    edit(MISTAKES["rope_half_pairs"], "pairs", "halves"),
    edit(MISTAKES["rope_pair_angles_differ"], "angles", "tiled", "tiled"),
    edit(MISTAKES["rope_pair_angles_differ"], "angles", "repeat", "repeated"),
    edit(MISTAKES["rope_wrong_direction"], "direction", -1.0),
    edit(MISTAKES["rope_exponent_i_over_d"], "exponent", 0.5),
    edit(MISTAKES["rope_position_offset"], "offset", "index", "index"),
    edit(MISTAKES["rope_position_offset"], "offset", "+1", "one_based"),
    edit(MISTAKES["rope_position_offset"], "offset", "-1", "minus_one"),
    edit(MISTAKES["rope_position_offset"], "offset", "restart", "restarted"),
    edit(GENERAL["half_precision"], "tables", "bfloat16", "bfloat16"),
    edit(GENERAL["half_precision"], "tables", "float16", "float16"),
)


def alibi_slopes_model(n_heads: int, *, first: int = 1, rule: str = "lab") -> np.ndarray:
    """The ALiBi slopes with their choices as knobs: heads counted from ``first``, and the paper code's ``rule``
    for a count that is not a power of two (``"closest"``)."""
    if rule == "closest" and not float(np.log2(n_heads)).is_integer():
        closest = 2 ** int(np.floor(np.log2(n_heads)))
        extra = alibi_slopes_model(2 * closest, first=first)[0::2][: n_heads - closest]
        return np.concatenate([alibi_slopes_model(closest, first=first), extra])
    h = np.arange(first, first + n_heads)
    return 2.0 ** (-8.0 * h / n_heads)


ALIBI_SLOPE_EDITS = (
    edit(MISTAKES["alibi_slopes_from_zero"], "first", 0),
    edit(MISTAKES["alibi_slopes_closest_power_of_two"], "rule", "closest"),
)


def alibi_bias_model(
    n: int, slope: float, *, sign: float = -1.0, distance: str = "back", future: str = "inf", transposed: bool = False
) -> np.ndarray:
    """One head's ALiBi bias with its choices as knobs (the defaults are the reference's).

    ``distance``: ``"back"`` is ``i - j``; ``"key"`` is ``-j`` (the key's position, off by a constant per
    row); ``future``: the keys after the query get ``"inf"`` (-inf) or the ``"distance"`` too.
    """
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    steps = {"back": i - j, "key": -j + 0 * i}[distance]
    bias = sign * slope * steps
    if future == "inf":
        bias = np.where(j <= i, bias, -np.inf)
    else:
        bias = np.where(j <= i, bias, sign * slope * np.abs(i - j))
    return bias.T if transposed else bias.astype(float)


ALIBI_BIAS_EDITS = (
    edit(MISTAKES["alibi_positive_bias"], "sign", 1.0),
    edit(MISTAKES["alibi_bias_row_constant"], "distance", "key"),
    edit(MISTAKES["alibi_no_causal_mask"], "future", "distance"),
    edit(MISTAKES["alibi_wrong_triangle"], "transposed", True),
)
EDITS = (*SINUSOIDAL_EDITS, *ROPE_EDITS, *ALIBI_SLOPE_EDITS, *ALIBI_BIAS_EDITS)


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
    known = search.distinct(PE, out)
    return {**known, **generate(sinusoidal_model, SINUSOIDAL_EDITS, (n_positions, d_model, base), known=known)}


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
    known = search.distinct(ref.positions.rope(x, positions, base), wrong)
    return {**known, **generate(rope_model, ROPE_EDITS, (x, positions, base), known=known)}


def alibi_slopes_variants(ref, n_heads: int) -> dict[str, np.ndarray]:
    """What each mistake returns for ``alibi_slopes(n_heads)``."""
    slopes = ref.positions.alibi_slopes(n_heads)
    wrong = {
        "alibi_slopes_fixed_ratio": 2.0 ** -np.arange(1, n_heads + 1),
        "alibi_slopes_from_zero": slopes * 2.0 ** (8.0 / n_heads),
    }
    known = search.distinct(slopes, wrong)
    return {**known, **generate(alibi_slopes_model, ALIBI_SLOPE_EDITS, (n_heads,), known=known)}


def alibi_bias_variants(ref, n: int, slope: float) -> dict[str, np.ndarray]:
    """What each mistake returns for ``alibi_bias(n, slope)``."""
    bias = ref.positions.alibi_bias(n, slope)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # (n, n) |i - j|
    wrong = {
        "alibi_positive_bias": np.where(np.isinf(bias), bias, -bias),
        "alibi_wrong_triangle": bias.T,
        "alibi_no_causal_mask": -slope * distance,
    }
    known = search.distinct(bias, wrong)
    return {**known, **generate(alibi_bias_model, ALIBI_BIAS_EDITS, (n, slope), known=known)}
