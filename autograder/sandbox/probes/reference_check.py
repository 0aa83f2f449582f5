"""Probes of the reference-check step: run ``compare_with_torch`` around a known error.

``compare_with_torch`` must compare the student's own ``attention`` with PyTorch.
To see that the difference it reports is real, the probe swaps in an
``attention`` whose output is the student's plus a known ``shift``; the
difference reported must then be the largest entry of the shift (the grader
recomputes it from the output the function actually saw).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from autograder.sandbox.probes import Load, probe


def _shifted(original: Callable[..., Any], shift: np.ndarray, seen: list) -> Callable[..., Any]:
    """``original`` with ``shift`` added to its output; every shifted output is kept in ``seen``."""

    def attention(*args: Any, **kwargs: Any) -> Any:
        output, weights = original(*args, **kwargs)
        if tuple(np.shape(output)) != shift.shape:
            raise ValueError(
                f"the grader expected attention to be called on the whole input (output {shift.shape}), not "
                f"{tuple(np.shape(output))}"
            )
        if isinstance(output, np.ndarray):
            output = output + shift.astype(output.dtype)
        else:  # a tensor: add a tensor of its own kind
            output = output + type(output)(shift).to(dtype=output.dtype, device=output.device)
        seen.append(output)
        return output, weights

    return attention


@probe
def compare_with_shifted_attention(load: Load, Q: Any, K: Any, V: Any, mask: Any, shift: np.ndarray) -> tuple:
    """``compare_with_torch(Q, K, V, mask)`` while ``scaling.attention`` returns its output plus ``shift``.

    Every reference to the student's ``attention`` (``scaling.attention`` and any
    name in ``reference_check`` bound to it) is swapped for the shifted one
    during the call and restored afterwards.

    Returns ``(result, output)``: what ``compare_with_torch`` returned, and the
    shifted output of its last call of ``attention`` (``None`` if it never called it).
    """
    module = load("reference_check")
    scalings = {id(m): m for m in (load("scaling"), sys.modules.get("scaling")) if m is not None}
    originals = {id(m.attention): m.attention for m in scalings.values() if hasattr(m, "attention")}
    if not originals:
        raise AttributeError("scaling.py has no function attention")
    seen: list = []
    replacement = _shifted(next(iter(originals.values())), np.asarray(shift, dtype=float), seen)
    swapped = [(m, "attention") for m in scalings.values()] + [
        (module, name) for name, value in vars(module).items() if id(value) in originals
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name in swapped]
    try:
        for owner, name in swapped:
            setattr(owner, name, replacement)
        result = module.compare_with_torch(Q, K, V, mask)
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
    return result, (seen[-1] if seen else None)
