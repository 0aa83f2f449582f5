"""Step 13, timing attention (handout section `timing`), in PyTorch.

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
KV cache each token costs about the same. The decoder is your toy GPT from
step 12 (``toy_gpt.py``) at a larger size, with weights fixed by the kit
(:func:`toy_gpt.random_weights` with the seed ``SEED``), so everyone's numbers
mean the same thing.

Works on a GPU when one is present (``device=None``), on the CPU otherwise.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike
from torch import Tensor
from toy_gpt import gpt_forward, gpt_step, new_cache, random_weights

# The kit's decoder: your toy GPT with 2 layers of 4 heads, d_model 64 and 256 tokens, greedy decoding from START_TOKEN.
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


@contextmanager
def single_thread(device: torch.device) -> Iterator[None]:
    """While inside, torch uses one CPU thread (on a CPU device); the old setting comes back afterwards.

    Args:
        device: the device being measured; nothing changes for a GPU.

    Yields:
        Nothing; measure inside the ``with`` block.
    """
    raise NotImplementedError(
        "Lab 7 step 'timing', task single_thread: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


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
    raise NotImplementedError(
        "Lab 7 step 'timing', task timed: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


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
    raise NotImplementedError(
        "Lab 7 step 'timing', task naive_attention: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


def time_attention(
    n: int,
    d: int = 64,
    device: str | torch.device | None = None,
    repeats: int = 5,
    *,
    kind: str = "naive",
    causal: bool = False,
    return_times: bool = False,
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
    raise NotImplementedError(
        "Lab 7 step 'timing', task time_attention: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


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
    raise NotImplementedError(
        "Lab 7 step 'timing', task loglog_slope: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


def time_decoding(
    n_tokens: int = 512,
    d_model: int = 64,
    use_cache: bool = True,
    device: str | torch.device | None = None,
    *,
    return_tokens: bool = False,
) -> list[float] | tuple[list[float], list[int]]:
    """Per-token seconds of greedily generating ``n_tokens`` tokens with the kit's decoder.

    The decoder is ``toy_gpt.random_weights(VOCAB, d_model, N_HEADS, N_LAYERS,
    n_ctx=n_tokens, seed=SEED)`` in float32. Generation starts from
    ``START_TOKEN`` at position 0; each new token is the argmax of the logits.
    ``WARMUP_TOKENS`` tokens are generated untimed first.

    Args:
        n_tokens: tokens to generate (and time).
        d_model: decoder width (a multiple of ``N_HEADS``).
        use_cache: :func:`toy_gpt.gpt_step` with a KV cache (:func:`toy_gpt.new_cache`), else
            :func:`toy_gpt.gpt_forward` over the whole prefix.
        device: where to measure (see :func:`resolve_device`).
        return_tokens: also return the generated token ids.

    Returns:
        The ``n_tokens`` seconds, one per generated token (and, with
        ``return_tokens``, the ``n_tokens`` generated ids).
    """
    raise NotImplementedError(
        "Lab 7 step 'timing', task time_decoding: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )


def peak_memory(
    n: int, d: int = 64, device: str | torch.device | None = None, *, kind: str = "naive"
) -> dict[str, Any]:
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
    raise NotImplementedError(
        "Lab 7 step 'timing', task peak_memory: not implemented yet (handout: handouts/lab07_attention.md#timing)"
    )
