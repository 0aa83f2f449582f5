"""Public checks of step 12, a toy GPT: its pieces, the forward pass on the kit's weights, the cached steps, greedy
generation."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import _, ngettext
from autograder.judge import cases
from autograder.judge.cases import toy_gpt as gpt_cases
from autograder.judge.checking import Lab, expect_case, expect_that
from autograder.judge.checks import toy_gpt as gpt_checks
from autograder.sandbox.protocol import AsTorch

pytestmark = pytest.mark.step("toy_gpt")

KIT = gpt_cases.KIT_TEXT  # English, marked: translated where it is shown


def _tensors(*arrays: np.ndarray) -> tuple[AsTorch, ...]:
    return tuple(AsTorch(a) for a in arrays)


@pytest.mark.points(1)
def test_layer_norm(lab: Lab) -> None:
    """layer_norm normalises each row (population variance, eps = 1e-5), then applies the gain and the bias"""
    x, g, b = gpt_cases.INPUTS["layer_norm"]
    got = lab.call(
        "layer_norm",
        *_tensors(x, g, b),
        text=_("{call} with x {shape} (one row of tiny variance: eps shows) and random g, b (float64)").format(
            call="layer_norm(x, g, b)", shape=x.shape
        ),
    )
    expect_case(got, "toy_gpt_layer_norm", **gpt_checks.LOGITS)


@pytest.mark.points(0.5)
def test_gelu(lab: Lab) -> None:
    """gelu is GPT-2's tanh approximation"""
    x = gpt_cases.INPUTS["gelu"]
    got = lab.call(
        "gelu",
        AsTorch(x),
        text=ngettext(
            "{call} with x = -5, -4.5, ..., 5 and {count} random value (float64)",
            "{call} with x = -5, -4.5, ..., 5 and {count} random values (float64)",
            len(x) - 21,
        ).format(call="gelu(x)", count=len(x) - 21),
    )
    expect_case(got, "toy_gpt_gelu", **gpt_checks.LOGITS)


@pytest.mark.points(1)
@pytest.mark.parametrize("name", ["kit_block", "four_heads"])
def test_causal_self_attention(lab: Lab, name: str) -> None:
    """causal_self_attention: each head on its columns, scores / sqrt(d_head), the causal mask, heads side by side,
    then W_O"""
    if name == "kit_block":
        x, block, n_heads = gpt_cases.INPUTS["attention_x"], gpt_cases.kit_weights()["blocks"][0], 2
        text = _("{call} with x {shape} and the first block of {weights}").format(
            call="causal_self_attention(x, block, 2)", shape=x.shape, weights=_(KIT)
        )
    else:
        x, block, n_heads = gpt_cases.INPUTS["four_heads"]
        text = _("{call} with x {shape} and a random block of width 8 (4 heads of width 2)").format(
            call="causal_self_attention(x, block, 4)", shape=x.shape
        )
    got = lab.call("causal_self_attention", AsTorch(x), {k: AsTorch(v) for k, v in block.items()}, n_heads, text=text)
    case = f"toy_gpt_attention_{name}"
    expect_case(got, case, **gpt_checks.LOGITS)


@pytest.mark.points(2)
def test_forward_kit_weights(lab: Lab) -> None:
    """gpt_forward on the kit's weights gives the reference's logits at every position"""
    weights = gpt_cases.kit_weights()
    gpt_checks.forward_matches(
        lab, weights, gpt_cases.TOKENS, cases.expected("toy_gpt_forward"), cases.wrong("toy_gpt_forward"), _(KIT)
    )


@pytest.mark.points(0.5)
def test_forward_float32(lab: Lab) -> None:
    """In float32, gpt_forward gives the same logits to float32 rounding"""
    weights = gpt_cases.kit_weights()
    gpt_checks.forward_matches(
        lab,
        weights,
        gpt_cases.TOKENS,
        cases.expected("toy_gpt_forward"),
        cases.wrong("toy_gpt_forward"),
        _(KIT),
        dtype=np.float32,
    )


@pytest.mark.points(0.5)
def test_new_cache(lab: Lab) -> None:
    """new_cache gives one empty KVCache per block and head"""
    weights = gpt_cases.kit_weights()
    got = lab.probe(
        "toy_gpt_new_cache",
        gpt_checks.send(weights),
        text=_("{call} with {weights}, reading {reads}").format(
            call="new_cache(weights)",
            weights=_(KIT),
            reads=_("{first} and {second}").format(
                first="type(cache[layer][head]).__name__", second="len(cache[layer][head])"
            ),
        ),
    )
    expected = [[("KVCache", 0)] * 2 for _layer in range(2)]
    found = [[tuple(head) for head in layer] for layer in got.value] if isinstance(got.value, list) else got.value
    expect_that(
        got,
        found == expected,
        _("{value} (cache[layer][head], 2 layers of 2 heads)").format(value=expected),
        f"{found!r:.300}",
    )


@pytest.mark.points(1.5)
def test_cached_steps_equal_full_pass(lab: Lab) -> None:
    """gpt_step, one token at a time through the KV cache, gives gpt_forward's logits at every position"""
    weights = gpt_cases.kit_weights()
    gpt_checks.cached_steps_match(
        lab, weights, gpt_cases.TOKENS, cases.expected("toy_gpt_cached"), cases.wrong("toy_gpt_cached"), _(KIT)
    )


@pytest.mark.points(2)
def test_generate(lab: Lab) -> None:
    """Greedy generation from the kit's prompt: the reference's 8 tokens and logits, with the cache and without it"""
    weights = gpt_cases.kit_weights()
    expected = (cases.expected("toy_gpt_generate", 0), cases.expected("toy_gpt_generate", 1))
    wrong = {mistake: (None, logits) for mistake, logits in cases.wrong("toy_gpt_generate", 1).items()}
    gpt_checks.generate_matches(lab, weights, gpt_cases.PROMPT, gpt_cases.N_NEW, expected, wrong, _(KIT))
