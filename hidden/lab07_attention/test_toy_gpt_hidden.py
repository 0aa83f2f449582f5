"""Hidden checks of step 12, a toy GPT: fresh weights of other sizes, compared with the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autograder.i18n import _
from autograder.judge.cases import toy_gpt as gpt_cases
from autograder.judge.checking import Lab
from autograder.judge.checks import toy_gpt as gpt_checks
from autograder.judge.diagnose import toy_gpt as gpt_mistakes
from autograder.judge.diagnose.answers import Answers
from autograder.judge.oracle import Oracle

pytestmark = pytest.mark.step("toy_gpt")

SAFE_MARGIN = 1e-3  # greedy runs whose best two logits come closer than this are redrawn: float32 may pick either


def _model(oracle: Oracle, rng: np.random.Generator, n_layers: int, n_tokens: int) -> dict[str, Any]:
    """Fresh weights from the reference's ``random_weights``: 3 heads, width 6 to 12, 12 to 24 tokens (NumPy arrays)."""
    n_heads, d_head = 3, int(rng.integers(2, 5))
    n_vocab, n_ctx = int(rng.integers(12, 25)), n_tokens + int(rng.integers(0, 5))
    weights = oracle.probe(
        "oracle_gpt_weights", n_vocab, n_heads * d_head, n_heads, n_layers, n_ctx, int(rng.integers(2**31))
    )
    return gpt_cases.numpy_weights(weights)


def _logits(oracle: Oracle, weights: dict[str, Any], tokens: list[int]) -> np.ndarray:
    """The reference's ``gpt_forward`` logits (float64)."""
    return np.asarray(oracle.probe("oracle_gpt_logits", weights, tokens), dtype=float)


@pytest.mark.points(1.5)
def test_random_forward(lab: Lab, ref, oracle: Oracle, rng: np.random.Generator) -> None:
    """gpt_forward on fresh weights (3 heads, other widths, vocabularies and depths) gives the reference's logits"""
    for n_layers in (1, 3):
        n = int(rng.integers(4, 11))
        weights = _model(oracle, rng, n_layers, n)
        tokens = [int(t) for t in rng.integers(0, len(weights["wte"]), size=n)]
        expected = _logits(oracle, weights, tokens)
        gpt_checks.forward_matches(
            lab,
            weights,
            tokens,
            expected,
            Answers(lambda w=weights, t=tokens: gpt_mistakes.gpt_forward_variants(ref, w, t)),  # read on a failure
            _(gpt_checks.FRESH).format(size=gpt_checks.describe(weights)),
        )


@pytest.mark.points(1)
def test_random_cached_steps(lab: Lab, ref, oracle: Oracle, rng: np.random.Generator) -> None:
    """gpt_step through the KV cache on fresh weights gives the reference's full-pass logits at every position"""
    n = int(rng.integers(5, 11))
    weights = _model(oracle, rng, int(rng.choice([1, 3])), n)
    tokens = [int(t) for t in rng.integers(0, len(weights["wte"]), size=n)]
    expected = _logits(oracle, weights, tokens)
    gpt_checks.cached_steps_match(
        lab,
        weights,
        tokens,
        expected,
        Answers(lambda: gpt_mistakes.cached_step_variants(ref, weights, tokens)),  # read on a failure
        _(gpt_checks.FRESH).format(size=gpt_checks.describe(weights)),
    )


@pytest.mark.points(1.5)
def test_random_generate(lab: Lab, ref, oracle: Oracle, rng: np.random.Generator) -> None:
    """Greedy generation on fresh weights: the reference's tokens and logits, with the cache and without it"""
    n_prompt, n_new = int(rng.integers(1, 5)), int(rng.integers(5, 9))
    for _attempt in range(20):  # a near tie could go either way in float32: draw again
        weights = _model(oracle, rng, int(rng.choice([1, 3])), n_prompt + n_new - 1)
        prompt = [int(t) for t in rng.integers(0, len(weights["wte"]), size=n_prompt)]
        if gpt_mistakes.greedy_margin(weights, prompt, n_new) >= SAFE_MARGIN:
            break
    tokens, logits = oracle.probe("oracle_gpt_generate", weights, prompt, n_new)
    expected = (np.asarray(tokens), np.asarray(logits, dtype=float))
    wrong = Answers(lambda: gpt_mistakes.generate_variants(ref, weights, prompt, n_new))  # read on a failure
    gpt_checks.generate_matches(
        lab, weights, prompt, n_new, expected, wrong, _(gpt_checks.FRESH).format(size=gpt_checks.describe(weights))
    )
