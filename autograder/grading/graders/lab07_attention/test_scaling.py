"""Public checks of step 2, scaled dot-product attention: the worked example, shapes and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _
from autograder.judge import cases
from autograder.judge.cases import core
from autograder.judge.checking import Lab, expect_case, expect_close, expect_that, with_inputs
from autograder.judge.checks.weights import WEIGHT_AXES, WORKED_AXES, WORKED_ROW, WORKED_WEIGHTS, expect_weight_rows
from autograder.judge.diagnose.answers import Answers

pytestmark = pytest.mark.step("scaling")

X, W_Q, W_K, W_V = core.X, core.W_Q, core.W_K, core.W_V
Q, K, V = core.Q_CH, core.K_CH, core.V_CH
WORKED = N_("{call} with the worked example's Q, K, V (3 tokens, d_k = 2)")
RAW_TOKENS = N_("{call} with the three raw token vectors")


@pytest.mark.points(1)
def test_project(lab: Lab) -> None:
    """project(X, W_Q, W_K, W_V) gives the chapter's Q, K and V"""
    got = lab.call("project", X, W_Q, W_K, W_V, text=_("project(X, W_Q, W_K, W_V) with the worked example's matrices"))
    q, k, v = got.parts("Q", "K", "V")
    expect_close(q, chapter.value("T72-Q"), wrong=cases.wrong("project_worked", 0))
    expect_close(k, chapter.value("T72-K"), wrong=cases.wrong("project_worked", 1))
    expect_close(v, chapter.value("T72-V"))


@pytest.mark.points(1)
def test_scores(lab: Lab) -> None:
    """scores(Q, K) is the chapter's Q K^T (rows are the querying tokens)"""
    got = lab.call("scores", Q, K, text=_(WORKED).format(call="scores(Q, K)"))
    expect_close(got, chapter.value("T72-QKT"), wrong=cases.wrong("scores_worked"), **WORKED_AXES)


@pytest.mark.points(2)
def test_scaled_scores(lab: Lab) -> None:
    """scaled_scores(Q, K) divides Q K^T by sqrt(d_k)"""
    got = lab.call("scaled_scores", Q, K, text=_(WORKED).format(call="scaled_scores(Q, K)"))
    expect_close(got, chapter.value("T72-scaled"), wrong=cases.wrong("scaled_worked"), **WORKED_AXES)


@pytest.mark.points(1.5)
def test_worked_example_weights(lab: Lab) -> None:
    """The worked example's attention matrix, with the içti row [0.4230, 0.5012, 0.0759]"""
    got = lab.call("attention", Q, K, V, text=_(WORKED).format(call="attention(Q, K, V)"))
    _output, weights = got.parts("output", "weights")
    expect_weight_rows(
        weights, wrong=cases.wrong("attention_worked", 1), expected=chapter.value("T72-A"), **WORKED_WEIGHTS
    )
    expect_close(weights, chapter.value("T72-A"), wrong=cases.wrong("attention_worked", 1), **WORKED_WEIGHTS)
    expect_close(weights.with_value(weights.array()[2]), chapter.value("T72-A-icti"), **WORKED_ROW)


@pytest.mark.points(0.5)
def test_large_scores_are_stable(lab: Lab) -> None:
    """With scores in the thousands (the worked example's Q and K times 40) the weights stay finite rows of a softmax"""
    got = lab.call(
        "attention",
        *core.LARGE,
        text=_("attention(40 Q, 40 K, V) with the worked example's Q, K, V (scores near 1000)"),
    )
    output, weights = got.parts("output", "weights")
    expect_weight_rows(
        weights, wrong=cases.wrong("attention_large", 1), expected=cases.expected("attention_large", 1), **WORKED_AXES
    )
    expect_case(weights, "attention_large", 1, **WORKED_AXES)
    expect_case(output, "attention_large", 0)


@pytest.mark.points(2)
def test_worked_example_output(lab: Lab) -> None:
    """The worked example's output A V"""
    got = lab.call("attention", Q, K, V, text=_(WORKED).format(call="attention(Q, K, V)"))
    output, _weights = got.parts("output", "weights")
    expect_close(output, chapter.value("T72-AV"), wrong=cases.wrong("attention_worked", 0))


