"""Public checks of step 9, multi-head attention and the block: the chapter's tables of section 7.3.

Attention weights are read through ``multi_head``: a head whose value
projection maps the three tokens to the identity (``X @ READOUT = I``) returns
its attention matrix as its output.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _
from autograder.judge import cases
from autograder.judge.cases import block as case
from autograder.judge.checking import Lab, expect_case, expect_close, expect_that
from autograder.judge.checks.weights import WORKED_AXES, WORKED_ROW
from autograder.judge.diagnose import answers

pytestmark = pytest.mark.step("block")

X, HEAD1, HEAD2, W_O, W1, b1, W2, b2 = case.X, case.HEAD1, case.HEAD2, case.W_O, case.W1, case.b1, case.W2, case.b2
READOUT = case.READOUT
HEADS = N_("{call} with the chapter's heads [(W_Q, W_K, W_V), (W_Q2, W_K2, W_V2)] and {rest}")
ONE_HEAD = "multi_head(X, [(W_Q, W_K, R)], I)"
ONE_HEAD_WEIGHTS = N_("{call} with R = pinv(X), so V = I and the output is the attention matrix")
HEAD2_WEIGHTS = N_("{call} with R = pinv(X), so V = I and the output is the attention matrix of head 2")
RESIDUAL_TABLE = N_("{call} with x the chapter's residual table (3 x 4)")
CHANGED = N_("{head}, {change}")  # the one-head read-out with one change to its weights


@pytest.mark.points(1)
def test_head2_weights(lab: Lab) -> None:
    """Head 2 alone gives the chapter's second attention matrix; kedi spends 92% on the verb"""
    got = lab.call(
        "multi_head",
        X,
        [(HEAD2[0], HEAD2[1], READOUT)],
        np.eye(3),
        text=_(HEAD2_WEIGHTS).format(call="multi_head(X, [(W_Q2, W_K2, R)], I)"),
    )
    A2 = expect_close(got, chapter.value("T731-A2"), wrong=cases.wrong("block_head2_weights"), **WORKED_AXES)
    expect_that(
        got,
        abs(100 * A2[0, 2] - chapter.value("T731-kedi92")) < 0.01,
        _("{share} from kedi to içti").format(share="92.34%"),
        f"{100 * A2[0, 2]:.4g}%",
    )


@pytest.mark.points(1)
def test_concatenation(lab: Lab) -> None:
    """With W_O = I, multi_head returns the concatenation [head 1 | head 2]"""
    got = lab.call(
        "multi_head",
        X,
        [HEAD1, HEAD2],
        np.eye(4),
        text=_(HEADS).format(call="multi_head(X, heads, I)", rest="W_O = I (4 x 4)"),
    )
    concat = expect_close(got, chapter.value("T732-concat"), wrong=cases.wrong("block_concat"))
    expect_that(
        got,
        abs(concat[0, 0] - chapter.value("T732-07444-07646")[0]) < 1e-4,
        _("{value} for kedi's first component").format(value="0.7444"),
        f"{concat[0, 0]:.6g}",
    )


@pytest.mark.points(1)
def test_output_projection(lab: Lab) -> None:
    """Concat times W_O: kedi's 0.7444 becomes 0.7646, and attention adds 0.6438, 0.7139, 0.8310, 0.8310"""
    got = lab.call(
        "multi_head",
        X,
        [HEAD1, HEAD2],
        W_O,
        text=_(HEADS).format(call="multi_head(X, heads, W_O)", rest=_("the chapter's {names}").format(names="W_O")),
    )
    out = expect_close(got, chapter.value("T732-WO"), wrong=cases.wrong("block_multi_head"))
    expect_close(got.with_value(out[0, :1]), chapter.value("T732-07444-07646")[1:])
    expect_close(got.with_value(np.array([out[2, 0], out[2, 1], out[0, 2], out[1, 2]])), chapter.value("T733-gain"))


