"""How a wrong array relates to the expected one: the grader's reasoning when no known mistake matches.

For every failed array check the grader (never student code) looks for a simple
relation between what came back and what was expected: a constant factor (and
which constant: ``1/sqrt(d_k)``, ``n``, ``-1`` ...), a transpose, the entries of
an axis in another order (shifted by one, reversed, halves swapped), right on
the first row or batch entry only, a constant added per row, normalised over
the other axis, NaN or inf where the expected is finite, or only the rounding of
float32 (or half precision). :func:`relate` returns the first that holds as a
:class:`Relation`, whose sentence is marked for the catalogs. A relation names no
mistake: it says how the numbers differ, and only a cause the grader proved is
named (:mod:`autograder.judge.diagnose.trace.explain`).

Everything here is vectorised NumPy on the check's own (small) arrays and runs
only when a check has failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from autograder.i18n import N_, _, ngettext

RTOL, ATOL = 1e-4, 1e-6  # what "equal" means between two entries here (the checks' own tolerance)
EPS32 = float(np.finfo(np.float32).eps)
FLOAT32_ULPS = 64  # rounding of a few dozen float32 operations
HALF_PRECISION = "half_precision"  # the mistake of a computation seen running in half precision
HALF_ENTRY = 2.0**-6  # half precision's rounding after a few operations, relative to each entry
HALF_FLOOR = 2.0**-12  # and near 0, relative to the array's largest entry

FLOAT32 = N_(
    "it differs only by rounding (at most {size}), the size float32 arithmetic leaves on values of size {scale}"
)
HALF = N_(
    "it is off by up to {size} in relative terms, about the rounding of half precision (bfloat16 keeps 8 bits, "
    "float16 11)"
)
TIMES = N_("it is the expected array times {constant}")
TIMES_NUMBER = N_("it is the expected value times {constant}")
PLUS = N_("it is the expected array plus {constant}")
PER_ROW = N_("it differs from the expected array by a constant in each row (row {row} is off by {value})")
PER_COLUMN = N_("it differs from the expected array by a constant in each column")
TRANSPOSED = N_("it is the expected array transposed (rows and columns swapped)")
PERMUTED = N_("it has the expected {axis} in another order: {order}")
ROWS_REORDERED = N_("each row holds the expected values, in another order")
FIRST_ONLY = N_("it is right in the first {part} only")
LEADING_ONLY = N_("it is right for the first entry of axis {axis} (a batch or head axis) only")
OTHER_AXIS = N_("its {wrong} sum to 1 where its {right} should: it is normalised over the other axis")
ROW_FACTORS = N_("each row is the expected row times its own factor (the rows are normalised by something else)")
ZEROS = N_("it is all zeros")
# how an order is worded (PERMUTED's {order})
REVERSED = N_("reversed")
SHIFTED_ON = N_("shifted by {k}: entry i holds the expected entry i + {k}")
SHIFTED_BACK = N_("shifted by {k}: entry i holds the expected entry i - {k}")
HALVES_SWAPPED = N_("the two halves swapped")
PAIRS_SWAPPED = N_("the two entries of every pair swapped")
DEINTERLEAVED = N_("even entries first, then odd ones (pairs split into two halves)")
INTERLEAVED = N_("the two halves interleaved (entry 2i from the first half, 2i+1 from the second)")
OTHER_ORDER = N_("[{order}]")
# axis names (PERMUTED's {axis}, FIRST_ONLY's {part}, OTHER_AXIS's {wrong} and {right})
ROWS, COLUMNS, ROW, COLUMN = N_("rows"), N_("columns"), N_("row"), N_("column")
ENTRIES = N_("entries")
AXIS = N_("entries along axis {axis}")
# shapes
SHAPE_TRANSPOSED = N_("its shape {got} is the expected {expected} transposed")
SHAPE_SQUEEZED = N_("its shape {got} lacks the expected axis {axis} of length 1")
SHAPE_EXTRA_AXIS = N_("its shape {got} has an extra axis of length 1 beside the expected {expected}")
SHAPE_JOINED = N_(
    "its shape {got} has the expected number of entries, {factor} times more along axis {longer} and {factor} "
    "times fewer along axis {shorter}: the parts were joined along the wrong axis"
)
SHAPE_RESHAPED = N_("it has the expected number of entries in another shape ({got} for {expected})")


@dataclass(frozen=True)
class Relation:
    """A relation between a wrong array and the expected one: its kind and its sentence (in the active language).

    ``mistake`` is kept for callers that set one; the grader never names a mistake from a relation alone.
    """

    kind: str
    text: str
    mistake: str | None = None

    def sentence(self) -> str:
        """The relation in words, e.g. 'it is the expected array times 1/sqrt(d_k) = 0.7071'."""
        return self.text


def relation(kind: str, template: str, mistake: str | None = None, **values: object) -> Relation:
    """A relation worded now, in the active language, from a template marked with ``N_``."""
    return Relation(kind, _(template).format(**values), mistake)


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Entry-wise equality to the checks' tolerance, infinities of the same sign and NaN matching."""
    with np.errstate(invalid="ignore"):
        near = np.abs(a - b) <= ATOL + RTOL * np.abs(b)
    return near | (a == b) | (np.isnan(a) & np.isnan(b))


