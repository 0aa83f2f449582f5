"""Step 12, a toy GPT from your own pieces (handout section `toy_gpt`), in PyTorch.

A GPT-2 style decoder assembled from the lab's pieces: token embeddings plus
learned position embeddings, then blocks that each add causal multi-head
self-attention and a GELU feed-forward network to the residual stream, both
reading a LayerNorm of it (pre-norm), then a final LayerNorm and the logits,
projected with the token embeddings themselves (tied input and output
embeddings):

    x = wte[tokens] + wpe[:n]
    for each block:
        x = x + causal_self_attention(layer_norm(x, ln1_g, ln1_b), block, n_heads)
        x = x + mlp(layer_norm(x, ln2_g, ln2_b), block)
    logits = layer_norm(x, lnf_g, lnf_b) @ wte.T

The kit's toy model (``toy_gpt_weights.npz``, read by :func:`load_weights`)
has 2 blocks of 2 heads, width 8, a vocabulary of 16 tokens and a context of 16
positions. Generation is greedy: the next token is the argmax of the last
logits. With a KV cache each step runs only the newest token through the
blocks (:func:`gpt_step`, one :class:`kv_cache.KVCache` per layer and head);
without one it reruns the whole prefix (:func:`gpt_forward`). Both must give
the same tokens. The timing step times this same decoder at a larger size.

The weights are a dict (``d`` = width, ``V`` = vocabulary)::

    {"wte": [V, d], "wpe": [n_ctx, d], "n_heads": int,
     "blocks": [{"ln1_g": [d], "ln1_b": [d],
                 "W_Q": [d, d], "W_K": [d, d], "W_V": [d, d], "W_O": [d, d],
                 "ln2_g": [d], "ln2_b": [d],
                 "W1": [d, 4d], "b1": [4d], "W2": [4d, d], "b2": [d]}, ...],
     "lnf_g": [d], "lnf_b": [d]}

Head ``i`` owns columns ``i * d_head : (i + 1) * d_head`` of ``W_Q``, ``W_K``
and ``W_V`` (``d_head = d / n_heads``), and the heads' outputs are put side by
side, ``[head 1 | head 2 | ...]``, before ``W_O``, as in step 9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from kv_cache import KVCache, decode_step
from torch import Tensor

Weights = dict[str, Any]
WEIGHTS_FILE = Path(__file__).with_name("toy_gpt_weights.npz")
BLOCK_KEYS = ("ln1_g", "ln1_b", "W_Q", "W_K", "W_V", "W_O", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")


def random_weights(
    n_vocab: int,
    d_model: int,
    n_heads: int,
    n_layers: int,
    n_ctx: int,
    seed: int,
    device: str | torch.device | None = None,
    dtype: torch.dtype = torch.float64,
) -> Weights:
    """Seeded random weights of a GPT-2 style decoder (the layout of the module docstring).

    GPT-2's initialisation, sized for a narrow model: matrices are normal with
    standard deviation ``1 / sqrt(fan_in)``, which keeps the signals of a
    width-8 model of order 1 (GPT-2's 0.02 at width 768 is about
    ``0.55 / sqrt(768)``), and the residual projections ``W_O`` and ``W2`` are
    scaled down by ``1 / sqrt(2 n_layers)`` as in GPT-2. Token embeddings have
    unit size and position embeddings twice that: with tied embeddings and
    small blocks an untrained model keeps predicting the token it just read,
    and the positions are what move greedy decoding on. The LayerNorm gains
    and all biases are drawn near GPT-2's 1 and 0 instead of at them, so that
    a forgotten gain or bias changes the logits. The position table is drawn
    last, so the other weights do not depend on ``n_ctx``.

    Args:
        n_vocab: vocabulary size ``V``.
        d_model: width ``d`` (a multiple of ``n_heads``).
        n_heads: attention heads per block.
        n_layers: blocks.
        n_ctx: positions of the position table (the longest sequence).
        seed: seed of the random generator; the same seed gives the same weights.
        device: where the tensors live (None: the CPU).
        dtype: their floating-point type.

    Returns:
        The weights dict.
    """
    if d_model % n_heads:
        raise ValueError(f"d_model = {d_model} is not a multiple of n_heads = {n_heads}")
    rng = np.random.default_rng(seed)
    residual = 1.0 / math.sqrt(2 * n_layers)

    def matrix(rows: int, columns: int, scale: float = 1.0) -> np.ndarray:
        return rng.normal(size=(rows, columns)) * scale / math.sqrt(rows)

    def near(value: float, size: int) -> np.ndarray:
        return value + 0.1 * rng.normal(size=size)

    d, d_ff = d_model, 4 * d_model
    weights: Weights = {"wte": rng.normal(size=(n_vocab, d)), "n_heads": int(n_heads), "blocks": []}
    for _ in range(n_layers):
        block = {
            "ln1_g": near(1.0, d),
            "ln1_b": near(0.0, d),
            "W_Q": matrix(d, d),
            "W_K": matrix(d, d),
            "W_V": matrix(d, d),
            "W_O": matrix(d, d, residual),
        }
        block.update(
            {
                "ln2_g": near(1.0, d),
                "ln2_b": near(0.0, d),
                "W1": matrix(d, d_ff),
                "b1": near(0.0, d_ff),
                "W2": matrix(d_ff, d, residual),
                "b2": near(0.0, d),
            }
        )
        weights["blocks"].append(block)
    weights.update({"lnf_g": near(1.0, d), "lnf_b": near(0.0, d), "wpe": 2.0 * rng.normal(size=(n_ctx, d))})
    return as_tensors(weights, device, dtype)


def as_tensors(
    weights: Weights, device: str | torch.device | None = None, dtype: torch.dtype = torch.float64
) -> Weights:
    """The same weights with every array (NumPy or torch) as a tensor of ``dtype`` on ``device``.

    Args:
        weights: a weights dict whose arrays may be NumPy arrays.
        device: where the tensors live (None: the CPU).
        dtype: their floating-point type.

    Returns:
        A new weights dict.
    """

    def tensor(array: Any) -> Tensor:
        if isinstance(array, Tensor):
            return array.to(device=device, dtype=dtype)
        return torch.as_tensor(np.asarray(array, dtype=np.float64)).to(device=device, dtype=dtype)

    blocks = [{key: tensor(block[key]) for key in BLOCK_KEYS} for block in weights["blocks"]]
    return {
        **{key: tensor(weights[key]) for key in ("wte", "wpe", "lnf_g", "lnf_b")},
        "n_heads": int(weights["n_heads"]),
        "blocks": blocks,
    }


def save_weights(weights: Weights, path: str | Path = WEIGHTS_FILE) -> None:
    """Write ``weights`` to an ``.npz`` file (float64; blocks as ``blocks.<i>.<name>``).

    Args:
        weights: the weights dict.
        path: the file to write.
    """
    arrays = {key: np.asarray(weights[key].cpu(), dtype=np.float64) for key in ("wte", "wpe", "lnf_g", "lnf_b")}
    arrays["n_heads"] = np.asarray(weights["n_heads"], dtype=np.int64)
    for index, block in enumerate(weights["blocks"]):
        arrays.update({f"blocks.{index}.{key}": np.asarray(block[key].cpu(), dtype=np.float64) for key in BLOCK_KEYS})
    np.savez(path, **arrays)


def load_weights(
    path: str | Path = WEIGHTS_FILE, device: str | torch.device | None = None, dtype: torch.dtype = torch.float64
) -> Weights:
    """The weights saved in ``path`` (by default the kit's toy model, next to this file).

    Args:
        path: an ``.npz`` file written by :func:`save_weights`.
        device: where the tensors live (None: the CPU).
        dtype: their floating-point type.

    Returns:
        The weights dict.
    """
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    n_layers = len({key.split(".")[1] for key in arrays if key.startswith("blocks.")})
    blocks = [{key: arrays[f"blocks.{index}.{key}"] for key in BLOCK_KEYS} for index in range(n_layers)]
    return as_tensors({**arrays, "blocks": blocks}, device, dtype)


def layer_norm(x: Tensor, g: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
    """LayerNorm over the last axis, with a gain and a bias.

    Args:
        x: ``[..., d]``.
        g: the gain (gamma), ``[d]``.
        b: the bias (beta), ``[d]``.
        eps: added to the variance inside the square root.

    Returns:
        ``g * (x - mean) / sqrt(var + eps) + b`` row by row, with the population
        variance (divide by ``d``); same shape as ``x``.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task layer_norm: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def gelu(x: Tensor) -> Tensor:
    """GPT-2's GELU, the tanh approximation: ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``.

    Args:
        x: any shape.

    Returns:
        Same shape as ``x``.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task gelu: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def causal_self_attention(x: Tensor, block: dict[str, Tensor], n_heads: int) -> Tensor:
    """Causal multi-head self-attention of one block, its output projection included.

    Each head projects the tokens with its columns of ``W_Q``, ``W_K``, ``W_V``,
    divides its scores by ``sqrt(d_head)``, masks the future (token ``i`` sees
    tokens ``0..i``) and takes the softmax over the keys; the heads' outputs
    side by side, ``[head 1 | head 2 | ...]``, are multiplied by ``W_O``.

    Args:
        x: the (already normalised) tokens, ``[n, d]``.
        block: one block of the weights dict (uses ``W_Q``, ``W_K``, ``W_V``, ``W_O``).
        n_heads: heads; ``d_head = d / n_heads``.

    Returns:
        ``[n, d]``.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task causal_self_attention: not implemented yet "
        "(handout: handouts/lab07_attention.md#toy_gpt)"
    )