@pytest.mark.points(1)
def test_constant_feature(lab: Lab) -> None:
    """X's constant fourth feature: no effect through W_K, +0.1 through W_V, a change of 0.1592 through W_Q"""
    A = chapter.value("T72-A")
    for row in (case.CONSTANT_ROW, np.array([-1.3, 2.1]), np.array([4.0, 0.5])):
        W_K = case.with_row4(HEAD1[1], row)
        got = lab.call(
            "multi_head",
            X,
            [(HEAD1[0], W_K, READOUT)],
            np.eye(3),
            text=_(CHANGED).format(
                head=_(ONE_HEAD_WEIGHTS).format(call=ONE_HEAD),
                change=_("W_K's row 4 set to {row} (key side)").format(row=row.tolist()),
            ),
        )
        A_key = got.array((3, 3))
        change = float(np.max(np.abs(A_key - A)))
        expect_that(
            got,
            change <= 1e-6 + chapter.value("T733-keyside"),
            _("the head-1 attention matrix unchanged (a constant key feature cancels in each row's softmax)"),
            _("a change of {value}").format(value=f"{change:.3g}"),
            value=A_key,
            wrong=cases.wrong("block_key_side"),
        )
    V_text = _("{call} minus the same with W_V's row 4 set to 0 (value side)").format(
        call="multi_head(X, [(W_Q, W_K, W_V)], I)"
    )
    with_row = lab.call("multi_head", X, [HEAD1], np.eye(2), text=V_text)
    without_row = lab.call(
        "multi_head", X, [(HEAD1[0], HEAD1[1], case.with_row4(HEAD1[2], [0.0, 0.0]))], np.eye(2), text=V_text
    )
    expect_close(with_row, chapter.value("T72-AV"), wrong=cases.wrong("block_head1"))
    expect_close(
        without_row.with_value(with_row.array((3, 2)) - without_row.array((3, 2))), chapter.value("T733-valueside")
    )
    got = lab.call(
        "multi_head",
        X,
        [(case.with_row4(HEAD1[0], case.CONSTANT_ROW), HEAD1[1], READOUT)],
        np.eye(3),
        text=_(CHANGED).format(
            head=_(ONE_HEAD_WEIGHTS).format(call=ONE_HEAD),
            change=_("W_Q's row 4 set to {row} (query side)").format(row="[0.9, -0.7]"),
        ),
    )
    A_query = expect_case(got, "block_query_side", **WORKED_AXES)
    example = chapter.value("T713-ex4b")
    expect_close(got.with_value(A_query[2]), example["new_row"], **WORKED_ROW)
    expect_close(got.with_value(A_query[2] - A[2]), example["delta"], **WORKED_ROW)
    expect_close(got.with_value(np.asarray(np.max(np.abs(A_query - A)))), chapter.value("T733-queryside"))


@pytest.mark.points(0.5)
def test_exercise_5(lab: Lab) -> None:
    """W_Q and W_K scaled by 1/sqrt(3), still divided by sqrt(2): içti's row flattens to [0.3814, 0.4036, 0.2151]"""
    got = lab.call(
        "multi_head",
        X,
        [(HEAD1[0] / np.sqrt(3), HEAD1[1] / np.sqrt(3), READOUT)],
        np.eye(3),
        text=_(CHANGED).format(
            head=_(ONE_HEAD_WEIGHTS).format(call=ONE_HEAD),
            change=_("W_Q and W_K divided by {value}").format(value="sqrt(3)"),
        ),
    )
    weights = got.array((3, 3))
    row = got.with_value(weights[2])
    expect_close(
        row,
        chapter.value("T713-ex5")["keep_div_sqrt2"],
        wrong=answers.derived(cases.wrong("block_exercise5"), lambda v: v[2]),
        **WORKED_ROW,
    )


@pytest.mark.points(1)
def test_residual(lab: Lab) -> None:
    """The residual X + MultiHead(X) (block with W2 = 0), and X itself when W_O = 0 too"""
    zeros = np.zeros((8, 4))
    got = lab.call(
        "block",
        X,
        [HEAD1, HEAD2],
        W_O,
        W1,
        b1,
        zeros,
        b2,
        text=_(HEADS).format(
            call="block(X, heads, W_O, W1, b1, W2, b2)", rest=_("the chapter's {names}").format(names="W_O, W1, b1")
        )
        + ", W2 = 0",
    )
    expect_close(got, chapter.value("T735-residual"), wrong=cases.wrong("block_residual"))
    got = lab.call(
        "block",
        X,
        [HEAD1, HEAD2],
        np.zeros((4, 4)),
        W1,
        b1,
        zeros,
        np.zeros(4),
        text=_(HEADS).format(call="block(X, heads, W_O, W1, b1, W2, b2)", rest="W_O = 0, W2 = 0, b2 = 0"),
    )
    out = expect_close(got, X, wrong=cases.wrong("block_pass_through"))
    expect_close(got.with_value(np.linalg.norm(out, axis=-1)), chapter.value("T739-norm-in"))


