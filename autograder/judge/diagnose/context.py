"""The named sizes of a call (``d_k``, ``n``, ``n_kv_heads`` ...), for the relations that name a constant.

A failed check whose answer is the expected one times a constant says which
constant when the call's inputs give it a name: ``attention(Q, K, V)`` has
``d_k = Q.shape[-1]``. :func:`of` reads them from the call's arguments (in the
grader, after the call); a function without an entry here has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

Sizes = dict[str, float]


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.shape(getattr(value, "array", value)))


def _head(Q: Any, K: Any, V: Any = None, *rest: Any, **kw: Any) -> Sizes:
    q, k = _shape(Q), _shape(K)
    sizes = {"d_k": q[-1], "n_q": q[-2], "n_k": k[-2]} if len(q) >= 2 and len(k) >= 2 else {}
    if V is not None and len(_shape(V)) >= 2:
        sizes["d_v"] = _shape(V)[-1]
    return sizes


def _softmax(x: Any, axis: int = -1, **kw: Any) -> Sizes:
    shape = _shape(x)
    return {"n": shape[axis]} if shape else {}


def _table(n_positions: int, d_model: int, *rest: Any, **kw: Any) -> Sizes:
    return {"n": int(n_positions), "d": int(d_model), "d_model": int(d_model)}


def _rope(x: Any, positions: Any, *rest: Any, **kw: Any) -> Sizes:
    shape = _shape(x)
    largest = float(np.max(np.abs(np.asarray(getattr(positions, "array", positions), dtype=float)), initial=0.0))
    return {"d": shape[-1], "scale": largest} if shape else {}


def _kv_bytes(n_layers: int, n_kv_heads: int, d_head: int, n_tokens: int, *rest: Any, **kw: Any) -> Sizes:
    return {"n_layers": n_layers, "n_kv_heads": n_kv_heads, "d_head": d_head, "n_tokens": n_tokens}


def _width(d_model: int, *rest: Any, **kw: Any) -> Sizes:
    return {"d": int(d_model), "d_model": int(d_model)}


def _length_width(n: int, d_model: int, *rest: Any, **kw: Any) -> Sizes:
    return {"n": int(n), "d": int(d_model), "d_model": int(d_model)}


def _rows(x: Any, *rest: Any, **kw: Any) -> Sizes:
    shape = _shape(x)
    return {"d": shape[-1]} if shape else {}


SIZES: dict[str, Callable[..., Sizes]] = {
    "softmax.softmax": _softmax,
    "scaling.scores": _head,
    "scaling.scaled_scores": _head,
    "scaling.attention": _head,
    "gradients.attention_backward": _head,
    "positions.sinusoidal_encoding": _table,
    "positions.rope": _rope,
    "kv_cache.kv_cache_bytes": _kv_bytes,
    "block.layer_norm": _rows,
    "block.rms_norm": _rows,
    "costs.block_params": _width,
    "costs.attention_params": _width,
    "costs.ffn_params": _width,
    "costs.block_flops": _length_width,
    "costs.attention_flop_share": _length_width,
    "costs.crossover_length": _width,
}


def of(function: str, args: tuple, kwargs: Mapping[str, Any]) -> Sizes:
    """The named sizes of the call ``function(*args, **kwargs)`` (``module.name``); empty when it has none."""
    reader = SIZES.get(function)
    if reader is None:
        return {}
    try:
        return {name: float(value) for name, value in reader(*args, **kwargs).items()}
    except (TypeError, ValueError, IndexError):  # arguments of another form (a check of bad inputs)
        return {}
