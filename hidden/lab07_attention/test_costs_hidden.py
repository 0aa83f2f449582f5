"""Hidden checks of step 11, the chapter's arithmetic: fresh widths and lengths, compared with the reference."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.judge.checking import COUNT, Lab, as_number, expect_close
from autograder.judge.diagnose import costs as cost_mistakes
from autograder.judge.diagnose.answers import Answers

pytestmark = pytest.mark.step("costs")


@pytest.mark.points(1)
def test_random_widths(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Weights of attention, FFN and block for a random width, compared with the reference"""
    d = 64 * int(rng.integers(4, 129))
    d_ff, d_kv, d_k, heads = (
        128 * int(rng.integers(8, 200)),
        d // int(rng.choice([2, 4, 8])),
        d // 32,
        int(rng.integers(2, 65)),
    )
    calls = (
        ("attention_params", (d, d_kv), None),
        ("ffn_params", (d, d_ff, True), cost_mistakes.ffn_params_variants),
        ("gated_ffn_width", (d,), None),
        ("block_params", (d, d_ff), cost_mistakes.block_params_variants),
        ("qk_params", (d, d_k, heads), None),
    )
    for function, args, variants in calls:
        got = as_number(lab.call(function, *args, text=f"{function}({', '.join(map(str, args))})"))
        expected = getattr(ref.costs, function)(*args)
        expect_close(got, expected, wrong=Answers.live(partial(variants, ref), *args) if variants else None, **COUNT)


@pytest.mark.points(1)
def test_random_lengths(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Score memory, FLOPs, FLOP share and crossover for a random length and width, compared with the reference"""
    n, d, heads = int(rng.integers(100, 200_000)), 128 * int(rng.integers(2, 97)), int(rng.integers(2, 129))
    got = as_number(lab.call("score_entries", n, heads, text=f"score_entries({n}, {heads})"))
    expect_close(
        got,
        ref.costs.score_entries(n, heads),
        wrong=Answers.live(partial(cost_mistakes.score_entries_variants, ref), n, heads),
        **COUNT,
    )
    got = as_number(lab.call("score_matrix_gib", n, 4, text=f"score_matrix_gib({n}, 4) (fp32)"))
    expect_close(
        got,
        ref.costs.score_matrix_gib(n, 4),
        wrong=Answers.live(partial(cost_mistakes.score_matrix_gib_variants, ref), n, 4),
    )
    got = lab.call("block_flops", n, d, text=f"block_flops({n}, {d})")
    expected, wrong = ref.costs.block_flops(n, d), Answers.live(partial(cost_mistakes.block_flops_variants, ref), n, d)
    for index, part in enumerate(got.parts("linear", "quadratic")):
        expect_close(as_number(part), expected[index], wrong=wrong.part(index), **COUNT)
    got = as_number(lab.call("attention_flop_share", n, d, text=f"attention_flop_share({n}, {d})"))
    expect_close(
        got,
        ref.costs.attention_flop_share(n, d),
        wrong=Answers.live(partial(cost_mistakes.attention_flop_share_variants, ref), n, d),
    )
    got = as_number(lab.call("crossover_length", d, text=f"crossover_length({d})"))
    expect_close(
        got,
        ref.costs.crossover_length(d),
        wrong=Answers.live(partial(cost_mistakes.crossover_length_variants, ref), d),
        **COUNT,
    )
