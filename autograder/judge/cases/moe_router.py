"""Cases of the mixture-of-experts router: fixed tokens, router weights and affine experts."""

from __future__ import annotations

import numpy as np

from autograder.judge.cases import Case
from autograder.judge.diagnose import moe_router as moe_mistakes
from autograder.sandbox.probes.moe_router import affine_expert


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260706)  # public, fixed: hidden checks draw their own
    return {
        "x": rng.normal(size=(6, 4)),
        "W_r": rng.normal(size=(4, 5)),
        "x_batch": rng.normal(size=(2, 3, 4)),
        "A": rng.normal(size=(5, 4, 4)) / 2,  # expert e maps rows to rows @ A[e] + b[e]
        "b": rng.normal(size=(5, 4)),
    }


INPUTS = _rng_inputs()
N_EXPERTS = INPUTS["W_r"].shape[1]
EXPERTS = [affine_expert(INPUTS["A"], INPUTS["b"], e) for e in range(N_EXPERTS)]

# Exact ties (every product is exact): x = I picks the rows of W_r as the scores.
TIE_X = np.eye(3)
TIE_W_r = np.array([[1.0, 2.0, 2.0, 0.0, 2.0], [3.0, 1.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5, 0.5]])
# Lower expert index first among equal scores.
TIE_INDICES = np.array([[1, 2, 4], [0, 1, 2], [0, 1, 2]])

# Chosen experts of 6 tokens (k = 2) among 6 experts; expert 5 is never chosen.
LOAD_INDICES = np.array([[0, 2], [2, 1], [2, 0], [4, 2], [1, 0], [2, 3]])


def _load_variants(ref, indices, n_experts):
    return moe_mistakes.expert_load_variants(ref, indices, n_experts)


CASES: tuple[Case, ...] = (
    Case("route_public", "moe_router", "route", (INPUTS["x"], INPUTS["W_r"], 2), moe_mistakes.route_variants),
    Case("route_batch", "moe_router", "route", (INPUTS["x_batch"], INPUTS["W_r"], 3), moe_mistakes.route_variants),
    Case("route_ties", "moe_router", "route", (TIE_X, TIE_W_r, 3), moe_mistakes.route_variants),
    Case(
        "moe_layer_public",
        "moe_router",
        "moe_layer",
        (INPUTS["x"], INPUTS["W_r"], EXPERTS, 2),
        moe_mistakes.moe_layer_variants,
    ),
    Case("expert_load_public", "moe_router", "expert_load", (LOAD_INDICES, 6), _load_variants),
    Case("moe_params_mixtral", "moe_router", "moe_params", (4096, 32, 8, 2), moe_mistakes.moe_params_variants),
    Case("moe_params_dense", "moe_router", "moe_params", (4096, 32, 1, 1), moe_mistakes.moe_params_variants),
)
