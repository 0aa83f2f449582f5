"""Probes of the toy GPT step: drive the student's decoder through its KV cache, and watch ``generate``.

The weights arrive as a dict of torch tensors (the grader wraps each array in
``AsTorch``); logits go back as arrays. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.sandbox.probes import Load, probe


def _copy(value: Any) -> Any:
    """A detached copy of a returned tensor, so nothing the student's code does later can change it."""
    if type(value).__module__.startswith("torch") and hasattr(value, "clone"):
        return value.detach().clone()
    return value


def _lengths(cache: Any) -> list[list[Any]]:
    """``len()`` of every per-head cache, ``[layer][head]``."""
    return [[len(head) for head in layer] for layer in cache]


@probe
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


class _Counted:
    """A module function that counts its calls."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function, self.calls = function, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.function(*args, **kwargs)


@probe
def toy_gpt_generate(load: Load, weights: dict, prompt: list, n_new: int) -> dict:
    """``generate(weights, prompt, n_new, use_cache=...)`` with and without the cache, counting the model calls.

    Returns ``{"cache": run, "no_cache": run}``, each run ``(what generate
    returned, calls of gpt_step, calls of gpt_forward)`` (the module's
    functions are counted while ``generate`` runs, then put back).
    """
    module = load("toy_gpt")
    runs = {}
    for name, use_cache in (("cache", True), ("no_cache", False)):
        step, forward = _Counted(module.gpt_step), _Counted(module.gpt_forward)
        module.gpt_step, module.gpt_forward = step, forward
        try:
            result = module.generate(weights, list(prompt), n_new, use_cache=use_cache)
        finally:
            module.gpt_step, module.gpt_forward = step.function, forward.function
        parts = tuple(_copy(part) for part in result) if isinstance(result, tuple) else _copy(result)
        runs[name] = (parts, step.calls, forward.calls)
    return runs