def _allclose(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all(_close(a, b)))


def _where(index: tuple) -> str:
    return ", ".join(str(int(i)) for i in index)


def constants(context: Mapping[str, float]) -> list[tuple[str, float]]:
    """Named constants a factor may be, from the call's context (``d_k``, ``n``, ...) and a few plain ones."""
    named: list[tuple[str, float]] = [("-1", -1.0), ("2", 2.0), ("1/2", 0.5), ("-2", -2.0)]
    for name, value in context.items():
        value = float(value)
        if not np.isfinite(value) or value in (0.0, 1.0, -1.0):
            continue
        named += [(name, value), (f"1/{name}", 1 / value)]
        if value > 0:
            named += [(f"sqrt({name})", np.sqrt(value)), (f"1/sqrt({name})", 1 / np.sqrt(value))]
    return named


def name_constant(c: float, context: Mapping[str, float], *, exact: bool = False) -> str | None:
    """``c`` written as a named constant (``"1/sqrt(d_k) = 0.7071"``), or as a number unless ``exact``."""
    for name, value in constants(context):
        if abs(c - value) <= 1e-6 * max(abs(value), 1e-300) + 1e-12:
            return name if name in ("-1", "2", "1/2", "-2") else f"{name} = {c:.4g}"
    return None if exact else f"{c:.4g}"


def relate(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float] | None = None) -> Relation | None:
    """The first relation that holds between ``got`` and ``expected`` (numeric arrays), or None."""
    context = dict(context or {})
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return shape_relation(got.shape, expected.shape)
    if got.size == 0:
        return None
    with np.errstate(all="ignore"):
        for finder in (
            _non_finite,
            _infinities,
            _zeros,
            _float32,
            _times,
            _plus,
            _transposed,
            _permuted,
            _per_row,
            _first_only,
            _other_axis,
            _row_factors,
            _rows_reordered,
            _half_precision,
        ):
            found = finder(got, expected, context)
            if found is not None:
                return found
    return None


