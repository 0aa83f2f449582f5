"""Probes of the first steps."""

from __future__ import annotations

from typing import Any

from autograder.sandbox.probes import Load, probe


@probe
def returned_type(load: Load, module: str, function: str, *args: Any) -> str:
    """The type name of what ``module.function(*args)`` returns (for type checks)."""
    return type(getattr(load(module), function)(*args)).__name__


@probe
def causal_attention(load: Load, Q: Any, K: Any, V: Any) -> Any:
    """``attention(Q, K, V, causal_mask(n_q, n_k))`` with the student's own mask and head."""
    mask = load("mask").causal_mask(len(Q), len(K))
    return load("scaling").attention(Q, K, V, mask)
