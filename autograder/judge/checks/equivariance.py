"""What step 5's public and hidden graders expect of a permutation gap, whatever the inputs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from autograder.i18n import N_
from autograder.judge.checking import Got, expect_close, expect_rounding

A_GAP = N_("a gap")
FLOAT64_GAP = N_("; the chapter's float64 gap is {value}")  # what float64 gives, cited after the limit


def gap_of(got: Got) -> float:
    """The returned gap as a float; a numpy scalar of any float type counts as a number."""
    if isinstance(got.value, np.generic):
        got = got.with_value(np.asarray(got.value))
    return got.number()


def expect_no_gap(got: Got, *, scale: float = 1.0, exact: str = "", wrong: Mapping[str, Any] | None = None) -> None:
    """The gap is rounding noise (no positions, no mask): judged by what float32 leaves on outputs of size ``scale``."""
    expect_rounding(got, gap_of(got), A_GAP, scale=scale, exact=exact, wrong=wrong)


def expect_gap(got: Got, expected: float, *, wrong: Mapping[str, Any] | None = None) -> None:
    """The gap is ``expected`` (positions by slot, or the causal mask, break equivariance by that much)."""
    expect_close(got.with_value(np.asarray(gap_of(got))), expected, wrong=wrong)
