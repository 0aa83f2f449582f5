"""Probes of the toy GPT step: drive the student's decoder through its KV cache, and run ``generate`` on one path.

The weights arrive as a dict of torch tensors (the grader wraps each array in
``AsTorch``); logits go back as arrays. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.sandbox import replies
from autograder.sandbox.probes import Load, probe


def _copy(value: Any) -> Any:
    """A detached copy of a returned tensor, so nothing the student's code does later can change it."""
    if type(value).__module__.startswith("torch") and hasattr(value, "clone"):
        return value.detach().clone()
    return value


def _lengths(cache: Any) -> list[list[Any]]:
    """``len()`` of every per-head cache, ``[layer][head]``."""
    return [[len(head) for head in layer] for layer in cache]


@probe(reply=replies.sequence(replies.sequence(replies.sequence(length=2))))
def toy_gpt_new_cache(load: Load, weights: dict) -> list:
    """``new_cache(weights)``: for each layer and head, the cache's type name and its length."""
    cache = load("toy_gpt").new_cache(weights)
    return [[(type(head).__name__, len(head)) for head in layer] for layer in cache]


@probe
def toy_gpt_cached_steps(load: Load, weights: dict, tokens: list) -> tuple:
    """``gpt_step`` on ``tokens`` one at a time (position ``t`` for ``tokens[t]``) with one ``new_cache``.

    Returns ``(logits of each step, the cache lengths afterwards)``.
    """
    module = load("toy_gpt")
    cache = module.new_cache(weights)
    rows = [_copy(module.gpt_step(weights, token, position, cache)) for position, token in enumerate(tokens)]
    return rows, _lengths(cache)


class WrongPath(Exception):
    """``generate`` reached the model function its ``use_cache`` rules out (the grader decides by this class's
    name)."""


def _refusing(name: str, use_cache: bool) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise WrongPath(f"generate(use_cache={use_cache}) called {name}")

    return refused


@probe
def toy_gpt_generate(load: Load, weights: dict, prompt: list, n_new: int, use_cache: bool) -> Any:
    """``generate(weights, prompt, n_new, use_cache=use_cache)``: what it returned. While it runs, the model
    function the flag rules out (``gpt_forward`` with the cache, ``gpt_step`` without it) is replaced by one that
    raises :class:`WrongPath`, so the path ``generate`` took shows in its outcome, not in a count kept here; it is
    put back afterwards."""
    module = load("toy_gpt")
    name = "gpt_forward" if use_cache else "gpt_step"
    original = getattr(module, name)
    setattr(module, name, _refusing(name, use_cache))
    try:
        result = module.generate(weights, list(prompt), n_new, use_cache=use_cache)
    finally:
        setattr(module, name, original)
    return tuple(_copy(part) for part in result) if isinstance(result, tuple) else _copy(result)
