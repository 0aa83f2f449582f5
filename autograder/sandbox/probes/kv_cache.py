"""Probes of the KV cache step: drive the student's ``KVCache`` inside the child.

The arguments arrive as torch tensors (the grader wraps them in ``AsTorch``);
what the cache returns goes back as arrays. Nothing here imports torch: the
tensors come decoded, and returned tensors are converted by the protocol.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.sandbox import replies
from autograder.sandbox.probes import Load, probe


def _copy(value: Any) -> Any:
    """A copy of a returned tensor or array, so later appends cannot change what was read."""
    if type(value).__module__.startswith("torch") and hasattr(value, "clone"):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _contents(cache: Any) -> tuple[Any, Any, Any]:
    """``(len(cache), cache.keys, cache.values)``; ``keys`` and ``values`` may be properties or methods."""
    keys, values = cache.keys, cache.values
    keys = keys() if callable(keys) else keys
    values = values() if callable(values) else values
    return len(cache), _copy(keys), _copy(values)


@probe(reply=replies.sequence(replies.sequence(length=3)))
def kv_cache_appends(load: Load, keys: list, values: list) -> list:
    """Append ``(keys[i], values[i])`` to a fresh ``KVCache`` in turn; after each, its length, keys and values."""
    cache = load("kv_cache").KVCache()
    states = []
    for k, v in zip(keys, values):
        cache.append(k, v)
        states.append(_contents(cache))
    return states


@probe
def decode_with_cache(load: Load, K_cached: Any, V_cached: Any, x_t: Any, W_Q: Any, W_K: Any, W_V: Any) -> tuple:
    """``decode_step(x_t, W_Q, W_K, W_V, cache)`` on a ``KVCache`` holding ``K_cached, V_cached``.

    Returns ``(out_t, len(cache), cache.keys, cache.values)``, the cache read after the step.
    """
    module = load("kv_cache")
    cache = module.KVCache()
    cache.append(K_cached, V_cached)
    out_t = module.decode_step(x_t, W_Q, W_K, W_V, cache)
    return (_copy(out_t), *_contents(cache))
