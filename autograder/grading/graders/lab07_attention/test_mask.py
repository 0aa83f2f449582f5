"""Public checks of step 3, the causal mask: its pattern, its offset, and what it does to attention."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import N_, _, ngettext
from autograder.judge import cases, messages
from autograder.judge.cases import core
from autograder.judge.checking import Lab, expect_case, expect_close, expect_rounding, expect_that, with_inputs
from autograder.judge.checks.mask import expect_prefix_unchanged
from autograder.judge.checks.weights import WEIGHT_AXES, WORKED_AXES, expect_weight_rows

pytestmark = pytest.mark.step("mask")

MASKED = -1e9  # a fill at or below this (or -inf) is as good as -inf in float64
X_NEXT = N_("{call} with the worked example and x_next = [0.3, 0.3, 0.3, 0.5]")


@pytest.mark.points(1)
def test_causal_pattern(lab: Lab) -> None:
    """causal_mask(4) is True on and below the diagonal"""
    got = lab.call("causal_mask", 4, text="causal_mask(4)")
    mask = got.array((4, 4))
    expect_that(got, mask.dtype == bool, _("a bool array"), _("dtype {dtype}").format(dtype=mask.dtype))
    expect_case(got, "causal_4", **WEIGHT_AXES)


@pytest.mark.points(1)
def test_causal_offset(lab: Lab) -> None:
    """causal_mask(2, 5) lets the last two positions see every earlier key"""
    got = lab.call("causal_mask", 2, 5, text=_("causal_mask(2, 5) (two new queries against five keys)"))
    expect_case(got, "causal_2_5", **WEIGHT_AXES)


@pytest.mark.points(1)
def test_apply_mask(lab: Lab) -> None:
    """apply_mask puts -inf where the mask is False and keeps the other scores"""
    scores, mask = core.INPUTS["S45"][:2], core.CAUSAL25
    got = lab.call(
        "apply_mask",
        scores,
        mask,
        text=with_inputs("apply_mask(scores, mask)", "scores (2, 5), causal_mask(2, 5)"),
    )
    out = got.array(scores.shape)
    blocked_ok = bool(np.all(out[~mask] <= MASKED))
    expect_that(
        got,
        blocked_ok,
        _("-inf at the masked entries"),
        messages.entries(out[~mask]),
        value=out,
        wrong=cases.wrong("apply_mask_25"),
    )
    kept = np.where(mask, out, 0.0)
    expect_close(got.with_value(kept), np.where(mask, scores, 0.0), **WEIGHT_AXES)


@pytest.mark.points(2)
def test_masked_worked_example(lab: Lab) -> None:
    """With the causal mask the worked example's weights are lower triangular, rows sum to 1"""
    Q, K, V = core.Q_CH, core.K_CH, core.V_CH
    got = lab.probe(
        "causal_attention",
        Q,
        K,
        V,
        text=_("{call} with the worked example").format(call="attention(Q, K, V, causal_mask(3))"),
    )
    output, weights = got.parts("output", "weights")
    w = weights.array((3, 3))
    expect_that(
        weights,
        bool(np.all(w[~core.CAUSAL3] == 0.0)),
        _("weights of exactly 0 above the diagonal"),
        messages.entries(w[~core.CAUSAL3]),
        value=w,
        wrong=cases.wrong("masked_worked", 1),
    )
    expect_case(weights, "masked_worked", 1, **WORKED_AXES)
    expect_case(output, "masked_worked", 0)


@pytest.mark.points(1)
def test_masked_with_offset(lab: Lab) -> None:
    """Two queries against five keys with causal_mask(2, 5)"""
    got = lab.probe(
        "causal_attention",
        core.INPUTS["Q2"],
        core.INPUTS["K5"],
        core.INPUTS["V5"],
        text=with_inputs("attention(Q, K, V, causal_mask(2, 5))", "Q (2, 4), K (5, 4), V (5, 3)"),
    )
    output, weights = got.parts("output", "weights")
    expect_weight_rows(weights, wrong=cases.wrong("masked_2_5", 1), expected=cases.expected("masked_2_5", 1))
    expect_case(weights, "masked_2_5", 1, **WEIGHT_AXES)
    expect_case(output, "masked_2_5", 0)


@pytest.mark.points(2)
def test_earlier_outputs_unchanged(lab: Lab) -> None:
    """Appending a token leaves the earlier outputs unchanged under the causal mask"""
    Q6, K6, V6 = core.INPUTS["Q6"], core.INPUTS["K6"], core.INPUTS["V6"]
    full = lab.probe(
        "causal_attention",
        Q6,
        K6,
        V6,
        text=ngettext("{call} with {count} token", "{call} with {count} tokens", 6).format(
            call="attention(Q, K, V, causal_mask(6))", count=6
        ),
    )
    output, _weights = full.parts("output", "weights")
    short = lab.probe(
        "causal_attention",
        Q6[:5],
        K6[:5],
        V6[:5],
        text=ngettext(
            "{call} with the first {count} of those tokens", "{call} with the first {count} of those tokens", 5
        ).format(call="attention(Q, K, V, causal_mask(5))", count=5),
    )
    first, _weights = short.parts("output", "weights")
    earlier = output.array((6, 3))[:5]
    change = float(np.max(np.abs(first.array(earlier.shape) - earlier)))
    expect_rounding(
        first,
        change,
        ngettext(
            "the output at the first {count} position unchanged when a sixth token is appended: a change",
            "the outputs at the first {count} positions unchanged when a sixth token is appended: a change",
            5,
        ).format(count=5),
        scale=float(np.abs(earlier).max()),
    )
    expect_case(output, "masked_6", 0)


@pytest.mark.points(2)
def test_prefix_change(lab: Lab) -> None:
    """prefix_change is 0 with the causal mask and clearly above 0 without it"""
    x_next = np.array([0.3, 0.3, 0.3, 0.5])
    got = expect_prefix_unchanged(
        lab, core.X, core.W_Q, core.W_K, core.W_V, x_next, text=lambda call: _(X_NEXT).format(call=call)
    )
    change = got.number()
    expect_that(got, change > 1e-3, _("a change clearly above 0 without the mask"), f"{change:.6g}")