@pytest.mark.points(1.5)
def test_layer_norm(lab: Lab) -> None:
    """LayerNorm of the residual (population variance, eps = 1e-5): rows of mean 0 and std 0.99998, 0.99998, 0.99983"""
    got = lab.call("layer_norm", case.RESIDUAL, text=_(RESIDUAL_TABLE).format(call="layer_norm(x)"))
    N = expect_close(got, chapter.value("T735-LN"), wrong=cases.wrong("block_layer_norm"))
    moments = chapter.value("T735-LN-moments")
    expect_close(got.with_value(N.mean(axis=-1)), moments[0])
    expect_close(
        got.with_value(N.std(axis=-1)),
        moments[1],
        wrong=answers.derived(cases.wrong("block_layer_norm"), lambda v: v.std(axis=-1)),
    )
    expect_close(got.with_value(N[:, 3]), chapter.value("T736-sabit-neg"))
    miss = -(N[2] @ W1[:, 0] + b1[0])  # içti's pre-activation of the canlı+eylem detector
    expect_close(got.with_value(np.asarray(miss)), chapter.value("T736-icti-miss"))


@pytest.mark.points(0.5)
def test_layer_norm_of_tokens(lab: Lab) -> None:
    """LayerNorm of the raw tokens: the single-feature detectors would fire (0.9739), içti's sıvı+eylem would not
    (-0.198)"""
    got = lab.call("layer_norm", X, text=_("{call} with the three raw token vectors").format(call="layer_norm(X)"))
    N = expect_case(got, "block_layer_norm_tokens")
    pre = N @ W1 + b1  # (3, 8) pre-activations
    expect_close(got.with_value(np.array([pre[0, 3], pre[1, 4], pre[2, 5]])), chapter.value("T736-single-raw"))
    expect_close(got.with_value(np.asarray(pre[2, 1])), chapter.value("T736-raw-pre"))


@pytest.mark.points(0.5)
def test_rms_norm(lab: Lab) -> None:
    """rms_norm divides each row by sqrt(mean(x**2) + eps) and subtracts nothing"""
    x = case.RESIDUAL
    got = lab.call("rms_norm", x, text=_(RESIDUAL_TABLE).format(call="rms_norm(x)"))
    expect_close(got, x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-5), wrong=cases.wrong("block_rms_norm"))
    x = case.INPUTS["x_small"]
    got = lab.call(
        "rms_norm",
        x,
        text=_("{call} with x of shape {shape} whose rows are small (eps matters)").format(
            call="rms_norm(x)", shape="(3, 4, 5)"
        ),
    )
    expect_close(
        got, x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-5), wrong=cases.wrong("block_rms_norm_small")
    )


@pytest.mark.points(1)
def test_detectors(lab: Lab) -> None:
    """The FFN's eight detectors on the normalised residual; rows 3, 7 and 8 never fire"""
    got = lab.call(
        "feed_forward",
        case.LN_TABLE,
        W1,
        b1,
        np.eye(8),
        np.zeros(8),
        text=_("{call} with N the chapter's LayerNorm table, so the output is {output}").format(
            call="feed_forward(N, W1, b1, I, 0)", output="ReLU(N W1 + b1)"
        ),
    )
    detectors = expect_close(
        got, chapter.value("T736-detectors").T, wrong=cases.wrong("block_detectors")
    ).T  # (8 detectors, 3 tokens)
    expect_close(got.with_value(np.asarray(detectors[1, 2])), chapter.value("T736-icti-after"))
    expect_close(got.with_value(detectors[[2, 6, 7]]), chapter.value("T736-unused"))


@pytest.mark.points(1)
def test_block_output(lab: Lab) -> None:
    """The worked block's output x + FFN(N(x)); its row norms grow to 2.66, 2.66, 2.20"""
    got = lab.call(
        "block",
        X,
        [HEAD1, HEAD2],
        W_O,
        W1,
        b1,
        W2,
        b2,
        text=_(HEADS).format(
            call="block(X, heads, W_O, W1, b1, W2, b2)",
            rest=_("the chapter's {names}").format(names="W_O, W1, b1, W2, b2"),
        ),
    )
    out = expect_close(got, chapter.value("T736-block"), wrong=cases.wrong("block_worked"))
    expect_close(got.with_value(np.linalg.norm(out, axis=-1)), chapter.value("T739-norm-out"))
    Xb = case.RANDOM_BLOCK[0]
    got = lab.call(
        "block",
        *case.RANDOM_BLOCK,
        text=_("{call} with X of shape {shape}, three heads of d_k = 3, d_v = 2, and nonzero b1, b2").format(
            call="block(X, heads, W_O, W1, b1, W2, b2)", shape=Xb.shape
        ),
    )
    expect_case(got, "block_random")
