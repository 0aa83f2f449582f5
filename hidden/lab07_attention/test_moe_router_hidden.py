"""Hidden checks of step 6, the mixture-of-experts router: fresh tokens, routers and experts."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from autograder.i18n import _, ngettext
from autograder.judge.checking import COUNT, Lab, as_number, expect_close, with_inputs
from autograder.judge.checks.moe_router import expect_routed_calls
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.moe_router import (
    expert_load_variants,
    moe_layer_variants,
    moe_params_variants,
    route_variants,
)
from autograder.sandbox.probes.moe_router import affine_expert

pytestmark = pytest.mark.step("moe_router")


def _router(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Random tokens ``[n, d]``, router ``[d, n_experts]`` and ``k`` (random normals: no ties)."""
    n, d, n_experts = int(rng.integers(5, 12)), int(rng.integers(2, 7)), int(rng.integers(3, 9))
    return rng.normal(size=(n, d)), rng.normal(size=(d, n_experts)), int(rng.integers(2, n_experts))


@pytest.mark.points(1)
def test_random_route(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random tokens, router and k, compared with the reference; then k = 1 (top-1) and k = n_experts (all)"""
    x, W_r, drawn = _router(rng)
    x = x.reshape(1, *x.shape)  # one batch axis
    for k, what in ((drawn, ""), (1, _(" (top-1 routing)")), (W_r.shape[1], _(" (every expert)"))):
        got = lab.call(
            "route",
            x,
            W_r,
            k,
            text=with_inputs(f"route(x, W_r, {k})", f"x {x.shape}, W_r {W_r.shape}", random=True) + what,
        )
        expected, wrong = ref.moe_router.route(x, W_r, k), Answers.live(partial(route_variants, ref), x, W_r, k)
        for index, part in enumerate(got.parts("indices", "gates")):
            exact = dict(rtol=0, atol=0) if index == 0 else {}
            expect_close(part, expected[index], wrong=wrong.part(index), **exact)


def _layer_answers(ref, args: tuple, kwargs: dict) -> dict:
    """The wrong outputs of the probe ``affine_moe_layer(x, W_r, A, b, k)`` (its experts are ``A[e] x + b[e]``)."""
    x, W_r, A, b, k = args
    return moe_layer_variants(ref, x, W_r, [affine_expert(A, b, e) for e in range(len(A))], k)


@pytest.mark.points(1)
def test_random_moe_layer(lab: Lab, ref, rng: np.random.Generator) -> None:
    """Random tokens, router and affine experts: the output, and each expert called only with its routed tokens"""
    x, W_r, k = _router(rng)
    n_experts, d = W_r.shape[1], x.shape[1]
    A, b = rng.normal(size=(n_experts, d, d)) / np.sqrt(d), rng.normal(size=(n_experts, d))
    experts = [affine_expert(A, b, e) for e in range(n_experts)]
    expected = ref.moe_router.moe_layer(x, W_r, experts, k)
    got = lab.probe(
        "affine_moe_layer",
        x,
        W_r,
        A,
        b,
        k,
        text=ngettext(
            "{call} with random x {shape} and {count} affine expert",
            "{call} with random x {shape} and {count} affine experts",
            n_experts,
        ).format(call=f"moe_layer(x, W_r, experts, {k})", shape=x.shape, count=n_experts),
    )
    expect_close(got, expected, wrong=Answers.of_call((x, W_r, A, b, k), {}, partial(_layer_answers, ref)))
    text = ngettext(
        "{call} with random x {shape} and {count} affine expert that answers only the tokens routed to it",
        "{call} with random x {shape} and {count} affine experts that answer only the tokens routed to them",
        n_experts,
    ).format(call=f"moe_layer(x, W_r, experts, {k})", shape=x.shape, count=n_experts)
    expect_routed_calls(lab, x, W_r, A, b, k, ref.moe_router.route(x, W_r, k)[0], expected, text)


@pytest.mark.points(1)
def test_random_load_and_size(lab: Lab, ref, rng: np.random.Generator) -> None:
    """expert_load of random choices and moe_params of a random model, compared with the reference"""
    n_experts, k, n = int(rng.integers(3, 10)), 2, int(rng.integers(4, 20))
    indices = np.stack([rng.choice(n_experts, size=k, replace=False) for _ in range(n)])
    got = lab.call(
        "expert_load",
        indices,
        n_experts,
        text=_("{call} with random indices of shape {shape}").format(
            call=f"expert_load(indices, {n_experts})", shape=indices.shape
        ),
    )
    expect_close(
        got,
        ref.moe_router.expert_load(indices, n_experts),
        wrong=Answers.live(partial(expert_load_variants, ref), indices, n_experts),
    )
    d, layers, experts, top_k = (
        int(rng.choice([512, 1024, 2048, 5120])),
        int(rng.integers(2, 80)),
        int(rng.integers(2, 65)),
        int(rng.integers(1, 3)),
    )
    got = lab.call("moe_params", d, layers, experts, top_k, text=f"moe_params({d}, {layers}, {experts}, {top_k})")
    expected, wrong = (
        ref.moe_router.moe_params(d, layers, experts, top_k),
        Answers.live(partial(moe_params_variants, ref), d, layers, experts, top_k),
    )
    for index, part in enumerate(got.parts("total", "active")):
        expect_close(as_number(part), expected[index], wrong=wrong.part(index), **COUNT)
