"""Step 12, timing attention (handout section `timing`), in PyTorch.

Attention's cost grows with the square of the sequence length ``n``: the score
matrix ``Q K^T`` has ``n^2`` entries. Measured times show it as the slope of
``log t`` against ``log n``: 1 for linear, 2 for quadratic. To measure
honestly: warm up first (the first call pays for allocation and kernel
selection), take the median of several repeats, synchronise a GPU before
reading the clock (its kernels run asynchronously), and on a CPU pin one
thread (with every core, a busy neighbour makes single times hundreds of
times slower).

Decoding shows the same cost from the other side. Without a cache, token
``t`` recomputes the whole prefix, so its latency grows with ``t``; with a
KV cache each token costs about the same. The decoder is fixed by the kit
(:func:`decoder_weights`), so everyone's numbers mean the same thing.

Works on a GPU when one is present (``device=None``), on the CPU otherwise.
"""

from __future__ import annotations

import math
import statistics
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike
from torch import Tensor

# The kit's decoder: 2 layers of 4 heads, d_model 64, greedy decoding from START_TOKEN.
N_LAYERS, N_HEADS, D_MODEL, VOCAB, START_TOKEN, SEED = 2, 4, 64, 256, 0, 16
WARMUP_TOKENS = 8  # generated and thrown away before the timed run


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device to measure on: ``device`` if given, else CUDA when available, else the CPU.

    Args:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``, or None.

    Returns:
        A ``torch.device``.
    """
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def decoder_weights(d_model: int = D_MODEL, n_positions: int = 1024, device: str | torch.device | None = None) -> dict[str, Any]:
    """The kit's fixed decoder (the same random weights for everyone, float32).

    Pre-norm blocks: ``x = x + attention(layer_norm(x)) @ W_O`` with ``N_HEADS``
    causal heads of width ``d_model / N_HEADS``, then
    ``x = x + relu(layer_norm(x) @ W_1) @ W_2``; the input is the token's
    embedding plus the sinusoidal encoding of its position; the logits are
    ``layer_norm(x) @ unembedding``. Layer norms have no weights.

    Args:
        d_model: model width (a multiple of ``N_HEADS``).
        n_positions: how many positions the encoding table covers.
        device: where the tensors live (see :func:`resolve_device`).

    Returns:
        ``{"embedding": [VOCAB, d_model], "positions": [n_positions, d_model],
        "layers": [{"W_Q", "W_K", "W_V", "W_O": [d_model, d_model],
        "W_1": [d_model, 4 d_model], "W_2": [4 d_model, d_model]}, ...],
        "unembedding": [d_model, VOCAB]}``.
    """
    generator = torch.Generator().manual_seed(SEED)

    def normal(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=generator) / math.sqrt(shape[0])

    p = torch.arange(n_positions, dtype=torch.float64)[:, None]  # (n_positions, 1)
    angle = p / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (n_positions, d_model / 2)
    positions = torch.stack([angle.sin(), angle.cos()], dim=-1).reshape(n_positions, d_model).float()  # interleaved sin, cos
    layers = [
        {"W_Q": normal(d_model, d_model), "W_K": normal(d_model, d_model), "W_V": normal(d_model, d_model), "W_O": normal(d_model, d_model), "W_1": normal(d_model, 4 * d_model), "W_2": normal(4 * d_model, d_model)}
        for _ in range(N_LAYERS)
    ]
    embedding, unembedding = torch.randn(VOCAB, d_model, generator=generator), normal(d_model, VOCAB)
    on = resolve_device(device)
    layers = [{name: w.to(on) for name, w in layer.items()} for layer in layers]
    return {"embedding": embedding.to(on), "positions": positions.to(on), "layers": layers, "unembedding": unembedding.to(on)}


@contextmanager
def single_thread(device: torch.device) -> Iterator[None]:
    """While inside, torch uses one CPU thread (on a CPU device); the old setting comes back afterwards.

    Args:
        device: the device being measured; nothing changes for a GPU.

    Yields:
        Nothing; measure inside the ``with`` block.
    """
    # BEGIN SOLUTION
    before = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
    # END SOLUTION


def timed(run: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    """Run ``run()`` once and measure it: CUDA events on a GPU (synchronised), the thread's CPU time on a CPU.

    With one thread, the CPU time of the calling thread is the time of the work
    itself (page faults included), and a busy neighbour on a shared machine
    does not inflate it the way it inflates the wall clock.

    Args:
        run: the work to time, called with no arguments.
        device: the device the work runs on.

    Returns:
        ``(result, seconds)``: what ``run()`` returned and how long it took.
    """
    # BEGIN SOLUTION
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(device)  # earlier work must not be counted
        start.record()
        result = run()
        end.record()
        end.synchronize()  # the kernels run asynchronously: wait for them
        return result, start.elapsed_time(end) / 1e3  # ms -> s
    begin = time.thread_time()
    result = run()
    return result, time.thread_time() - begin
    # END SOLUTION


def naive_attention(Q: Tensor, K: Tensor, V: Tensor, causal: bool = False) -> Tensor:
    """``softmax(Q K^T / sqrt(d_k)) V`` with the whole score matrix in memory.

    Args:
        Q: queries ``[..., n_q, d_k]``.
        K: keys ``[..., n_k, d_k]``.
        V: values ``[..., n_k, d_v]``.
        causal: query ``i`` may see key ``j`` only when ``j <= i + (n_k - n_q)``.

    Returns:
        The outputs ``[..., n_q, d_v]``.
    """
    # BEGIN SOLUTION
    S = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])  # (..., n_q, n_k): n^2 numbers
    if causal:
        n_q, n_k = S.shape[-2:]
        allowed = torch.ones(n_q, n_k, dtype=torch.bool, device=S.device).tril(n_k - n_q)  # (n_q, n_k)
        S = S.masked_fill(~allowed, float("-inf"))
    return torch.softmax(S, dim=-1) @ V  # (..., n_q, d_v)
    # END SOLUTION


def time_attention(
    n: int, d: int = 64, device: str | torch.device | None = None, repeats: int = 5, *, kind: str = "naive", causal: bool = False, return_times: bool = False
) -> float | list[float]:
    """Median seconds of one forward pass of one attention head on ``n`` random tokens (float32).

    Args:
        n: sequence length (queries = keys = ``n``).
        d: head width ``d_k = d_v``.
        device: where to measure (see :func:`resolve_device`).
        repeats: timed runs after one untimed warm-up run.
        kind: ``"naive"`` (:func:`naive_attention`) or ``"sdpa"``
            (``torch.nn.functional.scaled_dot_product_attention``).
        causal: use the causal mask.
        return_times: return every repeat's seconds instead of their median.

    Returns:
        The median seconds (or the list of ``repeats`` seconds).
    """
    # BEGIN SOLUTION
    if kind not in ("naive", "sdpa"):
        raise ValueError(f"kind must be 'naive' or 'sdpa', got {kind!r}")
    target = resolve_device(device)
    generator = torch.Generator().manual_seed(n)
    Q, K, V = (torch.randn(1, 1, n, d, generator=generator).to(target) for _ in range(3))  # (1, 1, n, d) each

    def forward() -> Tensor:
        if kind == "naive":
            return naive_attention(Q, K, V, causal)
        return F.scaled_dot_product_attention(Q, K, V, is_causal=causal)

    with torch.inference_mode(), single_thread(target):
        forward()  # warm-up: allocations, kernel choice
        seconds = [timed(forward, target)[1] for _ in range(repeats)]
    return seconds if return_times else statistics.median(seconds)
    # END SOLUTION


def loglog_slope(ns: ArrayLike, seconds: ArrayLike) -> float:
    """The least-squares slope of ``log t`` against ``log n``: the exponent ``k`` of ``t ~ n^k``.

    Args:
        ns: sizes (at least two distinct, all positive).
        seconds: the measured times, one per size (all positive).

    Returns:
        The fitted slope.

    Example:
        >>> loglog_slope([1, 2, 4], [1.0, 4.0, 16.0])
        2.0
    """
    # BEGIN SOLUTION
    log_n, log_t = np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(seconds, dtype=float))
    slope, _ = np.polyfit(log_n, log_t, 1)
    return float(slope)
    # END SOLUTION


def decoder_logits(weights: dict[str, Any], tokens: Tensor) -> Tensor:
    """Without a cache: run the decoder over every token so far; the logits of the next token.

    Args:
        weights: from :func:`decoder_weights`.
        tokens: token ids so far ``[t]`` (position ``i`` holds token ``i``).

    Returns:
        The logits ``[VOCAB]`` at the last position.
    """
    # BEGIN SOLUTION
    t, d_model = tokens.shape[0], weights["embedding"].shape[1]
    x = weights["embedding"][tokens] + weights["positions"][:t]  # (t, d_model)
    for layer in weights["layers"]:
        h = F.layer_norm(x, (d_model,))
        q, k, v = (_heads(h @ layer[w]) for w in ("W_Q", "W_K", "W_V"))  # (N_HEADS, t, d_head) each
        x = x + _merge(naive_attention(q, k, v, causal=True)) @ layer["W_O"]  # (t, d_model)
        x = x + F.relu(F.layer_norm(x, (d_model,)) @ layer["W_1"]) @ layer["W_2"]
    return F.layer_norm(x[-1], (d_model,)) @ weights["unembedding"]  # (VOCAB,)
    # END SOLUTION


def decoder_step(weights: dict[str, Any], token: int, position: int, cache: list[list[Tensor]]) -> Tensor:
    """With a KV cache: run the decoder on one new token; the logits of the next token.

    Args:
        weights: from :func:`decoder_weights`.
        token: the new token's id.
        position: its position (the number of tokens before it).
        cache: one ``[keys, values]`` pair per layer, each ``[N_HEADS, position, d_head]``
            (empty lists before the first token); the new token's key and value are appended.

    Returns:
        The logits ``[VOCAB]`` of the next token.
    """
    # BEGIN SOLUTION
    d_model = weights["embedding"].shape[1]
    x = (weights["embedding"][token] + weights["positions"][position])[None, :]  # (1, d_model)
    for layer, kv in zip(weights["layers"], cache):
        h = F.layer_norm(x, (d_model,))
        q, k, v = (_heads(h @ layer[w]) for w in ("W_Q", "W_K", "W_V"))  # (N_HEADS, 1, d_head) each
        kv[:] = [k, v] if not kv else [torch.cat([kv[0], k], dim=-2), torch.cat([kv[1], v], dim=-2)]  # append first
        x = x + _merge(naive_attention(q, kv[0], kv[1])) @ layer["W_O"]  # the newest token sees every cached key
        x = x + F.relu(F.layer_norm(x, (d_model,)) @ layer["W_1"]) @ layer["W_2"]
    return F.layer_norm(x[0], (d_model,)) @ weights["unembedding"]  # (VOCAB,)
    # END SOLUTION


def _heads(x: Tensor) -> Tensor:
    """``[t, d_model]`` -> ``[N_HEADS, t, d_model / N_HEADS]``."""
    return x.reshape(x.shape[0], N_HEADS, -1).transpose(0, 1)


def _merge(x: Tensor) -> Tensor:
    """``[N_HEADS, t, d_head]`` -> ``[t, N_HEADS * d_head]`` (heads side by side)."""
    return x.transpose(0, 1).reshape(x.shape[1], -1)


def time_decoding(
    n_tokens: int = 512, d_model: int = 64, use_cache: bool = True, device: str | torch.device | None = None, *, return_tokens: bool = False
) -> list[float] | tuple[list[float], list[int]]:
    """Per-token seconds of greedily generating ``n_tokens`` tokens with the kit's decoder.

    Generation starts from ``START_TOKEN`` at position 0; each new token is the
    argmax of the logits. ``WARMUP_TOKENS`` tokens are generated untimed first.

    Args:
        n_tokens: tokens to generate (and time).
        d_model: decoder width.
        use_cache: :func:`decoder_step` with a KV cache, else :func:`decoder_logits` over the whole prefix.
        device: where to measure (see :func:`resolve_device`).
        return_tokens: also return the generated token ids.

    Returns:
        The ``n_tokens`` seconds, one per generated token (and, with
        ``return_tokens``, the ``n_tokens`` generated ids).
    """
    # BEGIN SOLUTION
    target = resolve_device(device)
    weights = decoder_weights(d_model, n_positions=n_tokens + 1, device=target)

    def generate(count: int) -> tuple[list[float], list[int]]:
        tokens, seconds = [START_TOKEN], []
        cache: list[list[Tensor]] = [[] for _ in weights["layers"]]
        for _ in range(count):
            if use_cache:
                step = lambda: int(decoder_step(weights, tokens[-1], len(tokens) - 1, cache).argmax())  # noqa: E731
            else:
                step = lambda: int(decoder_logits(weights, torch.tensor(tokens, device=target)).argmax())  # noqa: E731
            token, elapsed = timed(step, target)
            tokens.append(token)
            seconds.append(elapsed)
        return seconds, tokens[1:]

    with torch.inference_mode(), single_thread(target):
        generate(min(WARMUP_TOKENS, n_tokens))
        seconds, generated = generate(n_tokens)
    return (seconds, generated) if return_tokens else seconds
    # END SOLUTION


def peak_memory(n: int, d: int = 64, device: str | torch.device | None = None, *, kind: str = "naive") -> dict[str, Any]:
    """Peak memory of one forward pass of one attention head on ``n`` tokens (float32).

    On a GPU: the CUDA allocator's peak allocated and reserved bytes above what
    was in use before. On a CPU: the peak of the bytes torch's allocator held
    during the pass, summed from the profiler's allocation records (there is no
    reserved pool; ``reserved`` is None).

    Args:
        n: sequence length.
        d: head width.
        device: where to measure (see :func:`resolve_device`).
        kind: ``"naive"`` or ``"sdpa"``, as in :func:`time_attention`.

    Returns:
        ``{"allocated": bytes, "reserved": bytes or None, "method": how it was measured}``.
    """
    # BEGIN SOLUTION
    target = resolve_device(device)
    generator = torch.Generator().manual_seed(n)
    Q, K, V = (torch.randn(1, 1, n, d, generator=generator).to(target) for _ in range(3))  # (1, 1, n, d) each

    def forward() -> Tensor:
        return naive_attention(Q, K, V) if kind == "naive" else F.scaled_dot_product_attention(Q, K, V)

    with torch.inference_mode(), single_thread(target):
        if target.type == "cuda":
            torch.cuda.synchronize(target)
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(target)
            allocated, reserved = torch.cuda.memory_allocated(target), torch.cuda.memory_reserved(target)
            forward()
            torch.cuda.synchronize(target)
            allocated = torch.cuda.max_memory_allocated(target) - allocated  # the peak above what was there before
            reserved = torch.cuda.max_memory_reserved(target) - reserved
            return {"allocated": int(allocated), "reserved": int(reserved), "method": "torch.cuda.max_memory_allocated / max_memory_reserved"}
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as profile:
            forward()
        changes = sorted((e.time_range.start, e.self_cpu_memory_usage) for e in profile.events() if e.self_cpu_memory_usage)
        held = np.cumsum([change for _, change in changes]) if changes else np.zeros(1)
        return {"allocated": int(max(held.max(), 0)), "reserved": None, "method": "torch.profiler CPU allocations"}
    # END SOLUTION
