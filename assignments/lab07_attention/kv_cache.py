"""Step 7, the KV cache (handout section `kv_cache`), in PyTorch.

When a decoder generates one token at a time, the keys and values of the
earlier tokens never change (the causal mask keeps them from seeing later
tokens). So each step projects only the new token, appends its ``k`` and ``v``
to a cache, and lets its query attend over everything cached so far: the new
token is the last position, so it may see every cached key and no mask is
needed. Run over a whole sequence this gives exactly causal full attention.

The cache costs memory: per token, every layer stores one key and one value
vector per KV head, ``2 * n_layers * n_kv_heads * d_head`` numbers.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


class KVCache:
    """The keys and values of every token seen so far, for one attention head (or a batch of them).

    Example:
        >>> cache = KVCache()
        >>> cache.append(torch.zeros(2, 3), torch.ones(2, 5))  # 2 tokens, d_k = 3, d_v = 5
        >>> cache.append(torch.zeros(1, 3), torch.ones(1, 5))
        >>> len(cache), tuple(cache.keys.shape), tuple(cache.values.shape)
        (3, (3, 3), (3, 5))
    """

    def __init__(self) -> None:
        """An empty cache."""
        raise NotImplementedError(
            "Lab 7 step 'kv_cache', task __init__: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
        )

    def append(self, k: Tensor, v: Tensor) -> None:
        """Add the keys and values of ``t`` new tokens after the cached ones.

        Args:
            k: keys of the new tokens, ``[..., t, d_k]``.
            v: values of the new tokens, ``[..., t, d_v]`` (same leading axes and ``t``).
        """
        raise NotImplementedError(
            "Lab 7 step 'kv_cache', task append: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
        )

    @property
    def keys(self) -> Tensor:
        """Every cached key, oldest first: ``[..., n_cached, d_k]``."""
        raise NotImplementedError(
            "Lab 7 step 'kv_cache', task keys: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
        )

    @property
    def values(self) -> Tensor:
        """Every cached value, oldest first: ``[..., n_cached, d_v]``."""
        raise NotImplementedError(
            "Lab 7 step 'kv_cache', task values: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
        )

    def __len__(self) -> int:
        """The number of cached tokens (0 for an empty cache)."""
        raise NotImplementedError(
            "Lab 7 step 'kv_cache', task __len__: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
        )


def decode_step(x_t: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, cache: KVCache) -> Tensor:
    """One generation step: the new token's attention output over itself and every earlier token.

    Projects the new token, appends its key and value to ``cache`` *first*, then
    lets its query attend over the whole cache (the token must see itself).

    Args:
        x_t: the new token, ``[..., d_model]`` (leading axes are batch axes).
        W_Q: query projection, ``[d_model, d_k]``.
        W_K: key projection, ``[d_model, d_k]``.
        W_V: value projection, ``[d_model, d_v]``.
        cache: the keys and values of the earlier tokens; grows by one token.

    Returns:
        The new token's output, ``[..., d_v]``, in the dtype of the inputs.
    """
    raise NotImplementedError(
        "Lab 7 step 'kv_cache', task decode_step: not implemented yet (handout: handouts/lab07_attention.md#kv_cache)"
    )


def incremental_attention(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor) -> Tensor:
    """Causal attention computed the way a decoder generates: one token at a time through a :class:`KVCache`.

    Args:
        X: tokens as rows, ``[..., n, d_model]`` (leading axes are batch axes).
        W_Q: query projection, ``[d_model, d_k]``.
        W_K: key projection, ``[d_model, d_k]``.
        W_V: value projection, ``[d_model, d_v]``.

    Returns:
        ``[..., n, d_v]``, in the dtype of the inputs: equal (to rounding) to full
        attention with the causal mask, ``attention(Q, K, V, causal_mask(n))[0]``.
    """
    raise NotImplementedError(
        "Lab 7 step 'kv_cache', task incremental_attention: not implemented yet "
        "(handout: handouts/lab07_attention.md#kv_cache)"
    )


def kv_cache_bytes(
    n_layers: int, n_kv_heads: int, d_head: int, n_tokens: int, bytes_per_value: float = 2, batch: int = 1
) -> int:
    """Memory of a KV cache: one key and one value vector per token, KV head and layer.

    Args:
        n_layers: transformer layers.
        n_kv_heads: key/value heads per layer (fewer than the query heads with GQA, 1 with MQA).
        d_head: width of one head's key (and value) vectors.
        n_tokens: cached tokens per sequence.
        bytes_per_value: 2 for fp16/bf16, 4 for fp32, 1 for int8.
        batch: sequences cached at the same time.

    Returns:
        The size in bytes (divide by 1e9 for GB, by 2**30 for GiB).

    Example:
        A 7B-class model (32 layers, 32 KV heads of width 128) in fp16 holds
        ``kv_cache_bytes(32, 32, 128, 4096)`` = 2,147,483,648 bytes (2.1 GB) for 4096 tokens.
    """
    raise NotImplementedError(
        "Lab 7 step 'kv_cache', task kv_cache_bytes: not implemented yet "
        "(handout: handouts/lab07_attention.md#kv_cache)"
    )
