"""Wrong ways to write the mixture-of-experts router, and what they return.

The graders' experts are affine maps ``rows @ A[e] + b[e]``
(:func:`autograder.sandbox.probes.moe_router.affine_expert`), built the same way in the grader (for the
reference) and in the sandboxed child.
"""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.search import edit, generate

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "gates_over_all_experts",
            "the gates are a softmax over all experts' scores; take the softmax over the k chosen "
            "scores only, so a token's gates sum to 1",
        ),
        Mistake("topk_ascending", "the chosen experts are listed in ascending score order; list them best first"),
        Mistake(
            "topk_lowest",
            "the k experts with the lowest scores are chosen; take the k highest (sort by -s, or take "
            "the end of an ascending sort)",
        ),
        Mistake("moe_output_unweighted", "the experts' outputs are added without their gates"),
        Mistake(
            "every_expert_called",
            "every expert is called on every token; call an expert only with the tokens routed to it "
            "(that is what makes the layer sparse)",
        ),
        Mistake(
            "load_counts",
            "the load is a count of (token, slot) pairs; divide by the number of pairs so the shares sum to 1",
        ),
        Mistake(
            "load_per_token",
            "the load is divided by the number of tokens, so it sums to k; divide by the number of (token, slot) pairs",
        ),
        Mistake(
            "topk_unsorted",
            "the k chosen experts are not in descending score order (argpartition, or topk with sorted=False, "
            "does not sort them); list them best first",
        ),
        Mistake(
            "topk_axis_dropped",
            "for k = 1 the k axis is dropped (max or argmax over the experts); indices and gates keep their last "
            "axis of length k, [..., 1]",
        ),
        Mistake(
            "gates_raw_scores", "the gates are the raw router scores; they are the softmax over the k chosen scores"
        ),
        Mistake(
            "gates_sigmoid",
            "the gates are a sigmoid of each chosen score; they are the softmax over the k chosen scores, "
            "which sum to 1",
        ),
        Mistake(
            "moe_attention_per_expert",
            "the attention weights are counted once per expert, as if the model were n_experts copies "
            "of a dense model; only the FFN is replicated, attention (4 d^2 per layer) is shared",
        ),
    )
}


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def route_model(
    x: np.ndarray, W_r: np.ndarray, k: int, *, gates: str = "chosen", order: str = "best_first", squeeze: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The reference router with its choices as knobs (the defaults are the reference's): ``(indices, gates)``.

    ``gates``: the softmax over the ``"chosen"`` scores, over ``"all"`` the experts (then gathered), the
    ``"raw"`` scores or their ``"sigmoid"``; ``order``: ``"best_first"``, ``"ascending"``, the ``"lowest"`` k,
    ``"unsorted"`` (argpartition's order) or ``"by_index"`` (the chosen experts by index);
    ``squeeze``: the k axis dropped when ``k = 1``.
    """
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)  # (..., n_experts)
    best = np.argsort(-s, axis=-1, kind="stable")[..., :k]
    indices = {
        "best_first": lambda: best,
        "ascending": lambda: best[..., ::-1],
        "lowest": lambda: np.argsort(s, axis=-1, kind="stable")[..., :k],
        "unsorted": lambda: np.argpartition(-s, kth=k - 1, axis=-1)[..., :k],
        "by_index": lambda: np.sort(best, axis=-1),
    }[order]()
    chosen = np.take_along_axis(s, indices, axis=-1)
    weights = {
        "chosen": lambda: _softmax(chosen),
        "all": lambda: np.take_along_axis(_softmax(s), indices, axis=-1),
        "raw": lambda: chosen,
        "sigmoid": lambda: 1 / (1 + np.exp(-chosen)),
    }[gates]()
    if squeeze and k == 1:
        return indices[..., 0], weights[..., 0]
    return indices, weights


ROUTE_EDITS = (
    edit(MISTAKES["gates_over_all_experts"], "gates", "all"),
    edit(MISTAKES["gates_raw_scores"], "gates", "raw"),
    edit(MISTAKES["gates_sigmoid"], "gates", "sigmoid"),
    edit(MISTAKES["topk_ascending"], "order", "ascending"),
    edit(MISTAKES["topk_lowest"], "order", "lowest"),
    edit(MISTAKES["topk_unsorted"], "order", "unsorted", "argpartition"),
    edit(MISTAKES["topk_unsorted"], "order", "by_index", "by_index"),
    edit(MISTAKES["topk_axis_dropped"], "squeeze", True),
)
EDITS = ROUTE_EDITS


def route_variants(ref, x: np.ndarray, W_r: np.ndarray, k: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What each mistake returns as ``(indices, gates)`` for ``route(x, W_r, k)``."""
    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)  # (..., n_experts)
    best, _ = ref.moe_router.route(x, W_r, k)
    ascending = best[..., ::-1]
    lowest = np.argsort(s, axis=-1, kind="stable")[..., :k]

    def gates(indices: np.ndarray) -> np.ndarray:
        return _softmax(np.take_along_axis(s, indices, axis=-1))

    known = {
        "gates_over_all_experts": (best, np.take_along_axis(_softmax(s), best, axis=-1)),
        "topk_ascending": (ascending, gates(ascending)),
        "topk_lowest": (lowest, gates(lowest)),
    }
    return {**known, **generate(route_model, ROUTE_EDITS, (x, W_r, k), known=known)}


def mix(outputs: np.ndarray, indices: np.ndarray, gates: np.ndarray) -> np.ndarray:
    """``sum_j gates[t, j] * outputs[indices[t, j], t]`` with ``outputs`` ``[n_experts, n, d]``."""
    tokens = np.arange(len(indices))[:, None]  # (n, 1)
    return np.einsum("nk,nkd->nd", gates, outputs[indices, tokens])


def moe_layer_variants(ref, x: np.ndarray, W_r: np.ndarray, experts, k: int) -> dict[str, np.ndarray]:
    """What each mistake returns for ``moe_layer(x, W_r, experts, k)``."""
    x = np.asarray(x, dtype=float)
    outputs = np.stack([expert(x) for expert in experts])  # (n_experts, n, d) every expert on every token
    indices, gates = ref.moe_router.route(x, W_r, k)
    out = {
        name: mix(outputs, i, g)
        for name, (i, g) in route_variants(ref, x, W_r, k).items()
        if np.shape(i) == np.shape(indices) and name.partition("+")[0] not in ("topk_ascending", "topk_unsorted")
    }
    out["moe_output_unweighted"] = mix(outputs, indices, np.ones_like(gates))
    return out


def routed_tokens(indices: np.ndarray, n_experts: int) -> list[np.ndarray]:
    """For each expert, the tokens (row numbers) whose ``k`` choices include it."""
    indices = np.asarray(indices).reshape(len(indices), -1)
    return [np.nonzero((indices == e).any(axis=-1))[0] for e in range(n_experts)]


def expert_load_variants(ref, indices: np.ndarray, n_experts: int) -> dict[str, np.ndarray]:
    """What each mistake returns for ``expert_load(indices, n_experts)``."""
    indices = np.asarray(indices)
    counts = np.bincount(indices.ravel(), minlength=n_experts).astype(float)
    n_tokens = indices.size // indices.shape[-1] if indices.ndim else 1
    return {"load_counts": counts, "load_per_token": counts / n_tokens}


def moe_params_variants(ref, d_model: int, n_layers: int, n_experts: int, top_k: int) -> dict[str, tuple[int, int]]:
    """What each mistake returns as ``(total, active)`` for ``moe_params(...)``."""
    dense, _ = ref.moe_router.moe_params(d_model, n_layers, 1, 1)  # attention and one FFN per layer
    return {"moe_attention_per_expert": (n_experts * dense, top_k * dense)}
