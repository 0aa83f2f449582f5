"""Cases of the chapter's arithmetic: the sizes of its tables."""

from __future__ import annotations

import math

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose import costs as cost_mistakes

# Sequence lengths of the score-memory table (7.6.1): the square roots of its entry counts.
SCORE_TABLE_N = tuple(math.isqrt(int(v)) for v in chapter.value("T761-entries"))  # 512, 4096, 32768, 100000
# (d_model, n) rows of the FLOP-share table (7.6.2): short, at the crossover 6d, long.
SHARE_ROWS = ((768, 1024), (768, 4608), (768, 32768), (4096, 4096), (4096, 24576), (4096, 100000))
# FFN widths of the table in 7.3.6 at d = 4096: (d_ff, gated) as d_ff / d = 4, 2.6875 (Llama 2), 3.5.
FFN_D = 4096
FFN_ROWS = tuple((int(ratio * FFN_D), index > 0) for index, ratio in enumerate(chapter.value("T736-ffn-ratio")))
# The 120B-total mixture of experts of exercise 7.13.10: (weights, bytes per value).
EX10_ROWS = ((120e9, 2), (120e9, 1), (120e9, 0.5), (5e9, 2))
EX6_N = 1024  # any n: the exercise's multiplies are per n^2

CASES: tuple[Case, ...] = (
    Case("block_params_11008", "costs", "block_params", (4096, 11008), cost_mistakes.block_params_variants),
    *(
        Case(
            f"ffn_params_{d_ff}_{int(gated)}",
            "costs",
            "ffn_params",
            (FFN_D, d_ff, gated),
            cost_mistakes.ffn_params_variants,
        )
        for d_ff, gated in dict.fromkeys(FFN_ROWS)
    ),
    Case("gpt2_rule", "costs", "gpt2_small_params", (False,), cost_mistakes.gpt2_params_variants),
    Case("gpt2_exact", "costs", "gpt2_small_params", (True,), cost_mistakes.gpt2_params_variants),
    Case("score_entries_32_heads", "costs", "score_entries", (1024, 32), cost_mistakes.score_entries_variants),
    *(
        Case(f"score_gib_{n}", "costs", "score_matrix_gib", (n,), cost_mistakes.score_matrix_gib_variants)
        for n in SCORE_TABLE_N
    ),
    *(
        Case(
            f"weights_gb_{int(p / 1e9)}B_{b}",
            "costs",
            "weight_memory_gb",
            (p, b),
            cost_mistakes.weight_memory_gb_variants,
        )
        for p, b in EX10_ROWS
    ),
    Case("block_flops_ex6", "costs", "block_flops", (EX6_N, 512), cost_mistakes.block_flops_variants),
    *(
        Case(
            f"flop_share_{d}_{n}", "costs", "attention_flop_share", (n, d), cost_mistakes.attention_flop_share_variants
        )
        for d, n in SHARE_ROWS
    ),
    *(
        Case(f"crossover_{d}", "costs", "crossover_length", (d,), cost_mistakes.crossover_length_variants)
        for d in (768, 4096)
    ),
)
