"""The graders of step 6 (moe_router): full marks, zero, each known mistake diagnosed, valid alternatives accepted."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge.cases import moe_router as case
from autograder.judge.checks.moe_router import UNROUTED
from autograder.judge.diagnose import moe_router as moe_mistakes
from autograder.sandbox.probes import PROBES
from tests import kit
from tests.kit import Variant

STEP = "moe_router"
TOP_K = 'indices = np.argsort(-s, axis=-1, kind="stable")[..., :k]'
GATES = "return indices, softmax(chosen, axis=-1)"
EXPERT_CALL = """        if len(tokens):
            out[tokens] += gates[tokens, slot, None] * np.asarray(expert(x[tokens]), dtype=float)
"""
PARAMS = """    total = n_layers * (attention + n_experts * expert)
    active = n_layers * (attention + top_k * expert)
"""

VARIANTS = (
    Variant(
        "gates_over_all_experts",
        STEP,
        STEP,
        GATES,
        "return indices, np.take_along_axis(softmax(s, axis=-1), indices, axis=-1)",
        "gates_over_all_experts",
    ),
    Variant(
        "topk_ascending",
        STEP,
        STEP,
        TOP_K,
        'indices = np.argsort(s, axis=-1, kind="stable")[..., -k:]',
        "topk_ascending",
    ),
    Variant(
        "topk_lowest", STEP, STEP, TOP_K, 'indices = np.argsort(s, axis=-1, kind="stable")[..., :k]', "topk_lowest"
    ),
    Variant(
        "moe_output_unweighted",
        STEP,
        STEP,
        "gates[tokens, slot, None] * np.asarray",
        "np.asarray",
        "moe_output_unweighted",
    ),
    Variant(
        "every_expert_called",
        STEP,
        STEP,
        EXPERT_CALL,
        "        out[tokens] += gates[tokens, slot, None] * np.asarray(expert(x), dtype=float)[tokens]\n",
        "every_expert_called",
    ),
    Variant("load_counts", STEP, STEP, "return counts / indices.size", "return counts", "load_counts"),
    Variant(
        "load_per_token",
        STEP,
        STEP,
        "return counts / indices.size",
        "return counts / (indices.size // indices.shape[-1])",
        "load_per_token",
    ),
    Variant(
        "moe_attention_per_expert",
        STEP,
        STEP,
        PARAMS,
        "    total = n_layers * n_experts * (attention + expert)\n    active = n_layers * top_k * "
        "(attention + expert)\n",
        "moe_attention_per_expert",
    ),
    Variant(
        "topk_by_index",
        "moe_router",
        "moe_router",
        (
            '    indices = np.argsort(-s, axis=-1, kind="stable")[..., :k]  # (..., k) best first; ties: lower '
            "index first\n"
        ),
        '    indices = np.sort(np.argsort(-s, axis=-1, kind="stable")[..., :k], axis=-1)\n',
        "topk_unsorted",
    ),
    Variant(
        "gates_raw",
        "moe_router",
        "moe_router",
        "    return indices, softmax(chosen, axis=-1)  # gates over the k chosen scores only\n",
        "    return indices, chosen\n",
        "gates_raw_scores",
    ),
    Variant(
        "gates_sigmoid",
        "moe_router",
        "moe_router",
        "    return indices, softmax(chosen, axis=-1)  # gates over the k chosen scores only\n",
        "    return indices, 1 / (1 + np.exp(-chosen))\n",
        "gates_sigmoid",
    ),
    Variant(
        "top1_squeezed",
        "moe_router",
        "moe_router",
        "    return indices, softmax(chosen, axis=-1)  # gates over the k chosen scores only\n",
        (
            "    gates = softmax(chosen, axis=-1)\n"
            "    return (indices[..., 0], gates[..., 0]) if k == 1 else (indices, gates)\n"
        ),
        "topk_axis_dropped",
    ),
)

ROUTE_BODY = """    s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)  # (..., n_experts) router scores
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"k must be between 1 and n_experts = {s.shape[-1]}, got {k}")
    indices = np.argsort(-s, axis=-1, kind="stable")[..., :k]  # (..., k) best first; ties: lower index first
    chosen = np.take_along_axis(s, indices, axis=-1)  # (..., k) the chosen experts' scores
    return indices, softmax(chosen, axis=-1)  # gates over the k chosen scores only
"""
TORCH_ROUTE = """    import torch
    s = torch.as_tensor(np.asarray(x, dtype=np.float32)) @ torch.as_tensor(np.asarray(W_r, dtype=np.float32))
    scores, indices = torch.sort(s, dim=-1, descending=True, stable=True)
    return indices[..., :k].numpy(), torch.softmax(scores[..., :k], dim=-1).numpy()
