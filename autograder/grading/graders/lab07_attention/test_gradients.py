"""Public checks of step 10, gradients of one head: the chapter's two-token head and a known function."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _
from autograder.judge import cases
from autograder.judge.cases import gradients as case
from autograder.judge.checking import Lab, expect_case, expect_close, expect_that, with_inputs
from autograder.judge.diagnose import answers
from autograder.judge.diagnose.gradients import difference_answers, gradcheck_answers
from autograder.sandbox.probes.gradients import smooth_gradient

pytestmark = pytest.mark.step("gradients")

Q, K, V, dO = case.RU_Q, case.RU_K, case.RU_V, case.RU_dO
HEAD = N_("{call} with the chapter's two-token head {head} and {upstream}")
TWO_TOKENS = "Q = [[0, 3], [2, -1]], K = [[3, 0], [-1, 2]], V = [[3, -3], [1, 3]]"
BACKWARD = "attention_backward(Q, K, V, dO)"
X_AFTER = N_("x after the call")
GRADCHECK = N_("{call} with the default h for {loss}")  # the numerical gradient of a head's loss
SMOOTH = "f(x) = sum(sin(x) * w) + (sum(x * u))**2 / 2"


def _head(call: str = BACKWARD, upstream: str = "dO = I") -> str:
    """A call on the chapter's two-token head with the upstream gradient ``upstream``, described."""
    return _(HEAD).format(call=call, head=TWO_TOKENS, upstream=upstream)


GRADCHECK_TOL = 2e-6  # the chapter's tolerance for its gradient check (step 1e-6)


@pytest.mark.points(1.5)
def test_russian_head_dV(lab: Lab) -> None:
    """dV = A^T dO for dO = I, and <dV, V> gives back L = O_00 + O_11 = -1.966576"""
    got = lab.call("attention_backward", Q, K, V, dO, text=_head())
    _dQ, _dK, dV = got.parts("dQ", "dK", "dV")
    grad_V = expect_close(dV, chapter.value("RU-dV"), wrong=cases.wrong("grad_russian", 2))
    loss = np.asarray(np.sum(grad_V * V))  # O = A V is linear in V, so L = <A V, dO> = <V, A^T dO>
    expect_close(
        dV.with_value(loss),
        chapter.value("RU-L"),
        wrong=answers.derived(cases.wrong("grad_russian", 2), lambda v: np.sum(v * V)),
    )


@pytest.mark.points(1.5)
def test_russian_head_dQ_dK(lab: Lab) -> None:
    """dQ = dS K / sqrt(2) and dK = dS^T Q / sqrt(2) for dO = I"""
    got = lab.call("attention_backward", Q, K, V, dO, text=_head())
    dQ, dK, _dV = got.parts("dQ", "dK", "dV")
    expect_close(dQ, chapter.value("RU-dQ"), wrong=cases.wrong("grad_russian", 0))
    expect_close(dK, chapter.value("RU-dK"), wrong=cases.wrong("grad_russian", 1))


@pytest.mark.points(0.5)
def test_rectangular_head(lab: Lab) -> None:
    """A head with 3 queries, 5 keys, d_k = 4 and d_v = 2"""
    got = lab.call(
        "attention_backward",
        *case.RECTANGULAR,
        text=with_inputs(BACKWARD, "Q (3, 4), K (5, 4), V (5, 2), dO (3, 2)"),
    )
    for index, part in enumerate(got.parts("dQ", "dK", "dV")):
        expect_case(part, "grad_rectangular", index, atol=1e-5)


@pytest.mark.points(0.5)
def test_value_terms(lab: Lab) -> None:
    """dO that reads one query row gives dV[j] = A_ij, hence the terms A_ij v_j of the output"""
    terms = []
    for row, name in ((0, "grad_russian_row0"), (1, "grad_russian_row1")):
        upstream = case.ROW_0 if row == 0 else case.ROW_1
        got = lab.call(
            "attention_backward",
            Q,
            K,
            V,
            upstream,
            text=_head(upstream=f"dO = {upstream.astype(int).tolist()}"),
        )
        _dQ, _dK, dV = got.parts("dQ", "dK", "dV")
        grad_V = expect_case(dV, name, 2)
        terms += [grad_V[0] * V[0], grad_V[1] * V[1]]  # A_i0 v_0, A_i1 v_1
    expect_close(dV.with_value(np.array(terms)), chapter.value("RU-terms"))


