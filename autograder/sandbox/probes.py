"""Probes: small trusted routines that run *inside* the child around student code.

A plain function call needs no probe (the client's ``call`` does it). A probe
is for checks that must hand student code something that cannot cross the
process boundary, such as callables that record how they were called, and
bring back only arrays, numbers and strings. Each probe takes ``load`` (the
student-module importer) first, then the decoded arguments.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

Load = Callable[[str], ModuleType]
PROBES: dict[str, Callable[..., Any]] = {}


def probe(function: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``function`` under its own name."""
    PROBES[function.__name__] = function
    return function


@probe
def returned_type(load: Load, module: str, function: str, *args: Any) -> str:
    """The type name of what ``module.function(*args)`` returns (for type checks)."""
    return type(getattr(load(module), function)(*args)).__name__


@probe
def causal_attention(load: Load, Q: Any, K: Any, V: Any) -> Any:
    """``attention(Q, K, V, causal_mask(n_q, n_k))`` with the student's own mask and head."""
    mask = load("mask").causal_mask(len(Q), len(K))
    return load("scaling").attention(Q, K, V, mask)
