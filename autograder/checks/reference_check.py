"""What step 8's graders expect of ``compare_with_torch``, whatever the inputs.

The grader computes ``scaled_dot_product_attention`` itself, on its trusted
torch side (:mod:`autograder.oracle`, never in the student's child), and
compares it with the student's ``attention`` output fetched through the
sandbox: the difference ``compare_with_torch`` reports must be that one, and
the backend it names must be a kernel that can run the inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.checking import Got, Lab, expect_that, with_inputs
from autograder.diagnose import reference_check as torch_side
from autograder.i18n import _
from autograder.oracle import Oracle


def reports(reported: Got, actual: float, wrong: dict) -> None:
    """The ``max_abs_diff`` in ``reported`` is ``actual``, the difference the grader computed itself."""
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
    """compare_with_torch reports what the grader finds (SDPA on ``oracle``) between the student's attention and
    SDPA, and it is small; the backend part. ``described`` names the inputs in the active language."""
    got = lab.call(
        "compare_with_torch",
        Q,
        K,
        V,
        mask,
        text=with_inputs("compare_with_torch(Q, K, V, mask)", described),
    )
    reported, backend = got.parts("max_abs_diff", "backend")
    reported.number()  # a number, before the grader looks further
    output = lab.call(
        "scaling.attention",
        Q,
        K,
        V,
        mask,
        text=with_inputs("attention(Q, K, V, mask)", described),
    ).parts("output", "weights")[0]
    ours = output.array(Q.shape[:-1] + V.shape[-1:])
    actual = float(np.max(np.abs(ours.astype(float) - torch_side.sdpa(oracle, Q, K, V, mask))))
    reports(reported, actual, torch_side.compare_variants(oracle, ours, Q, K, V, mask))
    expect_that(
        output,
        actual <= torch_side.AGREE,
        _("within {tolerance} of {function}").format(
            tolerance=f"{torch_side.AGREE:g}", function="scaled_dot_product_attention"
        ),
        _("a largest difference of {value}").format(value=f"{actual:.3g}"),
    )
    return backend


def reports_known_error(
    lab: Lab, oracle: Oracle, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: Any, shift: np.ndarray, text: str
) -> None:
    """With scaling.attention's output shifted by ``shift`` (inside the sandbox), compare_with_torch reports the
    shifted difference (SDPA on ``oracle``)."""
    got = lab.probe("compare_with_shifted_attention", Q, K, V, mask, shift, text=text)
    _result, seen = got.value
    reported, _backend = got.entry(0).parts("max_abs_diff", "backend")
    reported.number()  # a number, before the grader looks further
    expect_that(
        reported,
        seen is not None,
        _("a call of attention from scaling.py"),
        _("a result computed without calling it"),
    )
    seen = got.with_value(seen).array(shift.shape)
    actual = float(np.max(np.abs(seen.astype(float) - torch_side.sdpa(oracle, Q, K, V, mask))))
    reports(reported, actual, torch_side.compare_variants(oracle, seen, Q, K, V, mask, shift))


def names_a_kernel(oracle: Oracle, backend: Got, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: Any) -> None:
    """The backend is a known kernel's name, and that kernel, allowed alone, runs these inputs on ``oracle`` (the
    grader verifies the named kernel; it does not search for the one that ran)."""
    name = backend.value
    expect_that(
        backend, isinstance(name, str) and name.strip() != "", _("the name of the kernel that ran"), f"{name!r}"
    )
    named = {kernel for kernel in torch_side.KERNELS if kernel in name.lower()}
    expect_that(backend, bool(named), _("one of {names}").format(names=", ".join(torch_side.KERNELS)), repr(name))
    runs = any(torch_side.runs_alone(oracle, kernel, Q, K, V, mask) for kernel in named)
    expect_that(
        backend,
        runs,
        _("a kernel that can run these inputs here"),
        _("{name}, which declines them here").format(name=repr(name)),
    )
