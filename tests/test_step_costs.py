"""The graders of step 11 (costs): full marks, zero, each known mistake diagnosed, valid alternatives accepted."""

from __future__ import annotations

from autograder.base import chapter, tasks
from autograder.base.reference import Reference
from autograder.judge.cases import costs as case
from tests import kit
from tests.kit import Variant

STEP = "costs"
FLOPS = """    linear = 2 * n * block_params(d_model)
    quadratic = 2 * 2 * n * n * d_model
"""
SHARE = "return quadratic / (linear + quadratic)"

VARIANTS = (
    Variant(
        "d_ff_ignored", STEP, STEP, "d_ff = 4 * d_model if d_ff is None else d_ff", "d_ff = 4 * d_model", "d_ff_ignored"
    ),
    Variant(
        "gated_ffn_two_matrices",
        STEP,
        STEP,
        "n_matrices = 3 if gated else 2",
        "n_matrices = 2",
        "gated_ffn_two_matrices",
    ),
    Variant(
        "gpt2_untied_embeddings",
        STEP,
        STEP,
        "return sum(gpt2_small_parts(exact).values())",
        "return sum(gpt2_small_parts(exact).values()) + GPT2_VOCAB * GPT2_D_MODEL",
        "gpt2_untied_embeddings",
    ),
    Variant(
        "gpt2_no_final_norm", STEP, STEP, "layers * 2 * (2 * d) + 2 * d", "layers * 2 * (2 * d)", "gpt2_no_final_norm"
    ),
    Variant("heads_ignored", STEP, STEP, "return n_heads * n * n", "return n * n", "heads_ignored"),
    Variant(
        "gb_not_gib",
        STEP,
        STEP,
        "return score_matrix_bytes(n, bytes_per_value) / GIB",
        "return score_matrix_bytes(n, bytes_per_value) / GB",
        "gb_not_gib",
    ),
    Variant(
        "gib_not_gb",
        STEP,
        STEP,
        "return n_params * bytes_per_value / GB",
        "return n_params * bytes_per_value / GIB",
        "gib_not_gb",
    ),
    Variant(
        "mac_as_one_flop",
        STEP,
        STEP,
        FLOPS,
        "    linear = n * block_params(d_model)\n    quadratic = 2 * n * n * d_model\n",
        "mac_as_one_flop",
    ),
    Variant(
        "mac_as_one_flop_in_share",
        STEP,
        STEP,
        FLOPS,
        "    linear = 2 * n * block_params(d_model)\n    quadratic = 2 * n * n * d_model\n",
        "mac_as_one_flop",
    ),
    Variant(
        "mac_as_one_flop_in_crossover",
        STEP,
        STEP,
        "return 24 * d_model**2 // (4 * d_model)",
        "return 24 * d_model**2 // (2 * d_model)",
        "mac_as_one_flop",
    ),
    Variant(
        "projections_in_attention_share",
        STEP,
        STEP,
        SHARE,
        "return (2 * n * attention_params(d_model) + quadratic) / (linear + quadratic)",
        "projections_in_attention_share",
    ),
    Variant("share_as_percent", STEP, STEP, SHARE, "return 100 * quadratic / (linear + quadratic)", "share_as_percent"),
)

ALTERNATIVES = (
    Variant("share_as_n_over_n_plus_6d", STEP, STEP, SHARE, "return n / (n + 6 * d_model)", ""),
    Variant("float_counts", STEP, STEP, "return n_heads * n * n", "return float(n_heads) * n**2", ""),
    Variant(
        "numpy_int_counts",
        STEP,
        STEP,
        "return attention_params(d_model) + ffn_params(d_model, d_ff)",
        "import numpy as np\n    return np.int64(attention_params(d_model)) + np.int64(ffn_params(d_model, d_ff))",
        "",
    ),
    Variant("crossover_as_6d", STEP, STEP, "return 24 * d_model**2 // (4 * d_model)", "return 6 * d_model", ""),
)


test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks = kit.variant_tests(VARIANTS, ALTERNATIVES)


def test_reference_reproduces_the_chapter_and_corrects_its_mismatches() -> None:
    """The two MISMATCH entries are graded at the recomputed 33,554,432, not the printed 33,5M."""
    costs = Reference(kit.SOLUTIONS, tasks.MODULES).costs
    for entry in ("T712-llama-2d2", "T732-scoretensor-32"):
        assert chapter.status(entry) == "MISMATCH"
        assert chapter.value(entry) * 1e6 == 33_554_432
    assert costs.qk_params(4096, 128, 32) == costs.score_entries(1024, 32) == 33_554_432
    assert [costs.crossover_length(d) for d in (768, 4096)] == list(chapter.value("T762-crossover"))
    assert case.SCORE_TABLE_N == (512, 4096, 32768, 100000)
    assert [round(costs.score_matrix_gib(n), 4) for n in case.SCORE_TABLE_N] == [0.0005, 0.0312, 2.0, 18.6265]
    assert (
        costs.gated_ffn_width(4096) == 11008
        and costs.gpt2_small_params() == 124_318_464
        and costs.gpt2_small_params(True) == 124_439_808
    )
