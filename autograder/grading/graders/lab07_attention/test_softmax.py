"""Public checks of step 1, softmax: the chapter's weights and the properties every softmax has."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import _, ngettext
from autograder.judge import cases, messages
from autograder.judge.cases import core
from autograder.judge.checking import Lab, expect_case, expect_close, expect_that
from autograder.judge.checks.weights import WEIGHT_AXES, WORKED_WEIGHTS

pytestmark = pytest.mark.step("softmax")


@pytest.mark.points(2)
def test_worked_example(lab: Lab) -> None:
    """Softmax of the worked example's scaled scores gives the chapter's attention matrix"""
    got = lab.call(
        "softmax", chapter.value("T72-scaled"), text=_("softmax(x) with x the worked example's scaled scores (3 x 3)")
    )
    expect_close(got, chapter.value("T72-A"), wrong=cases.wrong("softmax_worked"), **WORKED_WEIGHTS)


@pytest.mark.points(1)
def test_small_examples(lab: Lab) -> None:
    """The d_k = 1 example and the [1, 0] example give 0.731 / 0.119 and 0.731059"""
    got = lab.call(
        "softmax", np.array([[1.0, 2.0], [2.0, 4.0]]), text=_("softmax(x) with x = [[1, 2], [2, 4]] (d_k = 1)")
    )
    weights = expect_close(got, chapter.value("T712-dk1-A"), **WEIGHT_AXES)
    expect_that(
        got,
        abs(weights[0, 1] - chapter.value("T712-dk1-offdiag")[0]) < 1e-4,
        _(messages.AT_ENTRY).format(value="0.731", where="[0, 1]"),
        f"{weights[0, 1]:.6g}",
    )
    got = lab.call("softmax", np.array([1.0, 0.0]), text=_("softmax(x) with x = {x}").format(x="[1, 0]"))
    expect_close(got, [chapter.value("RU-p-unscaled"), 1 - chapter.value("RU-p-unscaled")])


@pytest.mark.points(1)
def test_rows_sum_to_one(lab: Lab) -> None:
    """Each slice along the axis sums to 1, for the default axis and for axis=0"""
    x = core.INPUTS["x_batch"]
    got = lab.call("softmax", x, text=_("softmax(x) with x of shape {shape}").format(shape="(2, 3, 5)"))
    expect_case(got, "softmax_batch")
    got = lab.call("softmax", x, 0, text=_("softmax(x, axis=0) with x of shape {shape}").format(shape="(2, 3, 5)"))
    weights = got.array(x.shape)
    sums = weights.sum(axis=0)
    expect_that(
        got,
        bool(np.allclose(sums, 1.0, atol=1e-6)),
        _("slices along axis 0 that sum to 1"),
        _("sums from {low} to {high}").format(low=f"{sums.min():.4g}", high=f"{sums.max():.4g}"),
        value=weights,
        wrong=cases.wrong("softmax_batch_axis0"),
    )
    expect_case(got, "softmax_batch_axis0")


@pytest.mark.points(1)
def test_large_scores_are_stable(lab: Lab) -> None:
    """softmax(x + 1000) is finite and equals softmax(x)"""
    x = core.INPUTS["x_batch"] + 1000.0
    got = lab.call("softmax", x, text=_("softmax(x + 1000) with x of shape {shape}").format(shape="(2, 3, 5)"))
    weights = got.array(x.shape)
    expect_that(
        got,
        bool(np.isfinite(weights).all()),
        _("finite weights"),
        ngettext(
            "{count} entry that is inf or NaN",
            "{count} entries that are inf or NaN",
            int(np.sum(~np.isfinite(weights))),
        ).format(count=int(np.sum(~np.isfinite(weights)))),
        value=weights,
        wrong=cases.wrong("softmax_large"),
    )
    expect_case(got, "softmax_large")


@pytest.mark.points(1)
def test_minus_infinity_gives_zero(lab: Lab) -> None:
    """A score of -inf gets a weight of exactly 0"""
    x = np.array([[0.5, -np.inf, 2.0], [-np.inf, -np.inf, 1.0]])
    got = lab.call("softmax", x, text=_("softmax(x) with x = {x}").format(x="[[0.5, -inf, 2], [-inf, -inf, 1]]"))
    weights = got.array(x.shape)
    zeros = weights[np.isinf(x)]
    expect_that(got, bool(np.all(zeros == 0.0)), _("weights of exactly 0 at the -inf entries"), messages.entries(zeros))
    expect_close(got, [[1 / (1 + np.exp(1.5)), 0.0, 1 / (1 + np.exp(-1.5))], [0.0, 0.0, 1.0]], **WEIGHT_AXES)


@pytest.mark.points(1)
def test_single_and_equal_entries(lab: Lab) -> None:
    """One entry gets weight 1; two equal entries get 0.5 each"""
    got = lab.call("softmax", np.array([[3.7]]), text=_("softmax(x) with x = {x}").format(x="[[3.7]]"))
    expect_close(got, [[1.0]])
    got = lab.call("softmax", np.array([[2.0, 2.0]]), text=_("softmax(x) with x = [[2, 2]] (two identical keys)"))
    expect_close(got, [chapter.value("RU-equalkeys")], **WEIGHT_AXES)