"""
PER_TOKEN_LAYER = """    x = np.asarray(x, dtype=float)
    indices, gates = route(x, W_r, k)
    out = np.zeros_like(x)
    for t in range(len(x)):  # one token, one expert at a time
        for j in range(k):
            out[t] += gates[t, j] * np.asarray(experts[indices[t, j]](x[t : t + 1]))[0]
    return out
"""
MOE_LAYER_BODY = """    x = np.asarray(x, dtype=float)
    indices, gates = (np.asarray(a) for a in route(x, W_r, k))  # (n, k), (n, k); tensors from softmax are fine
    out = np.zeros_like(x)  # (n, d_model)
    for e, expert in enumerate(experts):
        tokens, slot = np.nonzero(indices == e)  # the tokens that chose expert e, and in which of their k slots
        if len(tokens):
            out[tokens] += gates[tokens, slot, None] * np.asarray(expert(x[tokens]), dtype=float)
    return out
"""
ALTERNATIVES = (
    Variant(
        "float32_router",
        STEP,
        STEP,
        "s = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)",
        "s = np.asarray(x, dtype=np.float32) @ np.asarray(W_r, dtype=np.float32)",
        "",
    ),
    Variant("torch_stable_sort_route", STEP, STEP, ROUTE_BODY, TORCH_ROUTE, ""),
    Variant("per_token_moe_layer", STEP, STEP, MOE_LAYER_BODY, PER_TOKEN_LAYER, ""),
    Variant(
        "numpy_int_params",
        STEP,
        STEP,
        "    return total, active\n",
        "    return np.int64(total), np.int64(active)\n",
        "",
    ),
)


@pytest.fixture(scope="module")
def ref() -> Reference:
    return Reference(kit.SOLUTIONS, tasks.MODULES)


test_known_mistake_is_diagnosed, test_valid_alternative_scores_full_marks = kit.variant_tests(VARIANTS, ALTERNATIVES)


def test_public_scores_have_no_near_ties(ref: Reference) -> None:
    """The value checks use inputs without ties: the order of the top k is never a matter of rounding."""
    for x in (case.INPUTS["x"], case.INPUTS["x_batch"]):
        s = np.sort(x @ case.INPUTS["W_r"], axis=-1)
        assert np.diff(s, axis=-1).min() > 1e-3


def test_tie_case_follows_the_documented_rule(ref: Reference) -> None:
    indices, gates = ref.moe_router.route(case.TIE_X, case.TIE_W_r, 3)
    np.testing.assert_array_equal(indices, case.TIE_INDICES)
    s = case.TIE_X @ case.TIE_W_r
    np.testing.assert_array_equal(indices, np.argsort(-s, axis=-1, kind="stable")[:, :3])
    np.testing.assert_allclose(gates.sum(axis=-1), 1.0)


def test_public_routing_reaches_every_expert(ref: Reference) -> None:
    """Each expert gets some tokens, so calling an unused expert is not what the public check sees."""
    indices, _ = ref.moe_router.route(case.INPUTS["x"], case.INPUTS["W_r"], 2)
    assert all(len(t) for t in moe_mistakes.routed_tokens(indices, case.N_EXPERTS))


def test_gated_experts_answer_their_tokens_and_refuse_any_other(ref: Reference) -> None:
    """The gated probe's experts answer exactly the tokens the router sends them (any batching, any order) and raise
    for any other row: which experts a layer calls shows in its value, not in a count kept in the student's process."""
    x, W_r, A, b = (case.INPUTS[n] for n in ("x", "W_r", "A", "b"))
    indices, _ = ref.moe_router.route(x, W_r, 2)
    routed = [t.tolist() for t in moe_mistakes.routed_tokens(indices, case.N_EXPERTS)]
    load = lambda name: getattr(ref, name)  # noqa: E731
    np.testing.assert_allclose(
        PROBES["gated_moe_layer"](load, x, W_r, A, b, 2, routed), ref.moe_router.moe_layer(x, W_r, case.EXPERTS, 2)
    )
    wrong = [routed[0][1:], *routed[1:]]  # the router sent expert 0 one token fewer than moe_layer gives it
    with pytest.raises(Exception) as raised:
        PROBES["gated_moe_layer"](load, x, W_r, A, b, 2, wrong)
    assert type(raised.value).__name__ == UNROUTED and f"token {routed[0][0]}" in str(raised.value)