@pytest.mark.points(1)
def test_single_token(lab: Lab) -> None:
    """One token: A = [1], so dQ = dK = 0 and dV = dO"""
    q, k, v, upstream = case.SINGLE
    got = lab.call(
        "attention_backward",
        q,
        k,
        v,
        upstream,
        text=_("{call} with one token, {inputs}").format(
            call="attention_backward(q, k, v, dO)", inputs="v = [5, -2], dO = [0.7, -1.3]"
        ),
    )
    dQ, dK, dV = got.parts("dQ", "dK", "dV")
    single = chapter.value("RU-single")
    zero = np.asarray(single["dS"]) @ k  # dS = 0, so dQ = dS k / sqrt(d_k) = 0
    expect_close(dQ, zero, wrong=cases.wrong("grad_single", 0))
    expect_close(dK, zero, wrong=cases.wrong("grad_single", 1))
    expect_close(dV, np.asarray(single["A"]).T @ upstream, wrong=cases.wrong("grad_single", 2))


@pytest.mark.points(1)
def test_central_difference(lab: Lab) -> None:
    """central_difference of f(x) = sum(sin(x) w) + (x . u)^2 / 2 matches cos(x) w + (x . u) u and leaves x alone"""
    rng = np.random.default_rng(11)
    x, w, u = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    h = 1e-3
    got = lab.probe(
        "numerical_gradient",
        x,
        w,
        u,
        h,
        text=_("{call} with {function} and x of shape {shape}").format(
            call="central_difference(f, x, h=1e-3)", function=SMOOTH, shape="(3, 4)"
        ),
    )
    grad, x_after = got.parts("gradient", X_AFTER)
    expect_close(grad, smooth_gradient(x, w, u), wrong=difference_answers(x, w, u, h), atol=1e-5)
    expect_that(
        x_after,
        np.array_equal(x_after.array(x.shape), x),
        _("x unchanged after the call"),
        _("x changed by the call"),
        mistake="central_modifies_input",
    )
    got = lab.probe(
        "numerical_gradient",
        x[0],
        w[0],
        u[0],
        text=_("{call} with the default h, the same f and x of shape {shape}").format(
            call="central_difference(f, x)", shape="(4,)"
        ),
    )
    grad, _x_after = got.parts("gradient", X_AFTER)
    expect_close(grad, smooth_gradient(x[0], w[0], u[0]), wrong=difference_answers(x[0], w[0], u[0]))


@pytest.mark.points(1)
def test_gradcheck(lab: Lab) -> None:
    """All 12 gradient coordinates of the two-token head agree with central differences within 2e-6"""
    numeric = lab.probe(
        "head_gradcheck",
        Q,
        K,
        V,
        dO,
        text=_head(_(GRADCHECK).format(call="central_difference(L, ·)", loss="L = sum(attention(Q, K, V)[0] * dO)")),
    )
    analytic = lab.call("attention_backward", Q, K, V, dO, text=_head())
    names = ("dQ", "dK", "dV")
    for index, (num, ana, entry, wrt) in enumerate(
        zip(numeric.parts(*names), analytic.parts(*names), ("RU-dQ", "RU-dK", "RU-dV"), (Q, K, V))
    ):
        expect_close(num, chapter.value(entry), wrong=gradcheck_answers(Q, K, V, dO, index), rtol=0, atol=GRADCHECK_TOL)
        # the analytic gradient is held to the chapter's gradient, never to the student's own central differences:
        # two values from the student's process agreeing with each other prove nothing
        gap = float(np.max(np.abs(ana.array(wrt.shape) - chapter.value(entry))))
        expect_that(
            ana,
            gap <= max(GRADCHECK_TOL, chapter.value("RU-gradcheck")),
            _(
                "the chapter's gradient within {tolerance}, the gradient check's tolerance (the chapter's largest gap "
                "is {gap})"
            ).format(tolerance=f"{GRADCHECK_TOL:g}", gap=f"{chapter.value('RU-gradcheck'):.1e}"),
            _("a gap of {value}").format(value=f"{gap:.3g}"),
            value=ana.array(),
            wrong=cases.wrong("grad_russian", index),
        )
