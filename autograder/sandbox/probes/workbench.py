"""Probes of ``attnlab workbench``: watch the student's toy GPT from inside, and bring back plain arrays.

The workbench draws what happens inside the student's decoder: what each
block's attention was given (read by wrapping ``causal_self_attention`` while
``gpt_forward`` runs, then putting it back), and what every head's KV cache
holds after each ``gpt_step``. The weights arrive as tensors (the workbench
wraps them in ``AsTorch``); tensors go back as arrays. Nothing here imports torch.
"""

from __future__ import annotations

from typing import Any

from autograder.sandbox.probes import Load, probe


def _copy(value: Any) -> Any:
    """A detached copy of a tensor, so later steps cannot change what was read."""
    if type(value).__module__.startswith("torch") and hasattr(value, "clone"):
        return value.detach().clone()
    return value


def _read(attribute: Any) -> Any:
    """A cache's ``keys`` or ``values``: a property or a method."""
    return _copy(attribute() if callable(attribute) else attribute)


@probe
def workbench_forward(load: Load, weights: dict, tokens: Any) -> tuple:
    """``gpt_forward(weights, tokens)``, recording each call of the module's ``causal_self_attention``.

    Returns ``(logits, calls)``: ``calls`` lists ``(block index or -1, x, output)`` in the order they came, ``x``
    being the (normalised) tokens the block's attention was given.
    """
    module = load("toy_gpt")
    original = module.causal_self_attention
    calls: list[tuple[int, Any, Any]] = []

    def watched(x: Any, block: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(x, block, *args, **kwargs)
        index = next((i for i, known in enumerate(weights["blocks"]) if known is block), -1)
        calls.append((index, _copy(x), _copy(out)))
        return out

    module.causal_self_attention = watched
    try:
        logits = _copy(module.gpt_forward(weights, tokens))
    finally:
        module.causal_self_attention = original
    return logits, calls


@probe
def workbench_cache_steps(load: Load, weights: dict, tokens: list) -> list:
    """``gpt_step`` on ``tokens`` one at a time with one ``new_cache``; after each step, its logits and every
    head's cache as ``(len(cache), keys, values)``, ``[layer][head]``."""
    module = load("toy_gpt")
    cache = module.new_cache(weights)
    steps = []
    for position, token in enumerate(tokens):
        logits = _copy(module.gpt_step(weights, token, position, cache))
        held = [[(len(head), _read(head.keys), _read(head.values)) for head in layer] for layer in cache]
        steps.append((logits, held))
    return steps
