"""Public checks of step 8, the check against PyTorch: the difference reported is the real one, and the kernel is named.

The grader computes ``scaled_dot_product_attention`` itself, on its trusted
torch side (the ``oracle`` fixture), on the inputs it sends, and compares it with the student's ``attention`` output
(fetched through the sandbox): ``compare_with_torch`` must report that
difference. To see that the number is computed rather than typed, one check
runs it while ``attention`` is off by a known amount.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import N_, _
from autograder.judge import messages
from autograder.judge.checking import Lab, with_inputs
from autograder.judge.checks.reference_check import agrees_with_torch, names_a_kernel, reports_known_error
from autograder.judge.oracle import Oracle

pytestmark = pytest.mark.step("reference_check")


def _inputs() -> dict[str, tuple]:
    rng = np.random.default_rng(20260708)  # public, fixed: hidden checks draw their own

    def head(*shapes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        return tuple(rng.normal(size=s).astype(np.float32) for s in shapes)

    return {
        "2d": (*head((5, 4), (7, 4), (7, 3)), None),
        "4d": (*head((2, 3, 6, 8), (2, 3, 6, 8), (2, 3, 6, 8)), None),
        "causal_4d": (*head((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)), np.tril(np.ones((5, 5), dtype=bool))),
        "causal_offset": (*head((3, 2, 4), (3, 6, 4), (3, 6, 5)), np.tril(np.ones((2, 6), dtype=bool), k=4)),
        "shifted": (*head((2, 4, 3), (2, 5, 3), (2, 5, 6)), np.tril(np.ones((4, 5), dtype=bool), k=1)),
    }


INPUTS = _inputs()
SHIFTED = N_("{call} with {inputs}, while scaling.attention returns its output plus {shift}")
DESCRIBE = {  # the inputs in words, translated where they are shown
    "2d": N_("Q (5, 4), K (7, 4), V (7, 3) in float32, no mask"),
    "4d": N_("Q, K, V of shape (2, 3, 6, 8) in float32, no mask"),
    "causal_4d": N_("Q, K, V of shape (2, 2, 5, 4) in float32 and causal_mask(5)"),
    "causal_offset": N_("Q (3, 2, 4), K (3, 6, 4), V (3, 6, 5) in float32 and causal_mask(2, 6)"),
}


@pytest.mark.points(0.5)
@pytest.mark.parametrize("name", ["2d", "4d"])
def test_agrees_without_mask(lab: Lab, oracle: Oracle, name: str) -> None:
    """Without a mask: the reported difference is the grader's own, and below 1e-5"""
    agrees_with_torch(lab, oracle, *INPUTS[name], _(DESCRIBE[name]))


@pytest.mark.points(0.5)
@pytest.mark.parametrize("name", ["causal_4d", "causal_offset"])
def test_agrees_with_causal_mask(lab: Lab, oracle: Oracle, name: str) -> None:
    """With a causal bool mask (True = may attend): the reported difference is the grader's own, and below 1e-5"""
    agrees_with_torch(lab, oracle, *INPUTS[name], _(DESCRIBE[name]))


@pytest.mark.points(1.5)
def test_reports_the_real_difference(lab: Lab, oracle: Oracle) -> None:
    """With an attention that is off by 0.25 at one entry, compare_with_torch reports 0.25"""
    Q, K, V, mask = INPUTS["shifted"]
    shift = np.zeros(Q.shape[:-1] + V.shape[-1:])
    shift[1, 2, 4], shift[0, 0, 0] = 0.25, -0.125
    text = _(SHIFTED).format(
        call="compare_with_torch(Q, K, V, mask)",
        inputs="Q (2, 4, 3), K (2, 5, 3), V (2, 5, 6), causal_mask(4, 5)",
        shift=_("{first} and {second}").format(
            first=_(messages.AT_ENTRY).format(value="0.25", where="[1, 2, 4]"),
            second=_(messages.AT_ENTRY).format(value="-0.125", where="[0, 0, 0]"),
        ),
    )
    reports_known_error(lab, oracle, Q, K, V, mask, shift, text)


@pytest.mark.points(0.5)
def test_backend_named(lab: Lab, oracle: Oracle) -> None:
    """The backend names the kernel PyTorch runs for the inputs (on a CPU: "flash" for 4-d, "math" for 2-d)"""
    for name in ("2d", "4d", "causal_4d"):
        Q, K, V, mask = INPUTS[name]
        got = lab.call(
            "compare_with_torch",
            Q,
            K,
            V,
            mask,
            text=with_inputs("compare_with_torch(Q, K, V, mask)", _(DESCRIBE[name])),
        )
        names_a_kernel(oracle, got.parts("max_abs_diff", "backend")[1], Q, K, V, mask)