def mlp(x: Tensor, block: dict[str, Tensor]) -> Tensor:
    """The block's feed-forward network ``gelu(x W1 + b1) W2 + b2``.

    Args:
        x: the (already normalised) tokens, ``[..., d]``.
        block: one block of the weights dict (uses ``W1``, ``b1``, ``W2``, ``b2``).

    Returns:
        ``[..., d]``.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task mlp: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def gpt_forward(weights: Weights, tokens: Sequence[int] | Tensor) -> Tensor:
    """The logits of every position: the whole sequence through the decoder at once.

    Args:
        weights: the weights dict (see the module docstring).
        tokens: token ids ``[n]`` (a list of ints or an integer tensor), ``n <= n_ctx``.

    Returns:
        ``[n, V]``: row ``i`` scores the token that follows ``tokens[: i + 1]``.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task gpt_forward: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def new_cache(weights: Weights) -> list[list[KVCache]]:
    """An empty KV cache for the decoder: one :class:`KVCache` per block and head.

    Args:
        weights: the weights dict (its number of blocks and heads).

    Returns:
        ``cache[layer][head]``, every cache empty.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task new_cache: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def gpt_step(weights: Weights, token: int, position: int, cache: list[list[KVCache]]) -> Tensor:
    """One new token through the decoder with a KV cache: the logits that follow it.

    Each head of each block runs :func:`kv_cache.decode_step` on the token's
    normalised vector with its own columns of ``W_Q``, ``W_K``, ``W_V`` and its
    own cache, so the token attends over every earlier token and itself.

    Args:
        weights: the weights dict.
        token: the new token's id.
        position: its position (the number of tokens before it).
        cache: from :func:`new_cache`, holding the ``position`` earlier tokens; every cache grows by one.

    Returns:
        ``[V]``: equal (to rounding) to ``gpt_forward(weights, tokens)[position]``
        for the tokens seen so far.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task gpt_step: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )


def generate(weights: Weights, prompt: Sequence[int], n_new: int, use_cache: bool = True) -> tuple[list[int], Tensor]:
    """Greedy generation: ``n_new`` tokens after ``prompt``, each the argmax of the logits before it.

    With the cache, the prompt fills a fresh cache token by token through
    :func:`gpt_step` (prefill), then each new token runs alone (decode).
    Without it, every step runs :func:`gpt_forward` over the whole prefix and
    keeps the last row. Both give the same tokens.

    Args:
        weights: the weights dict.
        prompt: the prompt's token ids (at least one).
        n_new: tokens to generate; ``len(prompt) + n_new - 1 <= n_ctx``.
        use_cache: decode with a KV cache (:func:`gpt_step`) or without (:func:`gpt_forward`).

    Returns:
        ``(tokens, logits)``: the ``n_new`` generated ids, and the ``[n_new, V]``
        logits each was chosen from.
    """
    raise NotImplementedError(
        "Lab 7 step 'toy_gpt', task generate: not implemented yet (handout: handouts/lab07_attention.md#toy_gpt)"
    )
