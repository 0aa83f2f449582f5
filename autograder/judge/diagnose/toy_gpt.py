"""Wrong ways to assemble the toy GPT, and what they return.

The wrong answers come from one small NumPy model of the decoder,
:func:`forward`, with a switch per mistake; without one it is the reference's
``gpt_forward`` (a kit test holds them equal to 1e-12). Weights are the dict of
``toy_gpt.py``'s docstring with NumPy arrays. A mistake of a shared piece
(LayerNorm, GELU, the attention) changes the logits of every check that runs
the model, so each check looks for all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autograder.judge.diagnose import AND, Mistake, parts

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "gpt_positions_after_first_block",
            "the position embeddings are added after the first block; GPT-2 adds them to the token "
            "embeddings before any block: x = wte[tokens] + wpe[:n]",
        ),
        Mistake(
            "gpt_output_untied",
            "the logits are projected with the position table wpe; GPT-2 ties the output projection to "
            "the token embeddings: logits = layer_norm(x, lnf_g, lnf_b) @ wte.T",
        ),
        Mistake(
            "gpt_post_norm",
            "the blocks are post-norm, x = layer_norm(x + sublayer(x)); GPT-2 is pre-norm: x = x + "
            "sublayer(layer_norm(x)), and one final LayerNorm after the last block",
        ),
        Mistake(
            "gpt_no_causal_mask",
            "the attention has no causal mask, so each token also sees the tokens after it; set the "
            "scores above the diagonal to -inf before the softmax",
        ),
        Mistake(
            "gelu_exact_erf",
            "GELU is the exact form 0.5 x (1 + erf(x / sqrt(2))); GPT-2 uses the tanh approximation "
            "0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), up to 5e-4 away from it",
        ),
        Mistake(
            "layernorm_gain_bias_ignored",
            "LayerNorm leaves out its gain and bias; return g * (x - mean) / sqrt(var + eps) + b",
        ),
        Mistake(
            "attention_scaled_by_width",
            "the scores are divided by sqrt(d_model); each head divides by the square root of its own "
            "width, sqrt(d_head) = sqrt(d_model / n_heads)",
        ),
        Mistake(
            "attention_scaled_by_heads",
            "the scores are divided by sqrt(n_heads); each head divides by the square root of its own width, "
            "sqrt(d_head) = sqrt(d_model / n_heads)",
        ),
        Mistake(
            "heads_split_without_transpose",
            "the heads are split by reshaping (n, d) straight to (n_heads, n, d_head), which mixes tokens and "
            "features; reshape to (n, n_heads, d_head), then move the head axis first",
        ),
        Mistake(
            "heads_merged_without_transpose",
            "the heads' outputs (n_heads, n, d_head) are reshaped straight to (n, d), which mixes tokens; move "
            "the head axis next to the features first, so each row is [head 1 | head 2 | ...]",
        ),
        Mistake(
            "gpt_step_no_position",
            "gpt_step leaves out the position embedding; the new token enters as wte[token] + "
            "wpe[position], as in gpt_forward",
        ),
        Mistake(
            "generate_cache_unused",
            "generate(use_cache=True) does not run the new tokens through gpt_step; with the cache, "
            "run the prompt through gpt_step token by token, then each new token alone (gpt_forward "
            "over the prefix is the way without the cache)",
        ),
    )
}

Weights = dict[str, Any]
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf = np.vectorize(math.erf, otypes=[float])

# Mistakes of the whole forward pass (gpt_forward), and those only a cached step can make. A LayerNorm
# without eps is left out here: the model's rows have a variance near 1, so eps = 1e-5 hardly shows in the
# logits (the layer_norm check, with a row of tiny variance, names it).
FORWARD_MISTAKES = (
    "gpt_positions_after_first_block",
    "gpt_output_untied",
    "gpt_post_norm",
    "gpt_no_causal_mask",
    "gelu_exact_erf",
    "layernorm_gain_bias_ignored",
    "layernorm_sample_variance",
    "missing_scale",
    "attention_scaled_by_width",
    "attention_scaled_by_heads",
    "heads_split_without_transpose",
    "heads_merged_without_transpose",
    "multi_head_missing_wo",
)
STEP_MISTAKES = ("attend_before_append", "gpt_step_no_position")


def layer_norm(
    x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5, mistake: str | None = None
) -> np.ndarray:
    """LayerNorm over the last axis with gain and bias, or what ``mistake`` makes of it."""
    centred = x - x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1 if mistake == "layernorm_sample_variance" else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = centred / np.sqrt(var + (0.0 if mistake == "layernorm_no_eps" else eps))
    return normed if mistake == "layernorm_gain_bias_ignored" else g * normed + b


def gelu(x: np.ndarray, mistake: str | None = None) -> np.ndarray:
    """GPT-2's tanh GELU, or the exact erf one for ``gelu_exact_erf``."""
    if mistake == "gelu_exact_erf":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def causal_self_attention(x: np.ndarray, block: Weights, n_heads: int, mistake: str | None = None) -> np.ndarray:
    """Causal multi-head self-attention of ``x [n, d]`` with ``W_O``, or what ``mistake`` makes of it.

    ``attend_before_append`` is what a cache that attends before appending
    gives, token by token: each token sees only the tokens before it, and the
    first one, facing an empty cache, gets a zero output.
    """
    n, d = x.shape
    d_head = d // n_heads
    made = set(parts(mistake)) if mistake else set()

    def split(W: np.ndarray) -> np.ndarray:  # (n, d) -> (n_heads, n, d_head)
        if "heads_split_without_transpose" in made:
            return (x @ W).reshape(n_heads, n, d_head)
        return (x @ W).reshape(n, n_heads, d_head).transpose(1, 0, 2)

    q, k, v = split(block["W_Q"]), split(block["W_K"]), split(block["W_V"])
    scale = math.sqrt(d_head)
    for name, divisor in (
        ("missing_scale", 1.0),
        ("attention_scaled_by_width", math.sqrt(d)),
        ("attention_scaled_by_heads", math.sqrt(n_heads)),
    ):
        if name in made:
            scale = divisor
    scores = q @ k.transpose(0, 2, 1) / scale  # (n_heads, n, n)
    allowed = np.tril(np.ones((n, n), dtype=bool), k=-1 if "attend_before_append" in made else 0)
    if "gpt_no_causal_mask" in made:
        allowed = np.ones((n, n), dtype=bool)
    scores = np.where(allowed, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = np.nan_to_num(weights / weights.sum(axis=-1, keepdims=True))  # a row with no key: zeros
    heads = weights @ v  # (n_heads, n, d_head)
    if "heads_merged_without_transpose" in made:
        out = heads.reshape(n, d)
    else:
        out = heads.transpose(1, 0, 2).reshape(n, d)  # (n, d) = [head 1 | head 2 | ...]
    return out if "multi_head_missing_wo" in made else out @ block["W_O"]


def forward(weights: Weights, tokens: Sequence[int], mistake: str | None = None) -> np.ndarray:
    """The decoder's logits ``[n, V]`` for ``tokens`` (float64), or what ``mistake`` makes of them.

    ``gpt_output_untied`` projects with ``wpe`` (shape ``[n, n_ctx]``).
    """
    tokens = np.asarray(tokens, dtype=int)
    wte, wpe, n_heads = (
        np.asarray(weights["wte"], dtype=float),
        np.asarray(weights["wpe"], dtype=float),
        int(weights["n_heads"]),
    )
    n = len(tokens)
    positions = np.zeros_like(wpe[:n]) if mistake == "gpt_step_no_position" else wpe[:n]

    def norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        return layer_norm(x, np.asarray(g, dtype=float), np.asarray(b, dtype=float), mistake=mistake)

    def attend(x: np.ndarray, block: Weights) -> np.ndarray:
        return causal_self_attention(x, block, n_heads, mistake)

    def mlp(x: np.ndarray, block: Weights) -> np.ndarray:
        return gelu(x @ block["W1"] + block["b1"], mistake) @ block["W2"] + block["b2"]

    x = wte[tokens] + (0.0 if mistake == "gpt_positions_after_first_block" else positions)
    for index, raw in enumerate(weights["blocks"]):
        block = {key: np.asarray(value, dtype=float) for key, value in raw.items()}
        if mistake == "gpt_post_norm":
            x = norm(x + attend(x, block), block["ln1_g"], block["ln1_b"])
            x = norm(x + mlp(x, block), block["ln2_g"], block["ln2_b"])
        else:
            x = x + attend(norm(x, block["ln1_g"], block["ln1_b"]), block)
            x = x + mlp(norm(x, block["ln2_g"], block["ln2_b"]), block)
        if index == 0 and mistake == "gpt_positions_after_first_block":
            x = x + positions
    table = wpe if mistake == "gpt_output_untied" else wte
    return norm(x, weights["lnf_g"], weights["lnf_b"]) @ table.T


def layer_norm_variants(ref, x: np.ndarray, g: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``layer_norm(x, g, b)``."""
    x, g, b = (np.asarray(a, dtype=float) for a in (x, g, b))
    return {
        m: layer_norm(x, g, b, mistake=m)
        for m in ("layernorm_gain_bias_ignored", "layernorm_sample_variance", "layernorm_no_eps")
    }


def gelu_variants(ref, x: np.ndarray) -> dict[str, np.ndarray]:
    """What each mistake returns for ``gelu(x)``."""
    return {"gelu_exact_erf": gelu(np.asarray(x, dtype=float), "gelu_exact_erf")}


def attention_variants(ref, x: np.ndarray, block: Weights, n_heads: int) -> dict[str, np.ndarray]:
    """What each mistake returns for ``causal_self_attention(x, block, n_heads)``."""
    x, block = np.asarray(x, dtype=float), {key: np.asarray(value, dtype=float) for key, value in block.items()}
    mistakes = (
        "gpt_no_causal_mask",
        "missing_scale",
        "attention_scaled_by_width",
        "attention_scaled_by_heads",
        "heads_split_without_transpose",
        "heads_merged_without_transpose",
        "multi_head_missing_wo",
    )
    singles = {m: causal_self_attention(x, block, n_heads, m) for m in mistakes}
    pairs = {
        f"{a}{AND}{b}": causal_self_attention(x, block, n_heads, f"{a}{AND}{b}")
        for i, a in enumerate(mistakes)
        for b in mistakes[i + 1 :]
    }
    return {**singles, **_new(pairs, singles, causal_self_attention(x, block, n_heads))}


def _new(found: dict[str, np.ndarray], *known: dict[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
    """The answers of ``found`` that differ from every known one (and from each other; the first of equals kept)."""
    kept: dict[str, np.ndarray] = {}
    others = [v for k in known for v in (k.values() if isinstance(k, dict) else [k])]
    for key, value in found.items():
        earlier = [*others, *kept.values()]
        if all(np.shape(value) != np.shape(o) or not np.allclose(value, o, atol=1e-12) for o in earlier):
            kept[key] = value
    return kept


def gpt_forward_variants(ref, weights: Weights, tokens: Sequence[int]) -> dict[str, np.ndarray]:
    """What each mistake returns for ``gpt_forward(weights, tokens)``."""
    return {mistake: forward(weights, tokens, mistake) for mistake in FORWARD_MISTAKES}


def cached_step_variants(ref, weights: Weights, tokens: Sequence[int]) -> dict[str, np.ndarray]:
    """What each mistake gives for ``gpt_step`` run token by token (row ``t`` = the logits after token ``t``)."""
    found = {mistake: forward(weights, tokens, mistake) for mistake in STEP_MISTAKES}
    found.update(gpt_forward_variants(ref, weights, tokens))
    del found["gpt_no_causal_mask"]  # one token at a time cannot see the future
    return found


def greedy(
    logits_of: Callable[[list[int]], np.ndarray], prompt: Sequence[int], n_new: int
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy generation with ``logits_of(tokens) -> [n, V]``: the ``n_new`` tokens and the ``[n_new, V]`` logits
    they came from."""
    tokens, rows = [int(t) for t in prompt], []
    for _ in range(n_new):
        row = logits_of(tokens)[-1]
        tokens.append(int(np.argmax(row)))
        rows.append(row)
    return np.asarray(tokens[len(prompt) :]), np.asarray(rows)


def generate_variants(
    ref, weights: Weights, prompt: Sequence[int], n_new: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What each mistake of the model gives for ``generate(weights, prompt, n_new)``: ``(tokens, logits)``.

    Left out: ``gpt_no_causal_mask`` (the last position sees every token anyway,
    so greedy generation cannot show it), and ``gpt_output_untied`` when its
    argmax picks a position beyond the vocabulary (``n_ctx > V``: the next step
    has no such token).
    """
    found = {}
    for mistake in (*FORWARD_MISTAKES, *STEP_MISTAKES):
        if mistake != "gpt_no_causal_mask":
            try:
                found[mistake] = greedy(lambda tokens, m=mistake: forward(weights, tokens, m), prompt, n_new)
            except IndexError:
                continue
    return found


def greedy_margin(weights: Weights, prompt: Sequence[int], n_new: int) -> float:
    """The smallest gap between the best and the second-best logit over a greedy run: how safe its argmaxes are."""
    _, logits = greedy(lambda tokens: forward(weights, tokens), prompt, n_new)
    top2 = np.sort(logits, axis=-1)[:, -2:]
    return float(np.min(top2[:, 1] - top2[:, 0]))
