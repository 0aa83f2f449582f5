"""Each relation between a wrong array and the expected one, on synthetic arrays, in English and Turkish."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import using
from autograder.judge.diagnose import relations
from autograder.judge.diagnose.relations import relate, shape_relation

RNG = np.random.default_rng(19)
E = RNG.normal(size=(4, 6))
SQUARE = RNG.normal(size=(5, 5))
BATCH = RNG.normal(size=(2, 3, 4))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _bfloat16(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32).astype(float)


CASES = {  # name: (got, expected, context, relation kind)
    "times 1/sqrt(d_k)": (E / np.sqrt(8), E, {"d_k": 8}, "times"),
    "times -1": (-E, E, {}, "times"),
    "times a plain number": (E * 3.7, E, {}, "times"),
    "a number times n": (np.asarray(12.0 * 7), np.asarray(12.0), {"n": 7}, "times"),
    "plus a constant": (E + 0.25, E, {}, "plus"),
    "a constant per row": (E + np.arange(4.0)[:, None], E, {}, "per_row"),
    "transposed": (SQUARE.T, SQUARE, {}, "transposed"),
    "rows shifted by one": (np.roll(E, -1, axis=0), E, {}, "permuted"),
    "columns reversed": (E[:, ::-1], E, {}, "permuted"),
    "halves swapped": (np.roll(E, 3, axis=1), E, {}, "permuted"),
    "pairs split into halves": (E[:, [0, 2, 4, 1, 3, 5]], E, {}, "permuted"),
    "right in the first row only": (np.vstack([E[:1], 2 * E[1:] + 1]), E, {}, "first_only"),
    "right for the first batch entry only": (np.stack([BATCH[0], BATCH[1][::-1] * 2]), BATCH, {}, "leading_only"),
    "normalised over the other axis": (_softmax(SQUARE, 0), _softmax(SQUARE, 1), {}, "other_axis"),
    "rows scaled by their own factors": (E * np.array([1.5, 2.0, 0.5, 3.0])[:, None], E, {}, "row_factors"),
    "each row reordered": (np.sort(E, axis=-1), E, {}, "rows_reordered"),
    "NaN where finite": (np.where(E > 1, np.nan, E), E, {}, "non_finite"),
    "finite where -inf": (np.zeros((3, 3)), np.triu(np.full((3, 3), -np.inf), 1), {}, "finite_for_inf"),
    "all zeros": (np.zeros_like(E), E, {}, "zeros"),
    "float32 rounding": (E.astype(np.float32).astype(float), E, {}, "float32"),
    "float32 rounding of large angles": (np.sin(E) + 3e-5, np.sin(E), {"scale": 5000.0}, "float32"),
    "bfloat16 rounding": (_bfloat16(E), E, {}, "half_precision"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_relation_is_found(name: str) -> None:
    got, expected, context, kind = CASES[name]
    found = relate(got, expected, context)
    assert found is not None and found.kind == kind, (name, found)


def test_named_constants_and_plain_ones() -> None:
    assert relate(E / np.sqrt(8), E, {"d_k": 8}).sentence().endswith("times 1/sqrt(d_k) = 0.3536")
    assert relate(-E, E).sentence().endswith("times -1")
    assert "3.7" in relate(E * 3.7, E).sentence()
    assert relate(np.asarray(84.0), np.asarray(12.0), {"n": 7}).sentence().endswith("times n = 7")
    assert relate(np.asarray(84.5), np.asarray(12.0), {"n": 7}) is None  # one number: only a named factor says much


def test_orders_are_worded() -> None:
    assert "shifted by 1: entry i holds the expected entry i + 1" in relate(np.roll(E, -1, axis=0), E).sentence()
    assert "entry i - 1" in relate(np.roll(E, 1, axis=0), E).sentence()
    assert "reversed" in relate(E[:, ::-1], E).sentence()
    assert "halves swapped" in relate(np.roll(E, 3, axis=1), E).sentence()
    assert "pairs split into two halves" in relate(E[:, [0, 2, 4, 1, 3, 5]], E).sentence()


def test_a_relation_names_no_mistake() -> None:
    """Half-precision-sized errors say how the numbers differ; half precision is named only where the grader saw
    the student's computation run in it (autograder.judge.diagnose.trace)."""
    assert relate(_bfloat16(E), E).kind == "half_precision" and relate(_bfloat16(E), E).mistake is None
    assert relate(E.astype(np.float32).astype(float), E).mistake is None


def test_errors_of_one_percent_are_not_called_rounding() -> None:
    """Issue 32: an unscaled backward or an inverted scale is off by about 1e-2 of the largest entry, but by far
    more than rounding on its small entries; it is no half-precision rounding."""
    weights = _softmax(np.array([[0.0, 3.0 / np.sqrt(2)], [6.0 / np.sqrt(2), -4.0 / np.sqrt(2)]]), 1)
    unscaled = _softmax(np.array([[0.0, 3.0], [6.0, -4.0]]), 1)  # the same head without 1/sqrt(d_k)
    found = relate(unscaled.T, weights.T)
    assert found is None or found.kind != "half_precision", found
    bigger = E + 1e-2 * np.sign(E) * np.abs(E).max()  # 1e-2 of the scale on every entry, small ones included
    assert (relate(bigger, E) or relations.Relation("none", "")).kind != "half_precision"


@pytest.mark.parametrize(
    "got, expected, kind",
    [
        ((6, 4), (4, 6), "shape_transposed"),
        ((5,), (5, 1), "shape_squeezed"),
        ((2, 1, 5), (2, 5), "shape_extra_axis"),
        ((4, 3, 2), (2, 6, 2), "shape_joined"),
        ((3, 4), (2, 6), "shape_reshaped"),
        ((3, 4), (5, 6), None),
    ],
)
def test_shape_relations(got: tuple, expected: tuple, kind: str | None) -> None:
    found = shape_relation(got, expected)
    assert (found.kind if found else None) == kind


def test_unrelated_arrays_have_no_relation() -> None:
    assert relate(RNG.normal(size=(4, 6)), E) is None


def test_relations_are_worded_in_turkish() -> None:
    """Every relation's sentence comes from the catalog: in Turkish none of them stays in English."""
    for name, (got, expected, context, _kind) in CASES.items():
        english = relate(got, expected, context).sentence()
        with using("tr"):
            turkish = relate(got, expected, context).sentence()
        assert turkish != english, name