def _non_finite(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    bad = np.isfinite(expected) & ~np.isfinite(got)
    if not bad.any():
        return None
    first = np.unravel_index(int(np.argmax(bad)), bad.shape) if got.ndim else ()
    count = int(bad.sum())
    text = ngettext(
        "it has {count} NaN or inf entry where the expected values are finite (at [{where}])",
        "it has {count} NaN or inf entries where the expected values are finite (the first at [{where}])",
        count,
    )
    return Relation("non_finite", text.format(count=count, where=_where(first)))


def _infinities(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    """-inf (masked) entries in one and not the other, the finite entries otherwise equal or not."""
    finite_for_inf = np.isneginf(expected) & np.isfinite(got)
    inf_for_finite = np.isfinite(expected) & np.isneginf(got)
    if finite_for_inf.any() and not inf_for_finite.any():
        count = int(finite_for_inf.sum())
        text = ngettext(
            "it has a finite value at {count} entry where -inf is expected",
            "it has finite values at {count} entries where -inf is expected",
            count,
        )
        return Relation("finite_for_inf", text.format(count=count))
    if inf_for_finite.any() and not finite_for_inf.any():
        count = int(inf_for_finite.sum())
        text = ngettext(
            "it has -inf at {count} entry where a finite value is expected",
            "it has -inf at {count} entries where finite values are expected",
            count,
        )
        return Relation("inf_for_finite", text.format(count=count))
    return None


def _zeros(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    return relation("zeros", ZEROS) if np.all(got == 0) and np.any(expected != 0) else None


def _scale(expected: np.ndarray, context: Mapping[str, float]) -> float:
    finite = expected[np.isfinite(expected)]
    largest = float(np.max(np.abs(finite))) if finite.size else 0.0
    return max(largest, float(context.get("scale", 0.0)), 1.0)


def _float32(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    finite = np.isfinite(expected)
    if not np.array_equal(finite, np.isfinite(got)) or not np.array_equal(got[~finite], expected[~finite]):
        return None
    scale = _scale(expected, context)
    size = float(np.max(np.abs(got[finite] - expected[finite]), initial=0.0))
    if size <= FLOAT32_ULPS * EPS32 * scale:
        return relation("float32", FLOAT32, size=f"{size:.2g}", scale=f"{scale:.3g}")
    return None


def _half_precision(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    """Errors the size of bfloat16 or float16 rounding on most entries, and no larger *on every entry*.

    Rounding to 8 or 11 bits moves each entry by a fraction of its own size (a few times 2**-8 at most, after a few
    operations), and a tiny absolute amount near 0. An error of 1e-2 of the array's largest entry on an entry of
    size 1e-2 (an unscaled backward, an inverted scale) is no rounding, whatever its size against the whole array.
    Only a relation: the grader names half precision only where it saw the student's computation run in it.
    """
    finite = np.isfinite(expected) & np.isfinite(got)
    if finite.sum() < 4:
        return None
    scale = _scale(expected[finite], {})
    error = np.abs(got[finite] - expected[finite])
    gap = error / scale
    largest = float(gap.max())
    touched = float(np.mean(gap > 2.0**-16))
    per_entry = bool(np.all(error <= HALF_ENTRY * np.abs(expected[finite]) + HALF_FLOOR * scale))
    if 2.0**-13 <= largest <= 2.0**-6 and touched >= 0.3 and per_entry:
        return relation("half_precision", HALF, size=f"{largest:.1e}")
    return None


def _finite_pairs(got: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    both = np.isfinite(got) & np.isfinite(expected)
    if not np.array_equal(np.isfinite(expected), both) or not both.any():
        return None
    return got[both], expected[both]


def _times(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    pairs = _finite_pairs(got, expected)
    if pairs is None:
        return None
    g, e = pairs
    norm = float(e @ e)
    if norm == 0.0:
        return None
    c = float(g @ e) / norm
    if abs(c - 1.0) < 1e-6 or not _allclose(g, c * e):
        return None
    if got.ndim == 0 or got.size == 1:  # one number is always some multiple of another: only a named one says much
        name = name_constant(c, context, exact=True)
        return relation("times", TIMES_NUMBER, constant=name) if name else None
    return relation("times", TIMES, constant=name_constant(c, context))


def _plus(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    pairs = _finite_pairs(got, expected)
    if pairs is None or got.size < 2:
        return None
    g, e = pairs
    shift = float(np.median(g - e))
    if shift == 0.0 or not _allclose(g, e + shift):
        return None
    return relation("plus", PLUS, constant=name_constant(shift, context))


def _transposed(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    if got.ndim < 2 or got.shape[-1] != got.shape[-2] or got.shape[-1] < 2:
        return None
    flipped = np.swapaxes(expected, -1, -2)
    return relation("transposed", TRANSPOSED) if _allclose(got, flipped) else None


def axis_words(axis: int, ndim: int) -> tuple[str, str]:
    """How axis ``axis`` (non-negative) is named: plural and singular (rows / row, columns / column ...)."""
    if ndim >= 2 and axis == ndim - 2:
        return _(ROWS), _(ROW)
    if ndim >= 2 and axis == ndim - 1:
        return _(COLUMNS), _(COLUMN)
    if ndim == 1:
        return _(ENTRIES), _(ENTRIES)
    words = _(AXIS).format(axis=axis)
    return words, words


def describe_order(p: np.ndarray) -> str:
    """A permutation ``p`` (entry i holds expected entry p[i]) in words."""
    n = len(p)
    i = np.arange(n)
    if np.array_equal(p, i[::-1]):
        return _(REVERSED)
    if n % 2 == 0 and np.array_equal(p, (i + n // 2) % n):
        return _(HALVES_SWAPPED)
    for k in (1, -1, 2, -2):
        if np.array_equal(p, (i + k) % n):
            return _(SHIFTED_ON if k > 0 else SHIFTED_BACK).format(k=abs(k))
    if n % 2 == 0 and np.array_equal(p, i ^ 1):
        return _(PAIRS_SWAPPED)
    if n % 2 == 0 and np.array_equal(p, np.concatenate([i[0::2], i[1::2]])):
        return _(DEINTERLEAVED)
    if n % 2 == 0 and np.array_equal(p, np.argsort(np.concatenate([i[0::2], i[1::2]]))):
        return _(INTERLEAVED)
    return _(OTHER_ORDER).format(order=", ".join(str(int(v)) for v in p))


def matching_order(got: np.ndarray, expected: np.ndarray, axis: int) -> np.ndarray | None:
    """The permutation ``p`` with ``got`` = ``expected`` taken at ``p`` along ``axis``, if there is one."""
    n = got.shape[axis]
    if n < 2:
        return None
    g = np.moveaxis(got, axis, 0).reshape(n, -1)
    e = np.moveaxis(expected, axis, 0).reshape(n, -1)
    same = np.all(_close(g[:, None, :], e[None, :, :]), axis=-1)  # (n, n): got slice i equals expected slice j
    if not same.any(axis=1).all():
        return None
    p = np.argmax(same, axis=1)
    if len(set(p.tolist())) != n or np.array_equal(p, np.arange(n)):
        return None
    return p


def _permuted(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    for axis in reversed(range(got.ndim)):
        p = matching_order(got, expected, axis)
        if p is not None:
            return relation("permuted", PERMUTED, axis=axis_words(axis, got.ndim)[0], order=describe_order(p))
    return None


def _first_only(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    """Right on index 0 of one axis and wrong elsewhere: the first row, column, or batch or head entry."""
    if got.ndim == 0:
        return None
    candidates = [got.ndim - 2, got.ndim - 1, *range(got.ndim - 2)] if got.ndim >= 2 else [0]
    for axis in candidates:
        if got.shape[axis] < 2:
            continue
        g, e = np.moveaxis(got, axis, 0), np.moveaxis(expected, axis, 0)
        if _allclose(g[0], e[0]) and not _allclose(g[1:], e[1:]):
            if got.ndim >= 3 and axis < got.ndim - 2:
                return relation("leading_only", LEADING_ONLY, axis=axis)
            return relation("first_only", FIRST_ONLY, part=axis_words(axis, got.ndim)[1])
    return None


def _per_row(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    """A constant offset per row (or per column), on the entries that are finite in both."""
    if got.ndim < 2 or not np.array_equal(np.isfinite(got), np.isfinite(expected)):
        return None
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isfinite(expected), got - expected, np.nan)
    for axis, template in ((-1, PER_ROW), (-2, PER_COLUMN)):
        if got.shape[axis] < 2:
            continue
        offset = np.nanmedian(gap, axis=axis, keepdims=True)
        spread = np.nanmax(np.abs(gap - offset), axis=axis, keepdims=True)
        tolerance = ATOL + RTOL * np.nanmax(np.abs(np.where(np.isfinite(expected), expected, np.nan)))
        flat = offset.ravel()
        if np.all(np.nan_to_num(spread) <= tolerance) and np.nanmax(np.abs(flat)) > tolerance and np.ptp(flat) > 0:
            row = int(np.nanargmax(np.abs(flat)))
            return relation("per_row" if axis == -1 else "per_column", template, row=row, value=f"{flat[row]:.4g}")
    return None


def _sums_to_one(array: np.ndarray, axis: int) -> bool:
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(np.nansum(np.where(np.isfinite(array), array, 0.0), axis=axis) - 1) < 1e-6))


def _other_axis(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    if got.ndim < 2:
        return None
    for right, wrong in ((-1, -2), (-2, -1)):
        if _sums_to_one(expected, right) and _sums_to_one(got, wrong) and not _sums_to_one(got, right):
            names = {-1: _(ROWS), -2: _(COLUMNS)}  # a row sums over axis -1
            return relation("other_axis", OTHER_AXIS, wrong=names[wrong], right=names[right])
    return None


def _row_factors(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    pairs = _finite_pairs(got, expected)
    if pairs is None or got.ndim < 2 or got.shape[-1] < 2:
        return None
    e2 = np.where(np.isfinite(expected), expected, 0.0)
    g2 = np.where(np.isfinite(got), got, 0.0)
    norms = np.sum(e2 * e2, axis=-1, keepdims=True)
    if np.any(norms == 0):
        return None
    factors = np.sum(g2 * e2, axis=-1, keepdims=True) / norms
    if np.ptp(factors) < 1e-6 or not _allclose(g2, factors * e2):
        return None
    return relation("row_factors", ROW_FACTORS)


def _rows_reordered(got: np.ndarray, expected: np.ndarray, context: Mapping[str, float]) -> Relation | None:
    if got.ndim < 1 or got.shape[-1] < 2:
        return None
    if _allclose(np.sort(got, axis=-1), np.sort(expected, axis=-1)):
        return relation("rows_reordered", ROWS_REORDERED)
    return None


def shape_relation(got: tuple[int, ...], expected: tuple[int, ...]) -> Relation | None:
    """How a wrong shape relates to the expected one, if simply."""
    words = {"got": str(tuple(got)), "expected": str(tuple(expected))}
    if len(got) == len(expected) >= 2 and tuple(got) == tuple(expected)[::-1]:
        return relation("shape_transposed", SHAPE_TRANSPOSED, **words)
    if len(got) == len(expected) - 1:
        for axis in range(len(expected)):
            if expected[axis] == 1 and tuple(expected[:axis]) + tuple(expected[axis + 1 :]) == tuple(got):
                return relation("shape_squeezed", SHAPE_SQUEEZED, got=words["got"], axis=axis)
    if len(got) == len(expected) + 1 and tuple(d for d in got if d != 1) == tuple(d for d in expected if d != 1):
        return relation("shape_extra_axis", SHAPE_EXTRA_AXIS, **words)
    if int(np.prod(got)) == int(np.prod(expected)) and len(got) == len(expected):
        ratios = [(g / e if e else 0.0) for g, e in zip(got, expected)]
        longer = [a for a, r in enumerate(ratios) if r > 1]
        shorter = [a for a, r in enumerate(ratios) if 0 < r < 1]
        whole = len(longer) == 1 and float(ratios[longer[0]]).is_integer()
        if whole and len(shorter) == 1 and abs(ratios[longer[0]] * ratios[shorter[0]] - 1) < 1e-9:
            factor = ratios[longer[0]]
            return relation(
                "shape_joined",
                SHAPE_JOINED,
                got=words["got"],
                factor=f"{factor:g}",
                longer=longer[0] - len(got),
                shorter=shorter[0] - len(got),
            )
    if int(np.prod(got)) == int(np.prod(expected)):
        return relation("shape_reshaped", SHAPE_RESHAPED, **words)
    return None
