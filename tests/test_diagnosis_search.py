"""The variant search: every step's model is the reference at its defaults, and compositions name their edits."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base.reference import Reference
from autograder.i18n import using
from autograder.judge import diagnose
from autograder.judge.diagnose import block, catalog, gradients, moe_router, positions, scaling, search, softmax
from tests import kit

REF = Reference(kit.SOLUTIONS, ("softmax", "scaling", "mask", "positions", "block", "gradients", "moe_router"))
RNG = np.random.default_rng(1219)


def _close(a, b) -> None:
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float), rtol=1e-12, atol=1e-12)


def test_models_at_their_defaults_are_the_reference() -> None:
    x = RNG.normal(size=(2, 3, 5))
    for axis in (-1, 0, 1):
        _close(softmax.model(x, axis), REF.softmax.softmax(x, axis))
    Q, K, V = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 5, 4)), RNG.normal(size=(2, 5, 3))
    mask = RNG.random((3, 5)) < 0.6
    mask[:, 0] = True
    for m in (None, mask):
        _close(scaling.model(Q, K, V, m), REF.scaling.attention(Q, K, V, m))
    for args in ((3, 4), (20, 16), (5, 6, 100.0), (7, 5)):
        _close(positions.sinusoidal_model(*args), REF.positions.sinusoidal_encoding(*args))
    xr, pos = RNG.normal(size=(2, 5, 8)), np.arange(3, 8)
    _close(positions.rope_model(xr, pos), REF.positions.rope(xr, pos))
    _close(positions.rope_model(xr, pos, 100.0), REF.positions.rope(xr, pos, 100.0))
    for n in (1, 4, 5, 8, 12):
        _close(positions.alibi_slopes_model(n), REF.positions.alibi_slopes(n))
    bias, expected = positions.alibi_bias_model(6, 0.5), REF.positions.alibi_bias(6, 0.5)
    assert np.array_equal(np.isinf(bias), np.isinf(expected))
    _close(bias[np.isfinite(bias)], expected[np.isfinite(expected)])
    rows = RNG.normal(size=(3, 4, 6))
    _close(block.norm_model(rows, 1e-3), REF.block.layer_norm(rows, 1e-3))
    _close(block.rms_model(rows, 1e-3), REF.block.rms_norm(rows, 1e-3))
    q, k, v, d_o = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2)), RNG.normal(size=(3, 2))
    _close(gradients.backward_model(q, k, v, d_o), REF.gradients.attention_backward(q, k, v, d_o))
    tokens, W_r = RNG.normal(size=(2, 6, 4)), RNG.normal(size=(4, 5))
    for top in (1, 2, 5):
        _close(moe_router.route_model(tokens, W_r, top), REF.moe_router.route(tokens, W_r, top))


def test_generated_variants_leave_out_the_reference_and_known_answers() -> None:
    Q, K, V = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.normal(size=(3, 2))
    known = {"missing_scale": scaling.model(Q, K, V, scale="none")}
    found = search.generate(scaling.model, scaling.EDITS, (Q, K, V), known=known)
    assert "missing_scale" not in found  # the known answer keeps its name
    assert "missing_scale&softmax_query_axis" in found
    reference = scaling.model(Q, K, V)
    assert not any(diagnose.distance(v[0], reference[0]) <= 1 for v in found.values())
    assert all(len({e.knob for e in c}) == len(c) for c in search.compositions(scaling.EDITS))


def test_identify_prefers_the_simplest_then_the_closest_match() -> None:
    right = np.ones(4)
    wrong = {"a&b": right, "c": right + 1e-7, "d": right}
    assert diagnose.identify(right, wrong) == "d"
    assert diagnose.identify(right + 1e-7, {"c": right + 1e-7, "d": right + 5e-7}) == "c"
    assert diagnose.identify(right, {"x+sig&y": right}) == "x&y"  # signatures are dropped from a composition
    assert diagnose.identify(right * 2, wrong) is None


def test_a_composed_mistake_is_worded_from_its_parts() -> None:
    text = catalog.describe("missing_scale&softmax_query_axis")
    assert catalog.MISTAKES["missing_scale"].text in text and catalog.MISTAKES["softmax_query_axis"].text in text
    with using("tr"):
        turkish = catalog.describe("missing_scale&softmax_query_axis")
    assert "ayrıca" in turkish and "softmax" in turkish and turkish != text


@pytest.mark.parametrize("module", [softmax, scaling, positions, block, gradients, moe_router])
def test_every_edit_names_a_known_mistake(module) -> None:
    assert all(e.mistake.id in catalog.MISTAKES for e in module.EDITS)


def test_search_composes_on_a_batched_masked_head() -> None:
    """Batch and head axes and a causal mask: the edits compose there too."""
    Q, K, V = RNG.normal(size=(2, 3, 6, 5)), RNG.normal(size=(2, 3, 6, 5)), RNG.normal(size=(2, 3, 6, 7))
    found = search.generate(scaling.model, scaling.EDITS, (Q, K, V, np.tril(np.ones((6, 6), bool))))
    assert len(found) > 20
