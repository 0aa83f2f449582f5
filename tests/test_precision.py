"""Precision-sensitive checks: judged by the rounding a result shows, and messages that show a tiny difference."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import tasks
from autograder.judge import messages
from autograder.judge.checking import CheckFailed, Got, expect_close, expect_rounding, rounding_limit

STEP = tasks.step("kv_cache")


def test_a_difference_below_the_printed_digits_is_shown_with_its_size() -> None:
    expected = np.array([[1.0, 0.836301234]])
    got = expected + np.array([[0.0, 3e-8]])
    text = messages.worst_entry(got, expected, rtol=0.0, atol=1e-10)
    assert "3e-08" in text and "below the printed digits" in text and "about precision" in text
    assert "1e-10" in text  # what the check allows
    assert "expected 1, got 1.5" in messages.worst_entry(np.array([1.5]), np.array([1.0]))


def test_a_failed_precision_check_says_so_in_its_message() -> None:
    with pytest.raises(CheckFailed) as failure:
        expect_close(Got(STEP, "f(x)", np.array([0.836301 + 2e-9])), [0.836301], rtol=0.0, atol=1e-10)
    assert "below the printed digits" in failure.value.message


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_is_judged_by_its_size_not_the_dtype(dtype: type) -> None:
    """Float32 inside and float64 out (or float32 out) leaves about 1e-7: accepted either way; 1e-3 is not."""
    value = np.zeros(3, dtype=dtype)
    expect_rounding(Got(STEP, "gap(x)", value), 1.2e-7, "a gap")
    with pytest.raises(CheckFailed, match="rounding noise only"):
        expect_rounding(Got(STEP, "gap(x)", value), 1e-3, "a gap")


def test_the_rounding_limit_grows_with_the_data() -> None:
    assert rounding_limit(1000.0) == pytest.approx(1000 * rounding_limit(1.0))
    assert rounding_limit(0.01) == rounding_limit(1.0)  # small values are not held to less than float32 at 1