@pytest.mark.points(1)
def test_without_projections(lab: Lab) -> None:
    """Without projections, X X^T / sqrt(4) gives the içti row [0.2825, 0.2940, 0.4235]"""
    got = lab.call("scores", X, X, text=_(RAW_TOKENS).format(call="scores(X, X)"))
    expect_close(got, chapter.value("T712-XXT"), **WORKED_AXES)
    got = lab.call("attention", X, X, X, text=_(RAW_TOKENS).format(call="attention(X, X, X)") + " (d_k = 4)")
    _output, weights = got.parts("output", "weights")
    expect_close(weights, chapter.value("T712-noproj-full"), **WORKED_AXES)
    expect_close(weights.with_value(weights.array()[2]), chapter.value("T712-noproj-icti"), **WORKED_ROW)
    got = lab.call(
        "attention",
        np.array([[1.0], [2.0]]),
        np.array([[1.0], [2.0]]),
        np.eye(2),
        text=with_inputs("attention(Q, K, V)", "Q = K = [[1], [2]] (d_k = 1), V = I"),
    )
    _output, weights = got.parts("output", "weights")
    expect_close(weights, chapter.value("T712-dk1-A"), **WEIGHT_AXES)


@pytest.mark.points(1)
def test_one_head_with_gradients_example(lab: Lab) -> None:
    """The two-token head of the gradients section: A and O"""
    Q2, K2, V2 = (chapter.inputs(n) for n in ("RU_Q", "RU_K", "RU_V"))
    got = lab.call(
        "attention",
        Q2,
        K2,
        V2,
        text=with_inputs("attention(Q, K, V)", "Q = [[0, 3], [2, -1]], K = [[3, 0], [-1, 2]], V = [[3, -3], [1, 3]]"),
    )
    output, weights = got.parts("output", "weights")
    expect_close(weights, chapter.value("RU-A"), **WEIGHT_AXES)
    expect_close(output, chapter.value("RU-O"))
    same = N_("{call} with the same Q and K")
    expect_close(
        lab.call("scores", Q2, K2, text=_(same).format(call="scores(Q, K)")), chapter.value("RU-QKT"), **WEIGHT_AXES
    )
    expect_close(
        lab.call("scaled_scores", Q2, K2, text=_(same).format(call="scaled_scores(Q, K)")),
        chapter.value("RU-scaled"),
        **WEIGHT_AXES,
    )
    got = lab.call(
        "attention",
        np.array([[1.0, 0.0]]),
        np.eye(2),
        np.eye(2),
        text=with_inputs("attention(q, K, V)", "q = [1, 0], K = V = I (d_k = 2)"),
    )
    _output, weights = got.parts("output", "weights")
    p, unscaled = chapter.value("RU-p-scaled"), chapter.value("RU-p-unscaled")
    args = weights.source.args if weights.source else ()
    expect_close(
        weights,
        [[p, 1 - p]],
        wrong=Answers.of_call(
            args,
            {},
            lambda a, _k: (
                _unscaled_weights(a) if a is not args else {"missing_scale": np.array([[unscaled, 1 - unscaled]])}
            ),
        ),
        **WEIGHT_AXES,
    )


def _unscaled_weights(args: tuple) -> dict[str, np.ndarray]:
    """The weights of ``attention(q, K, V)`` with the scores left unscaled (``missing_scale``), on the check's twin."""
    q, K = args[0], args[1]
    scores = q @ K.T
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return {"missing_scale": e / e.sum(axis=-1, keepdims=True)}


@pytest.mark.points(1)
def test_batch_axes_and_wider_values(lab: Lab) -> None:
    """Batch axes are kept and d_v may differ from d_k"""
    Qb, Kb, Vb = core.INPUTS["Qb"], core.INPUTS["Kb"], core.INPUTS["Vb"]
    got = lab.call(
        "attention",
        Qb,
        Kb,
        Vb,
        text=with_inputs("attention(Q, K, V)", "Q (2, 3, 4, 5), K (2, 3, 6, 5), V (2, 3, 6, 7)"),
    )
    output, weights = got.parts("output", "weights")
    expect_weight_rows(weights, wrong=cases.wrong("attention_batch", 1), expected=cases.expected("attention_batch", 1))
    expect_case(weights, "attention_batch", 1, **WEIGHT_AXES)
    expect_case(output, "attention_batch", 0)
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(4, 7, 3)), rng.normal(size=(4, 7, 3)), rng.normal(size=(4, 7, 5))
    got = lab.call(
        "attention",
        q,
        k,
        v,
        text=_("{call} with Q, K of shape {qk} and V of shape {v}").format(
            call="attention(Q, K, V)", qk="(4, 7, 3)", v="(4, 7, 5)"
        ),
    )
    output, _weights = got.parts("output", "weights")
    output.array((4, 7, 5))


