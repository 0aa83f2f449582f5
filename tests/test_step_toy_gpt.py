"""The graders of step 12 (toy_gpt): full marks, zero, each known mistake diagnosed, valid alternatives accepted,
the kit's weights."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge import cases
from autograder.judge.cases import toy_gpt as case
from autograder.judge.checking import CheckFailed, Got
from autograder.judge.checks import toy_gpt as gpt_checks
from autograder.judge.diagnose import toy_gpt as gpt_mistakes
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Sandbox
from autograder.sandbox.protocol import AsTorch
from tests import kit
from tests.kit import Variant

STEP = "toy_gpt"
FORWARD_BLOCK = (
    '        x = x + causal_self_attention(layer_norm(x, block["ln1_g"], block["ln1_b"]), block, weights["n_heads"])\n'
    '        x = x + mlp(layer_norm(x, block["ln2_g"], block["ln2_b"]), block)\n'
)
EMBED = '    x = wte[tokens] + wpe[: len(tokens)]  # (n, d): token plus position\n    for block in weights["blocks"]:\n'
GELU = "return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))"
LN = "return g * (x - mean) / torch.sqrt(var + eps) + b"
SCALE = "/ math.sqrt(d // n_heads)  # (..., n_heads, n, n)"

VARIANTS = (
    Variant(
        "gpt_positions_after_first_block",
        STEP,
        STEP,
        EMBED + FORWARD_BLOCK,
        '    x = wte[tokens]\n    for index, block in enumerate(weights["blocks"]):\n'
        + FORWARD_BLOCK
        + "        if index == 0:\n            x = x + wpe[: len(tokens)]\n",
        "gpt_positions_after_first_block",
    ),
    # the position table and the token table differ by one letter: wpe.T in place of wte.T is the untied projection a
    # student writes
    Variant(
        "gpt_output_untied",
        STEP,
        STEP,
        'weights["lnf_b"]) @ wte.T  # (n, V)',
        'weights["lnf_b"]) @ wpe.T  # (n, V)',
        "gpt_output_untied",
    ),
    Variant(
        "gpt_post_norm",
        STEP,
        STEP,
        FORWARD_BLOCK,
        '        x = layer_norm(x + causal_self_attention(x, block, weights["n_heads"]), '
        'block["ln1_g"], block["ln1_b"])\n'
        '        x = layer_norm(x + mlp(x, block), block["ln2_g"], block["ln2_b"])\n',
        "gpt_post_norm",
    ),
    Variant("gpt_no_causal_mask", STEP, STEP, "device=x.device).tril()", "device=x.device)", "gpt_no_causal_mask"),
    Variant(
        "gelu_exact_erf", STEP, STEP, GELU, "return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "gelu_exact_erf"
    ),
    Variant(
        "layernorm_gain_bias_ignored",
        STEP,
        STEP,
        LN,
        "return (x - mean) / torch.sqrt(var + eps)",
        "layernorm_gain_bias_ignored",
    ),
    Variant("toy_layernorm_sample_variance", STEP, STEP, "correction=0", "correction=1", "layernorm_sample_variance"),
    Variant("toy_layernorm_no_eps", STEP, STEP, LN, "return g * (x - mean) / torch.sqrt(var) + b", "layernorm_no_eps"),
    Variant("toy_missing_scale", STEP, STEP, SCALE, "", "missing_scale"),
    Variant("attention_scaled_by_width", STEP, STEP, SCALE, "/ math.sqrt(d)", "attention_scaled_by_width"),
    Variant(
        "toy_missing_wo", STEP, STEP, 'return out @ block["W_O"]  # (..., n, d)', "return out", "multi_head_missing_wo"
    ),
    Variant(
        "gpt_step_no_position",
        STEP,
        STEP,
        'x = wte[token] + weights["wpe"][position]  # (d,)',
        "x = wte[token]  # (d,)",
        "gpt_step_no_position",
    ),
    Variant(
        "generate_cache_unused",
        STEP,
        STEP,
        "        if use_cache:\n            logits = gpt_step(",
        "        if False:\n            logits = gpt_step(",
        "generate_cache_unused",
    ),
    Variant(
        "scaled_by_heads",
        "toy_gpt",
        "toy_gpt",
        "    scores = q @ k.transpose(-1, -2) / math.sqrt(d // n_heads)  # (..., n_heads, n, n)\n",
        "    scores = q @ k.transpose(-1, -2) / math.sqrt(n_heads)\n",
        "attention_scaled_by_heads",
    ),
    Variant(
        "heads_split_by_reshape",
        "toy_gpt",
        "toy_gpt",
        "        return (x @ W).unflatten(-1, (n_heads, d // n_heads)).transpose(-2, -3)\n",
        "        return (x @ W).reshape(*x.shape[:-2], n_heads, n, d // n_heads)\n",
        "heads_split_without_transpose",
    ),
    Variant(
        "heads_merged_by_reshape",
        "toy_gpt",
        "toy_gpt",
        (
            "    out = (weights @ v).transpose(-2, -3).flatten(-2)  # (..., n, n_heads * d_head) = [head 1 | "
            "head 2 | ...]\n"
        ),
        "    out = (weights @ v).reshape(*x.shape[:-2], n, d)\n",
        "heads_merged_without_transpose",
    ),
)

ATTENTION_BODY = """    scores = q @ k.transpose(-1, -2) / math.sqrt(d // n_heads)  # (..., n_heads, n, n)
    allowed = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()  # (n, n): True = may attend
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    out = (weights @ v).transpose(-2, -3).flatten(-2)"""
ALTERNATIVES = (
    Variant("torch_gelu_tanh", STEP, STEP, GELU, 'return torch.nn.functional.gelu(x, approximate="tanh")', ""),
    Variant(
        "torch_layer_norm", STEP, STEP, LN, "return torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, eps)", ""
    ),
    Variant(
        "sdpa_attention",
        STEP,
        STEP,
        ATTENTION_BODY,
        "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, "
        "is_causal=True).transpose(-2, -3).flatten(-2)",
        "",
    ),
    Variant(
        "float32_model",
        STEP,
        STEP,
        '    wte, wpe = weights["wte"], weights["wpe"]\n',
        "    weights = as_tensors(weights, dtype=torch.float32)  # compute in float32 whatever "
        'comes in\n    wte, wpe = weights["wte"], weights["wpe"]\n',
        "",
    ),
)


test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks = kit.variant_tests(VARIANTS, ALTERNATIVES)


def _ref() -> Reference:
    return Reference(kit.SOLUTIONS, tasks.MODULES)


def test_every_mistake_has_a_variant() -> None:
    assert {v.mistake for v in VARIANTS} >= set(gpt_mistakes.MISTAKES)


def test_weights_file_is_the_seeded_random_weights() -> None:
    """toy_gpt_weights.npz is random_weights(**KIT_SIZE, seed=KIT_SEED), shipped as is, and in the snapshot."""
    ref = _ref()
    stored, drawn = (
        case.flat(ref.toy_gpt.load_weights()),
        case.flat(ref.toy_gpt.random_weights(**case.KIT_SIZE, seed=case.KIT_SEED)),
    )
    assert sorted(stored) == sorted(drawn) == sorted(case.WEIGHT_KEYS)
    for key in stored:
        np.testing.assert_array_equal(stored[key], drawn[key], err_msg=key)
        np.testing.assert_array_equal(case.flat(case.kit_weights())[key], drawn[key], err_msg=key)
    assert ref.toy_gpt.load_weights()["n_heads"] == case.KIT_SIZE["n_heads"]
    assert (kit.STUBS / "toy_gpt_weights.npz").read_bytes() == (kit.SOLUTIONS / "toy_gpt_weights.npz").read_bytes()


def test_write_weights_reproduces_the_file(tmp_path: Path) -> None:
    for name in ("toy_gpt.py", "kv_cache.py"):
        (tmp_path / name).write_bytes((kit.SOLUTIONS / name).read_bytes())
    written = case.write_weights(tmp_path)
    with np.load(written) as fresh, np.load(kit.SOLUTIONS / "toy_gpt_weights.npz") as committed:
        assert sorted(fresh.files) == sorted(committed.files)
        for key in fresh.files:
            np.testing.assert_array_equal(fresh[key], committed[key], err_msg=key)


def test_numpy_model_is_the_reference() -> None:
    """The diagnosis's NumPy decoder, without a mistake, is the reference's gpt_forward (kit and other sizes)."""
    ref = _ref()
    other = case.numpy_weights(ref.toy_gpt.random_weights(20, 12, 3, 3, 9, seed=5))
    for weights, tokens in ((case.kit_weights(), case.TOKENS), (other, [4, 19, 0, 7, 7, 2, 11, 3, 1])):
        expected = ref.toy_gpt.gpt_forward(ref.toy_gpt.as_tensors(weights), tokens).numpy()
        np.testing.assert_allclose(gpt_mistakes.forward(weights, tokens), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        cases.expected("toy_gpt_forward"), gpt_mistakes.forward(case.kit_weights(), case.TOKENS), rtol=0, atol=1e-12
    )


def _excess(value: np.ndarray, right: np.ndarray) -> float:
    """How many times over the logits' tolerance ``value`` is from ``right`` at its worst entry."""
    return float(
        np.max(np.abs(value - right) / (gpt_checks.LOGITS["atol"] + gpt_checks.LOGITS["rtol"] * np.abs(right)))
    )


def test_tolerance_takes_float32_and_rejects_every_mistake() -> None:
    """A float32 run of the reference stays far inside the logits' tolerance; every known mistake lands far outside."""
    ref = _ref()
    right = cases.expected("toy_gpt_forward")
    float32 = (
        ref.toy_gpt.gpt_forward(
            ref.toy_gpt.as_tensors(case.kit_weights(), dtype=ref.toy_gpt.torch.float32), case.TOKENS
        )
        .double()
        .numpy()
    )
    assert _excess(float32, right) < 0.2
    for mistake, wrong in {**cases.wrong("toy_gpt_forward"), **cases.wrong("toy_gpt_cached")}.items():
        if wrong.shape == right.shape:
            assert _excess(wrong, right) > 5, mistake


def test_kit_generation_is_safe_and_varied() -> None:
    """The kit's greedy run has no near ties (float32 picks the same tokens) and is not one token repeated."""
    weights = case.kit_weights()
    assert gpt_mistakes.greedy_margin(weights, case.PROMPT, case.N_NEW) > 0.1
    tokens = cases.expected("toy_gpt_generate", 0)
    assert len(set(tokens.tolist())) >= 5 and len(case.PROMPT) + case.N_NEW - 1 <= case.KIT_SIZE["n_ctx"]


def test_untied_logits_of_another_shape_are_named() -> None:
    """With n_ctx != V, projecting with wpe gives [n, n_ctx]: the message says the shape; a name needs the call's twin
    (a value the grader only holds, with wrong answers it cannot compute again, names nothing: it could be chance)."""
    ref = _ref()
    weights = case.numpy_weights(ref.toy_gpt.random_weights(20, 12, 3, 1, 11, seed=3))
    tokens = [1, 2, 3, 4]
    wrong = gpt_mistakes.gpt_forward_variants(ref, weights, tokens)
    got = Got(tasks.step(STEP), "gpt_forward(weights, tokens)", wrong["gpt_output_untied"])
    assert wrong["gpt_output_untied"].shape == (4, 11)
    with pytest.raises(CheckFailed) as failed:
        gpt_checks.expect_logits(got, gpt_mistakes.forward(weights, tokens), wrong)
    assert failed.value.mistake is None and "shape (4, 20)" in failed.value.message


COUNTED = '''
import toy_gpt_impl


def gpt_forward(weights, tokens):
    return toy_gpt_impl.gpt_forward(weights, tokens)


def gpt_step(weights, token, position, cache):
    return toy_gpt_impl.gpt_step(weights, token, position, cache)


def new_cache(weights):
    return toy_gpt_impl.new_cache(weights)


def generate(weights, prompt, n_new, use_cache=True):
    """Uses the full pass for the first new token even with the cache."""
    tokens = list(prompt)
    logits = gpt_forward(weights, tokens)[-1]
    return [int(logits.argmax())] * n_new, logits.repeat(n_new, 1)
'''


def test_generate_probe_shows_the_path_taken_in_its_outcome(tmp_path: Path) -> None:
    """The probe counts nothing in the student's process: the model function the flag rules out raises while
    ``generate`` runs, so a generate that reaches it ends in ``WrongPath``; the function is put back afterwards."""
    for name in ("kv_cache.py", "toy_gpt_weights.npz"):
        (tmp_path / name).write_bytes((kit.SOLUTIONS / name).read_bytes())
    (tmp_path / "toy_gpt_impl.py").write_bytes((kit.SOLUTIONS / "toy_gpt.py").read_bytes())
    (tmp_path / "toy_gpt.py").write_text(textwrap.dedent(COUNTED), encoding="utf-8")
    weights = gpt_checks.send(case.kit_weights())
    with Sandbox(tmp_path) as sandbox:
        cached = sandbox.run_probe("toy_gpt_generate", "toy_gpt", weights, case.PROMPT, 3, True)
        plain = sandbox.run_probe("toy_gpt_generate", "toy_gpt", weights, case.PROMPT, 3, False)
        steps, lengths = sandbox.probe("toy_gpt_cached_steps", "toy_gpt", weights, [1, 2, 3])
    assert isinstance(cached, outcomes.Raised) and cached.raised_as(gpt_checks.WRONG_PATH)
    assert "gpt_forward" in cached.message
    assert isinstance(plain, outcomes.Returned)  # without the cache the full pass is the right path
    assert lengths == [[3, 3], [3, 3]] and len(steps) == 3  # gpt_forward is back: the cached steps still run
    np.testing.assert_allclose(np.stack(steps), gpt_mistakes.forward(case.kit_weights(), [1, 2, 3]), rtol=0, atol=1e-12)


def test_reference_full_marks_and_stubs_zero() -> None:
    result = kit.grade(kit.SOLUTIONS, steps=(STEP,)).step(STEP)
    assert result.earned == result.possible == tasks.step(STEP).points, [c.message for c in result.failed]
    result = kit.grade(kit.STUBS, steps=(STEP,)).step(STEP)
    assert result.earned == 0 and len(result.failed) == len(result.checks) == 12
    for check in result.checks:
        assert check.message.startswith(tasks.step(STEP).title + ":") and "NotImplementedError" in check.message, (
            check.message
        )
        assert not check.internal_error, check.message


def test_weights_cross_as_tensors() -> None:
    """The grader's weights arrive as a dict of tensors with an int n_heads."""
    sent = gpt_checks.send(case.kit_weights(), np.float32)
    assert isinstance(sent["wte"], AsTorch) and sent["wte"].array.dtype == np.float32 and sent["n_heads"] == 2
    assert set(sent["blocks"][0]) == set(case.BLOCK_KEYS)
