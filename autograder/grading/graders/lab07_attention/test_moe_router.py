"""Public checks of step 6, the mixture-of-experts router: top-k choice, gates, sparse calls, load, size."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _, ngettext
from autograder.judge import cases, messages
from autograder.judge.cases import moe_router as moe
from autograder.judge.checking import Lab, as_number, expect_case, expect_close, expect_that
from autograder.judge.checks.moe_router import expect_routed_calls

pytestmark = pytest.mark.step("moe_router")

X, W_r, A, b = (moe.INPUTS[name] for name in ("x", "W_r", "A", "b"))
N_EXPERTS = moe.N_EXPERTS
PUBLIC = N_("{call} with fixed x (6 tokens, d = 4) and W_r (5 experts)")
AFFINE = N_("{call} with fixed x (6 tokens, d = 4) and W_r (5 experts) and affine experts")
GATED = N_(
    "{call} with fixed x (6 tokens, d = 4) and W_r (5 experts) and affine experts that answer only the tokens "
    "routed to them"
)
EXACT = 0.5  # counts of weights are integers: no tolerance beyond rounding to the integer


@pytest.mark.points(1)
def test_route_indices(lab: Lab) -> None:
    """route(x, W_r, 2) picks each token's two best experts, best first"""
    got = lab.call("route", X, W_r, 2, text=_(PUBLIC).format(call="route(x, W_r, 2)"))
    indices, _gates = got.parts("indices", "gates")
    expect_case(indices, "route_public", 0, rtol=0, atol=0)


@pytest.mark.points(1.5)
def test_route_gates(lab: Lab) -> None:
    """The gates are the softmax over the chosen scores: each token's gates sum to 1"""
    got = lab.call("route", X, W_r, 2, text=_(PUBLIC).format(call="route(x, W_r, 2)"))
    _indices, gates = got.parts("indices", "gates")
    sums = gates.array((6, 2)).sum(axis=-1)
    wrong = cases.wrong("route_public", 1)
    expect_that(
        gates,
        bool(np.allclose(sums, chapter.value("T77-gate"), atol=1e-6)),
        _("gates that sum to 1 for every token"),
        _("sums {values}").format(values=messages.entries(sums)),
        value=gates.value,
        wrong=wrong,
    )
    expect_close(gates, cases.expected("route_public", 1), wrong=wrong)


@pytest.mark.points(0.5)
def test_route_batch_axes(lab: Lab) -> None:
    """route keeps leading batch axes: x (2, 3, 4) with k = 3 gives (2, 3, 3)"""
    got = lab.call(
        "route",
        moe.INPUTS["x_batch"],
        W_r,
        3,
        text=ngettext(
            "{call} with x of shape {shape} and {count} expert", "{call} with x of shape {shape} and {count} experts", 5
        ).format(call="route(x, W_r, 3)", shape="(2, 3, 4)", count=5),
    )
    indices, gates = got.parts("indices", "gates")
    expect_case(indices, "route_batch", 0, rtol=0, atol=0)
    expect_case(gates, "route_batch", 1)


@pytest.mark.points(1)
def test_route_ties(lab: Lab) -> None:
    """Equal scores are ranked by expert index, lower index first"""
    text = _("{call} with x = I, so the scores are the rows {rows} (ties: lower expert index first)").format(
        call="route(x, W_r, 3)", rows="[1, 2, 2, 0, 2], [3, 1, 1, 1, 0], [0.5, 0.5, 0.5, 0.5, 0.5]"
    )
    got = lab.call("route", moe.TIE_X, moe.TIE_W_r, 3, text=text)
    indices, gates = got.parts("indices", "gates")
    expect_close(indices, moe.TIE_INDICES, wrong=cases.wrong("route_ties", 0), rtol=0, atol=0)
    expect_case(gates, "route_ties", 1)


@pytest.mark.points(1.5)
def test_moe_layer_output(lab: Lab) -> None:
    """moe_layer gives each token the gate-weighted sum of its k experts' outputs"""
    got = lab.probe("affine_moe_layer", X, W_r, A, b, 2, text=_(AFFINE).format(call="moe_layer(x, W_r, experts, 2)"))
    expect_case(got, "moe_layer_public")


@pytest.mark.points(1.5)
def test_moe_layer_calls_only_routed_experts(lab: Lab) -> None:
    """Each expert is called with exactly the tokens routed to it"""
    expect_routed_calls(
        lab,
        X,
        W_r,
        A,
        b,
        2,
        cases.expected("route_public", 0),
        cases.expected("moe_layer_public"),
        _(GATED).format(call="moe_layer(x, W_r, experts, 2)"),
    )


@pytest.mark.points(1)
def test_expert_load(lab: Lab) -> None:
    """expert_load gives each expert's share of the (token, slot) pairs; the shares sum to 1"""
    got = lab.call(
        "expert_load",
        moe.LOAD_INDICES,
        6,
        text=_("{call} with indices {indices}").format(
            call="expert_load(indices, 6)", indices=moe.LOAD_INDICES.tolist()
        ),
    )
    load = got.array((6,)).astype(float)
    wrong = cases.wrong("expert_load_public")
    expect_that(
        got,
        abs(load.sum() - 1.0) < 1e-9,
        _("shares that sum to 1"),
        _("shares that sum to {total}").format(total=f"{load.sum():.6g}"),
        value=load,
        wrong=wrong,
    )
    expect_close(got, cases.expected("expert_load_public"), wrong=wrong)


@pytest.mark.points(1)
def test_moe_params(lab: Lab) -> None:
    """moe_params(4096, 32, 8, 2) gives 36.5e9 total and 10.7e9 active; one expert gives the dense 6.4e9"""
    got = lab.call(
        "moe_params", 4096, 32, 8, 2, text=_("{call} (8 experts, top-2)").format(call="moe_params(4096, 32, 8, 2)")
    )
    total, active = (as_number(part) for part in got.parts("total", "active"))
    expect_close(
        total, chapter.value("T77-total") * 1e9, wrong=cases.wrong("moe_params_mixtral", 0), rtol=0, atol=EXACT
    )
    expect_close(
        active, chapter.value("T77-active") * 1e9, wrong=cases.wrong("moe_params_mixtral", 1), rtol=0, atol=EXACT
    )
    got = lab.call(
        "moe_params",
        4096,
        32,
        1,
        1,
        text=_("{call} (a dense model: one expert)").format(call="moe_params(4096, 32, 1, 1)"),
    )
    for index, part in enumerate(got.parts("total", "active")):
        expect_close(
            as_number(part),
            chapter.value("T77-dense") * 1e9,
            wrong=cases.wrong("moe_params_dense", index),
            rtol=0,
            atol=EXACT,
        )
    dense = chapter.value("T77-dense") * 1e9
    ratios = total.with_value(
        np.array([total.value / dense, active.value / dense, 100 * active.value / total.value])
    )  # [total / dense, active / dense, % active]
    expect_close(
        ratios, [chapter.value("T77-ratio-total"), chapter.value("T77-ratio-active"), chapter.value("T77-active-pct")]
    )
