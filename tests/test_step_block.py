"""The graders of step 9 (block): full marks, zero, each known mistake diagnosed, valid alternatives accepted."""

from __future__ import annotations

import numpy as np

from autograder.base import chapter, tasks
from autograder.base.reference import Reference
from autograder.judge import cases
from autograder.judge.cases import block as case
from autograder.judge.diagnose import block as block_mistakes
from tests import kit
from tests.kit import Variant

STEP = "block"
CONCAT = "np.concatenate(outputs, axis=-1)"
RESIDUAL = "x = X + multi_head(X, heads, W_O)"
FFN_ON_NORM = "return x + feed_forward(layer_norm(x), W1, b1, W2, b2)"

VARIANTS = (
    Variant(
        "concat_order_swapped", STEP, "block", CONCAT, "np.concatenate(outputs[::-1], axis=-1)", "concat_order_swapped"
    ),
    Variant(
        "multi_head_missing_wo",
        STEP,
        "block",
        "return concat @ np.asarray(W_O, dtype=float)",
        "return concat",
        "multi_head_missing_wo",
    ),
    Variant(
        "layernorm_no_eps",
        STEP,
        "block",
        "return (x - mean) / np.sqrt(var + eps)",
        "return (x - mean) / np.sqrt(var)",
        "layernorm_no_eps",
    ),
    Variant(
        "layernorm_sample_variance",
        STEP,
        "block",
        "var = x.var(axis=-1, keepdims=True)",
        "var = x.var(axis=-1, keepdims=True, ddof=1)",
        "layernorm_sample_variance",
    ),
    Variant(
        "rmsnorm_subtracts_mean",
        STEP,
        "block",
        "    mean_square = np.mean(x**2",
        "    x = x - x.mean(axis=-1, keepdims=True)\n    mean_square = np.mean(x**2",
        "rmsnorm_subtracts_mean",
    ),
    Variant("rmsnorm_no_eps", STEP, "block", "np.sqrt(mean_square + eps)", "np.sqrt(mean_square)", "rmsnorm_no_eps"),
    Variant(
        "ffn_no_relu",
        STEP,
        "block",
        "np.maximum(x @ np.asarray(W1, dtype=float) + b1, 0.0)",
        "x @ np.asarray(W1, dtype=float) + b1",
        "ffn_no_relu",
    ),
    Variant(
        "ffn_raw_residual", STEP, "block", FFN_ON_NORM, "return x + feed_forward(x, W1, b1, W2, b2)", "ffn_raw_residual"
    ),
    Variant(
        "ffn_added_to_normalised",
        STEP,
        "block",
        FFN_ON_NORM,
        "return layer_norm(x) + feed_forward(layer_norm(x), W1, b1, W2, b2)",
        "ffn_added_to_normalised",
    ),
    Variant(
        "block_post_norm",
        STEP,
        "block",
        "    return x + feed_forward(layer_norm(x), W1, b1, W2, b2)  # FFN reads N(x), writes into x\n",
        "    x = layer_norm(x)\n    return layer_norm(x + feed_forward(x, W1, b1, W2, b2))\n",
        "block_post_norm",
    ),
    Variant(
        "block_norm_before_attention",
        STEP,
        "block",
        RESIDUAL,
        "x = X + multi_head(layer_norm(X), heads, W_O)",
        "block_norm_before_attention",
    ),
    Variant(
        "block_no_attention_residual",
        STEP,
        "block",
        RESIDUAL,
        "x = multi_head(X, heads, W_O)",
        "block_no_attention_residual",
    ),
    # a mistake of step 2 sends the block's checks back to step 2 (upstream first), naming its function
    Variant(
        "block_via_missing_scale",
        STEP,
        "scaling",
        "return scores(Q, K) / np.sqrt(d_k)",
        "return scores(Q, K)",
        "upstream.scaling.scaled_scores",
    ),
    Variant(
        "layernorm_eps_on_std",
        "block",
        "block",
        "    return (x - mean) / np.sqrt(var + eps)\n",
        "    return (x - mean) / (np.sqrt(var) + eps)\n",
        "layernorm_eps_outside_sqrt",
    ),
    Variant(
        "layernorm_not_centred",
        "block",
        "block",
        "    return (x - mean) / np.sqrt(var + eps)\n",
        "    return x / np.sqrt(var + eps)\n",
        "layernorm_not_centred",
    ),
    Variant(
        "layernorm_over_tokens",
        "block",
        "block",
        (
            "    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)\n"
            "    var = x.var(axis=-1, keepdims=True)  # (..., 1), population variance\n"
        ),
        "    mean = x.mean(axis=0, keepdims=True)\n    var = x.var(axis=0, keepdims=True)\n",
        "norm_wrong_axis",
    ),
    Variant(
        "rmsnorm_eps_on_rms",
        "block",
        "block",
        "    return x / np.sqrt(mean_square + eps)\n",
        "    return x / (np.sqrt(mean_square) + eps)\n",
        "rmsnorm_eps_outside_sqrt",
    ),
    Variant(
        "rmsnorm_variance",
        "block",
        "block",
        "    mean_square = np.mean(x**2, axis=-1, keepdims=True)  # (..., 1)\n",
        "    mean_square = x.var(axis=-1, keepdims=True)\n",
        "rmsnorm_uses_variance",
    ),
    Variant(
        "rmsnorm_sum",
        "block",
        "block",
        "    mean_square = np.mean(x**2, axis=-1, keepdims=True)  # (..., 1)\n",
        "    mean_square = np.sum(x**2, axis=-1, keepdims=True)\n",
        "rmsnorm_sum_not_mean",
    ),
    Variant(
        "layernorm_sample_variance_eps_on_std",
        "block",
        "block",
        (
            "    var = x.var(axis=-1, keepdims=True)  # (..., 1), population variance\n"
            "    return (x - mean) / np.sqrt(var + eps)\n"
        ),
        "    var = x.var(axis=-1, keepdims=True, ddof=1)\n    return (x - mean) / (np.sqrt(var) + eps)\n",
        "layernorm_sample_variance&layernorm_eps_outside_sqrt",
    ),
)