@pytest.mark.points(0.5)
def test_typical_score_size(lab: Lab) -> None:
    """Scores of random vectors spread like sqrt(d_k) (unit-variance entries) or 1/sqrt(d) (unit vectors)"""
    rng = np.random.default_rng(64)
    for width, typical in zip((64, 256), chapter.value("ACT-typical")):  # sqrt(64) = chapter.value("ACT-sqrt64")
        q, k = rng.normal(size=(300, width)), rng.normal(size=(300, width))
        got = lab.call(
            "scores",
            q,
            k,
            text=_("scores(Q, K) with 300 random queries and keys of width {width}, entries N(0, 1)").format(
                width=width
            ),
        )
        spread = float(np.std(got.array((300, 300))))
        expect_that(
            got,
            abs(spread / typical - 1) < 0.03,
            _("a standard deviation near {value}").format(value=f"sqrt({width}) = {typical:g}"),
            f"{spread:.4g}",
        )
    unit_q, unit_k = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in rng.normal(size=(2, 300, 64)))
    got = lab.call(
        "scores", unit_q, unit_k, text=_("scores(Q, K) with 300 random unit vectors of width {width}").format(width=64)
    )
    spread, expected = float(np.std(got.array((300, 300)))), chapter.value("ACT-unitvec")  # about 1/sqrt(64)
    expect_that(
        got,
        abs(spread / expected - 1) < 0.03,
        _("a standard deviation near {value} (unit vectors: 1/sqrt(d), not sqrt(d))").format(
            value=f"1/sqrt(64) = {expected:.3g}"
        ),
        f"{spread:.4g}",
    )


@pytest.mark.points(1)
def test_single_token(lab: Lab) -> None:
    """A single token attends to itself with weight 1 and returns its value [5, -2]"""
    got = lab.call(
        "attention",
        np.array([[0.3, -1.2]]),
        np.array([[2.0, 0.7]]),
        np.array([[5.0, -2.0]]),
        text=_("{call} with one token, {inputs}").format(call="attention(q, k, v)", inputs="v = [5, -2]"),
    )
    output, weights = got.parts("output", "weights")
    expect_close(weights, [[1.0]])
    expect_close(output, [[5.0, -2.0]])


@pytest.mark.points(0.5)
def test_empty_batch(lab: Lab) -> None:
    """An empty batch gives empty results of the right shapes"""
    got = lab.call(
        "attention",
        np.zeros((0, 2, 3)),
        np.zeros((0, 2, 3)),
        np.zeros((0, 2, 3)),
        text=_("{call} with an empty batch, shapes {shape}").format(call="attention(Q, K, V)", shape="(0, 2, 3)"),
    )
    output, weights = got.parts("output", "weights")
    output.array((0, 2, 3))
    weights.array((0, 2, 2))


BAD_SHAPES = {  # the keys are the checks' ids (results.json names), marked for the message
    N_("rank below 2"): (np.ones(3), np.ones((2, 3)), np.ones((2, 3))),
    N_("batch axes that differ"): (np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))),
    N_("K and V token counts that differ"): (np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 4))),
    N_("Q and K widths that differ"): (np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 5))),
    N_("zero key tokens"): (np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 4))),
}
# Words one of which the ValueError's message must hold (English: looked for in the student's message, never shown).
ERROR_KEYWORDS = {
    "rank below 2": ("rank", "dimension", "ndim", "2-d", "2d", "at least 2", "axes", "matrix", "matrices"),
    "batch axes that differ": ("batch",),
    "K and V token counts that differ": (
        "token",
        "n_k",
        "count",
        "length",
        "rows",
        "number of keys",
        "number of values",
    ),
    "Q and K widths that differ": ("width", "d_k", "feature", "last axis", "last dim", "column", "dimension"),
    "zero key tokens": ("zero", "empty", "no key", "at least one", "n_k"),
}


@pytest.mark.points(0.4)
@pytest.mark.parametrize("problem", list(BAD_SHAPES))
def test_bad_shapes_raise(lab: Lab, problem: str) -> None:
    """Bad shapes raise ValueError naming the problem"""
    q, k, v = BAD_SHAPES[problem]
    lab.raises(
        "attention",
        q,
        k,
        v,
        text=_("{call} with {problem}: {inputs}").format(
            call="attention(Q, K, V)", problem=_(problem), inputs=f"Q {q.shape}, K {k.shape}, V {v.shape}"
        ),
        keywords=ERROR_KEYWORDS[problem],
        problem=problem,
    )
