"""Step 6, the mixture-of-experts router (handout section `moe_router`).

In a mixture-of-experts layer the one feed-forward network of a block is
replaced by ``n_experts`` of them. A router scores every expert for each token
(``s = x W_r``), keeps the ``k`` best and turns only those ``k`` scores into
gates with a softmax, so each token's gates sum to 1. The token's output is the
gate-weighted sum of its ``k`` experts' outputs, and an expert never sees a
token that did not choose it: the model holds every expert, but a token pays
only for ``k`` of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from softmax import softmax

Expert = Callable[[np.ndarray], np.ndarray]  # maps token rows [n, d] to output rows [n, d]


def route(x: ArrayLike, W_r: ArrayLike, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Pick each token's ``k`` best experts and their gates.

    Args:
        x: token vectors as rows, ``[..., d_model]``.
        W_r: router weights, ``[d_model, n_experts]``; the scores are ``s = x W_r``.
        k: how many experts each token uses, ``1 <= k <= n_experts``.

    Returns:
        ``(indices, gates)``, both ``[..., k]``: the chosen experts in descending
        score order, and the softmax over those ``k`` scores only (each row sums
        to 1). Equal scores are ranked by expert index, lower index first (the
        order ``np.argsort(-s, kind="stable")`` gives).

    Example:
        Scores ``[0.1, 2.0, -1.0, 1.5]`` with ``k = 2`` give indices ``[1, 3]``
        and gates ``softmax([2.0, 1.5]) = [0.6225, 0.3775]``.
    """
    # BEGIN SOLUTION
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)  # (..., n_experts) router scores
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argsort(-s, axis=-1, kind="stable")[..., :k]  # (..., k) best first; ties: lower index first
    chosen = np.take_along_axis(s, indices, axis=-1)  # (..., k) the chosen experts' scores
    return indices, softmax(chosen, axis=-1)  # gates over the k chosen scores only
    # END SOLUTION


def moe_layer(x: ArrayLike, W_r: ArrayLike, experts: Sequence[Expert], k: int) -> np.ndarray:
    """A mixture-of-experts layer: each token's gate-weighted sum of its ``k`` experts.

    Args:
        x: tokens ``[n, d_model]``.
        W_r: router weights ``[d_model, n_experts]``.
        experts: ``n_experts`` callables, each mapping rows ``[m, d_model]`` to
            ``[m, d_model]``. Call an expert only with the tokens routed to it.
        k: experts per token.

    Returns:
        ``[n, d_model]``: row ``t`` is ``sum_j gates[t, j] * experts[indices[t, j]](x[t])``
        with ``(indices, gates) = route(x, W_r, k)``.
    """
    # BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    indices, gates = (np.asarray(a) for a in route(x, W_r, k))  # (n, k), (n, k); tensors from softmax are fine
    out = np.zeros_like(x)  # (n, d_model)
    for e, expert in enumerate(experts):
        tokens, slot = np.nonzero(indices == e)  # the tokens that chose expert e, and in which of their k slots
        if len(tokens):
            out[tokens] += gates[tokens, slot, None] * np.asarray(expert(x[tokens]), dtype=float)
    return out
    # END SOLUTION


def expert_load(indices: ArrayLike, n_experts: int) -> np.ndarray:
    """Each expert's share of the routed (token, slot) pairs.

    Args:
        indices: the experts chosen by ``route``, ``[..., k]``.
        n_experts: number of experts.

    Returns:
        ``[n_experts]``, non-negative and summing to 1; a perfectly balanced
        router gives ``1 / n_experts`` everywhere.
    """
    # BEGIN SOLUTION
    indices = np.asarray(indices, dtype=int)
    counts = np.bincount(indices.ravel(), minlength=n_experts)  # (n_experts,) pairs per expert
    return counts / indices.size
    # END SOLUTION


def moe_params(d_model: int, n_layers: int, n_experts: int, top_k: int) -> tuple[int, int]:
    """Parameters of a mixture-of-experts model, all of them and those one token uses.

    Per layer: attention ``4 d^2`` (W_Q, W_K, W_V, W_O) plus experts of ``8 d^2``
    each (an FFN with d_ff = 4d). Embeddings, router weights, biases and norms
    are not counted.

    Args:
        d_model: model width ``d``.
        n_layers: number of blocks.
        n_experts: experts per layer (1 for a dense model).
        top_k: experts each token uses.

    Returns:
        ``(total, active)``: with all ``n_experts`` experts, and with ``top_k``.
        ``(4096, 32, 8, 2)`` gives about 36.5e9 and 10.7e9; ``(4096, 32, 1, 1)``
        the dense 6.4e9 twice.
    """
    # BEGIN SOLUTION
    attention, expert = 4 * d_model**2, 8 * d_model**2  # per layer
    total = n_layers * (attention + n_experts * expert)
    active = n_layers * (attention + top_k * expert)
    return total, active
    # END SOLUTION