LN_BODY = """    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = x.var(axis=-1, keepdims=True)  # (..., 1), population variance
    return (x - mean) / np.sqrt(var + eps)
"""
MULTI_HEAD_TAIL = """    concat = np.concatenate(outputs, axis=-1)  # (..., n, h * d_v) = [head 1 | head 2 | ...]
    return concat @ np.asarray(W_O, dtype=float)  # (..., n, d_out)
"""
ALTERNATIVES = (
    Variant("float32_block", STEP, "block", "dtype=float", "dtype=np.float32", ""),
    Variant(
        "layer_norm_by_hand",
        STEP,
        "block",
        LN_BODY,
        "    x = np.asarray(x, dtype=float)\n    c = x - x.sum(axis=-1, keepdims=True) / "
        "x.shape[-1]\n    return c / np.sqrt((c * c).sum(axis=-1, keepdims=True) / x.shape[-1] + "
        "eps)\n",
        "",
    ),
    Variant(
        "per_head_output_rows",
        STEP,
        "block",
        MULTI_HEAD_TAIL,
        "    W_O, rows, out = np.asarray(W_O, dtype=float), 0, 0.0\n    for o in outputs:  # head "
        "h meets its own rows of W_O\n        out = out + o @ W_O[rows : rows + o.shape[-1]]\n     "
        "   rows += o.shape[-1]\n    return out\n",
        "",
    ),
)


test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks = kit.variant_tests(VARIANTS, ALTERNATIVES)


def test_readout_head_returns_its_attention_matrix() -> None:
    """The checks read weights through multi_head: X @ READOUT = I, so a head's output is its A."""
    np.testing.assert_allclose(case.X @ case.READOUT, np.eye(3), atol=1e-12)
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    A = ref.block.multi_head(case.X, [(case.HEAD1[0], case.HEAD1[1], case.READOUT)], np.eye(3))
    np.testing.assert_allclose(A, chapter.value("T72-A"), atol=1e-12)


def test_chapter_probes_are_the_wrong_answers() -> None:
    """The catalog's probes P-LN-eps and P-FFN-input are what the block's variants compute."""
    wrong = cases.wrong("block_worked")
    kedi = np.array([2.274426, -0.829942, 0.272364, -0.754526])  # P-FFN-input: FFN added to N(x)
    np.testing.assert_allclose(wrong["ffn_added_to_normalised"][0], kedi, atol=1e-6)
    ln_wrong = cases.wrong("block_layer_norm")
    assert (
        abs(ln_wrong["layernorm_no_eps"][0, 0] - 1.6544) < 5e-5
        and abs(ln_wrong["layernorm_no_eps"][2, 2] - 1.3271) < 5e-5
    )
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    raw = ref.block.feed_forward(chapter.value("T735-residual"), case.W1, case.b1, np.eye(8), np.zeros(8))
    np.testing.assert_allclose(
        raw[0], [1.595666, 0.394557, 1.228183, 1.164646, 0.0, 0.331020, 0.564092, 0.0], atol=1e-6
    )  # P-FFN-input


def test_every_mistake_has_a_variant() -> None:
    assert {v.mistake for v in VARIANTS} >= set(block_mistakes.MISTAKES)
