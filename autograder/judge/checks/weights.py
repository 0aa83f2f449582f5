"""What every check of attention weights expects first: rows of a softmax, whatever the inputs.

Steps 2 and 3 (and their hidden checks) compare weights with the reference;
before that, this says in words which property failed when the weights are
not rows of a softmax at all (an inf or NaN, a negative entry, a row that does
not sum to 1), so a student whose mistake is not in the catalog still learns
what to look for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from autograder.base import chapter
from autograder.i18n import N_, Nn_, _, counted
from autograder.judge.checking import Got, comparison, expect_close
from autograder.judge.diagnose import answers
from autograder.judge.evidence import ATTENTION_AXES, WORKED_EXAMPLE

EXPECTED = N_("weights between 0 and 1 whose rows sum to 1 (a softmax over the key axis)")
NOT_FINITE = Nn_(
    "{count} entry that is inf or NaN ({value} at {where})", "{count} entries that are inf or NaN ({value} at {where})"
)
OUTSIDE = N_("an entry outside [0, 1] ({value} at {where})")
ROWS_OFF = N_("rows that do not sum to 1 (row {row} sums to {total})")
ROW_SUM_TOLERANCE = 1e-5  # float32 rows of a few thousand keys sum to 1 within this

# What expect_close needs to label a heatmap of weights or scores: rows are queries, columns keys.
WEIGHT_AXES: dict[str, Any] = {"axes": ATTENTION_AXES}
# The same on the worked example's three tokens (kedi, sütü, içti), each axis labelled with them.
WORKED_AXES: dict[str, Any] = {"axes": ATTENTION_AXES, "ticks": (tuple(chapter.tokens()),) * 2}
# The worked example's weights, also shown beside the chapter's when the check passes.
WORKED_WEIGHTS: dict[str, Any] = {**WORKED_AXES, "exhibit": WORKED_EXAMPLE}
# One row of the worked example's weights: one weight per key token.
WORKED_ROW: dict[str, Any] = {"axes": ATTENTION_AXES[1:], "ticks": (tuple(chapter.tokens()),)}


def _at(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def expect_weight_rows(
    got: Got,
    *,
    wrong: Mapping[str, Any] | None = None,
    expected: Any = None,
    axes: tuple[str, ...] = ATTENTION_AXES,
    ticks: tuple[tuple[str, ...], ...] = (),
    exhibit: str = "",
) -> np.ndarray:
    """Expect ``got`` to hold attention weights: finite, in ``[0, 1]``, every row (last axis) summing to 1.

    With the weights ``expected`` (the reference's), a failure carries both for
    the report's heatmaps, labelled by ``axes`` and ``ticks``, and ``exhibit``
    names them as :func:`autograder.judge.checking.expect_close` does.
    """
    weights = got.array().astype(float)
    if weights.size == 0 or weights.shape[-1] == 0:
        return weights
    problem = None
    bad = ~np.isfinite(weights)
    if bad.any():
        first = tuple(np.argwhere(bad)[0])
        problem = counted(NOT_FINITE, int(bad.sum())).format(
            count=int(bad.sum()), value=f"{weights[first]:g}", where=_at(first)
        )
    elif weights.min() < 0 or weights.max() > 1 + ROW_SUM_TOLERANCE:
        worst = np.unravel_index(int(np.argmax(np.abs(weights - 0.5))), weights.shape)
        problem = _(OUTSIDE).format(value=f"{weights[worst]:.6g}", where=_at(worst))
    else:
        sums = weights.sum(axis=-1)
        worst = np.unravel_index(int(np.argmax(np.abs(sums - 1))), sums.shape)
        if abs(sums[worst] - 1) > ROW_SUM_TOLERANCE:
            problem = _(ROWS_OFF).format(row=_at(worst), total=f"{sums[worst]:.6g}")
    if problem is not None:
        shown = None
        if expected is not None and np.shape(expected) == weights.shape:
            shown = comparison(got, np.asarray(expected, dtype=float), weights, axes, ticks, exhibit, passed=False)
        got.fail(EXPECTED, problem, evidence=shown, diagnosis=got.explain(weights, wrong))
    return weights


def expect_head(got: Got, expected: tuple[Any, Any], wrong: Mapping[str, tuple[Any, Any]]) -> None:
    """Expect ``(output, weights)`` of one head as the reference's ``expected``, naming the mistakes in ``wrong``."""
    output, weights = got.parts("output", "weights")
    weight_mistakes = answers.part(wrong, 1)
    expect_weight_rows(weights, wrong=weight_mistakes, expected=expected[1])
    expect_close(weights, expected[1], wrong=weight_mistakes, **WEIGHT_AXES)
    expect_close(output, expected[0], wrong=answers.part(wrong, 0))
