"""Probe of the reference-check step: run ``compare_with_torch`` while ``attention`` returns the grader's output.

``compare_with_torch`` must compare the student's own ``attention`` with PyTorch. To see that the difference it
reports is computed, the probe swaps in an ``attention`` whose output is the one the grader sent (PyTorch's own
output on the same inputs, plus a known shift), its weights still the student's; the grader knows what the
difference must then be. Nothing here is compared or checked: the probe returns only what ``compare_with_torch``
returned, and student code that undid the swap would have to report the difference of the grader's output
anyway, which is the computation the check asks for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe


def _given(original: Callable[..., Any], given: np.ndarray) -> Callable[..., Any]:
    """``original`` with its output replaced by ``given`` (in the output's own kind: an array or a tensor)."""

    def attention(*args: Any, **kwargs: Any) -> Any:
        output, weights = original(*args, **kwargs)
        if isinstance(output, np.ndarray):
            return given.astype(output.dtype), weights
        if hasattr(output, "new_tensor"):  # a tensor: one of its own kind, device and dtype
            return output.new_tensor(given), weights
        return given, weights

    return attention


@probe
def compare_with_given_attention(load: Load, Q: Any, K: Any, V: Any, mask: Any, output: np.ndarray) -> Any:
    """``compare_with_torch(Q, K, V, mask)`` while ``scaling.attention`` returns ``output`` (and its own weights).

    Every reference to the student's ``attention`` (``scaling.attention`` and any name in ``reference_check``
    bound to it) is swapped during the call and restored afterwards. Returns what ``compare_with_torch`` returned.
    """
    module = load("reference_check")
    scalings = {id(m): m for m in (load("scaling"), sys.modules.get("scaling")) if m is not None}
    originals = {id(m.attention): m.attention for m in scalings.values() if hasattr(m, "attention")}
    if not originals:
        raise AttributeError("scaling.py has no function attention")
    replacement = _given(next(iter(originals.values())), np.asarray(output, dtype=float))
    swapped = [(m, "attention") for m in scalings.values()] + [
        (module, name) for name, value in vars(module).items() if id(value) in originals
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name in swapped]
    try:
        for owner, name in swapped:
            setattr(owner, name, replacement)
        return module.compare_with_torch(Q, K, V, mask)
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
