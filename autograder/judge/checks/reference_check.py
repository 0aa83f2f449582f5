"""What step 8's graders expect of ``compare_with_torch``, whatever the inputs.

The grader computes ``scaled_dot_product_attention`` itself, on its trusted torch side (:mod:`autograder.judge.oracle`,
never in the student's child). The student's ``attention`` must agree with it; ``compare_with_torch``, run while
``attention`` returns the grader's own output (PyTorch's, plus a known shift), must report the difference the
grader knows it must find; and the backend it names must be the kernel PyTorch picks for those inputs, which the
grader observes on its own side. Nothing the student's process computes is compared with anything else it
computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.i18n import _
from autograder.judge.checking import Got, Lab, expect_that, with_inputs
from autograder.judge.diagnose import reference_check as torch_side
from autograder.judge.oracle import Oracle


def reports(reported: Got, actual: float, wrong: dict) -> None:
    """The ``max_abs_diff`` in ``reported`` is ``actual``, the difference the grader knows it must be."""
    value = reported.number()
    holds = torch_side.same_difference(value, actual)
    expect_that(
        reported,
        holds,
        _("{value}, the largest |attention - SDPA| the grader finds").format(value=f"{actual:.6g}"),
        f"{value:.6g}",
        value=np.asarray(value),
        wrong=wrong,
    )


def agrees_with_torch(
    lab: Lab, oracle: Oracle, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: Any, described: str
) -> Got:
    """The student's attention agrees with SDPA (on ``oracle``) on these inputs, and compare_with_torch, while
    attention returns SDPA's own output, reports no difference; returns the backend part of a plain call of
    compare_with_torch. ``described`` names the inputs in the active language."""
    output = lab.call(
        "scaling.attention", Q, K, V, mask, text=with_inputs("attention(Q, K, V, mask)", described)
    ).parts("output", "weights")[0]
    ours = output.array(Q.shape[:-1] + V.shape[-1:])
    theirs = torch_side.sdpa(oracle, Q, K, V, mask)
    actual = float(np.max(np.abs(ours.astype(float) - theirs)))
    expect_that(
        output,
        actual <= torch_side.AGREE,
        _("within {tolerance} of {function}").format(
            tolerance=f"{torch_side.AGREE:g}", function="scaled_dot_product_attention"
        ),
        _("a largest difference of {value}").format(value=f"{actual:.3g}"),
    )
    text = with_inputs("compare_with_torch(Q, K, V, mask)", described)
    _reports_shift(lab, oracle, Q, K, V, mask, theirs, np.zeros_like(theirs), text)
    got = lab.call("compare_with_torch", Q, K, V, mask, text=text)
    reported, backend = got.parts("max_abs_diff", "backend")
    reported.number()  # a number, before the grader looks further
    return backend


def reports_known_error(
    lab: Lab, oracle: Oracle, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: Any, shift: np.ndarray, text: str
) -> None:
    """While scaling.attention returns SDPA's own output (on ``oracle``) plus ``shift``, compare_with_torch reports
    the largest entry of the shift: the difference the grader knows it must find."""
    _reports_shift(lab, oracle, Q, K, V, mask, torch_side.sdpa(oracle, Q, K, V, mask), shift, text)


def _reports_shift(
    lab: Lab,
    oracle: Oracle,
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: Any,
    theirs: np.ndarray,
    shift: np.ndarray,
    text: str,
) -> None:
    """:func:`reports_known_error` with SDPA's output on these inputs, ``theirs``, already computed."""
    given = theirs + shift
    got = lab.probe("compare_with_given_attention", Q, K, V, mask, given, text=text)
    reported, _backend = got.parts("max_abs_diff", "backend")
    actual = float(np.max(np.abs(given - theirs)))
    reports(reported, actual, torch_side.compare_variants(oracle, given, Q, K, V, mask))


def names_a_kernel(oracle: Oracle, backend: Got, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: Any) -> None:
    """The backend names the kernel PyTorch picks for these inputs (float32 on the CPU, as the contract's
    ``torch_attention`` makes them), as the grader observes it on its own side."""
    name = backend.value
    expect_that(
        backend, isinstance(name, str) and name.strip() != "", _("the name of the kernel that ran"), f"{name!r}"
    )
    expected = torch_side.kernel_used(oracle, Q, K, V, mask)
    named = {kernel for kernel in torch_side.KERNELS if kernel in name.lower()}
    expect_that(
        backend,
        named == {expected},
        _("{name}, the kernel PyTorch runs for these inputs (the grader watched it)").format(name=repr(expected)),
        repr(name),
    )
