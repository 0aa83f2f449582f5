"""The graders of softmax, scaling and mask: full marks, zero, and each known mistake diagnosed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import kit
from tests.kit import Variant

STEPS = ("softmax", "scaling", "mask")

VARIANTS = (
    Variant(
        "softmax_wrong_axis",
        "softmax",
        "softmax",
        "np.max(x, axis=axis, keepdims=True)",
        "np.max(x, axis=axis, keepdims=True)\n    axis = 0 if axis == -1 and x.ndim > 1 else axis",
        "softmax_wrong_axis|trace.axis.sum",  # the max runs over the right axis: the sum is where it parts
    ),
    Variant(
        "softmax_no_shift",
        "softmax",
        "softmax",
        "shifted = x - np.max(x, axis=axis, keepdims=True)",
        "shifted = x",
        "softmax_no_max_shift",
    ),
    Variant(
        "missing_scale",
        "scaling",
        "scaling",
        "return scores(Q, K) / np.sqrt(d_k)",
        "return scores(Q, K)",
        "missing_scale",
    ),
    Variant(
        "divide_by_dk",
        "scaling",
        "scaling",
        "return scores(Q, K) / np.sqrt(d_k)",
        "return scores(Q, K) / d_k",
        "divide_by_dk",
    ),
    Variant(
        "kq_transposed",
        "scaling",
        "scaling",
        "return Q @ np.swapaxes(K, -1, -2)",
        "return K @ np.swapaxes(Q, -1, -2)",
        "kq_transposed",
    ),
    Variant(
        "mask_after_softmax",
        "mask",
        "scaling",
        "        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)\n    weights = np.asarray(softmax(S, axis=-1))",
        "        pass\n    weights = np.asarray(softmax(S, axis=-1))\n    if mask is not None:\n        "
        "weights = weights * np.asarray(mask, dtype=bool)",
        "mask_after_softmax",
    ),
    Variant(
        "mask_inverted", "mask", "mask", "return j <= i + (n_k - n_q)", "return j > i + (n_k - n_q)", "mask_inverted"
    ),
    Variant(
        "mask_off_by_one",
        "mask",
        "mask",
        "return j <= i + (n_k - n_q)",
        "return j < i + (n_k - n_q)",
        "mask_off_by_one",
    ),
    Variant(
        "mask_ignores_offset", "mask", "mask", "return j <= i + (n_k - n_q)", "return j <= i", "mask_ignores_offset"
    ),
    Variant(
        "softmax_reductions_not_kept",
        "softmax",
        "softmax",
        (
            "    shifted = x - np.max(x, axis=axis, keepdims=True)  # largest entry becomes 0: exp never "
            "overflows\n    e = np.exp(shifted)\n    return e / np.sum(e, axis=axis, keepdims=True)\n"
        ),
        "    e = np.exp(x - np.max(x, axis=axis))\n    return e / np.sum(e, axis=axis)\n",
        "softmax_sum_not_kept",
    ),
    Variant(
        "scores_times_sqrt_dk",
        "scaling",
        "scaling",
        "    return scores(Q, K) / np.sqrt(d_k)\n",
        "    return scores(Q, K) * np.sqrt(d_k)\n",
        "scale_multiplied",
    ),
    Variant(
        "scale_by_value_width",
        "scaling",
        "scaling",
        "    S = scaled_scores(Q, K)  # (..., n_q, n_k)\n",
        "    S = scores(Q, K) / np.sqrt(V.shape[-1])\n",
        "scale_by_value_width",
    ),
    Variant(
        "softmax_over_batch_axis",
        "scaling",
        "scaling",
        "    weights = np.asarray(softmax(S, axis=-1))  # (..., n_q, n_k), rows sum to 1; a tensor is fine\n",
        "    weights = np.asarray(softmax(S, axis=0))\n",
        "softmax_batch_axis",
    ),
    Variant(
        "unscaled_softmax_over_queries",
        "scaling",
        "scaling",
        (
            "    S = scaled_scores(Q, K)  # (..., n_q, n_k)\n    if mask is not None:\n"
            "        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)\n"
            "    weights = np.asarray(softmax(S, axis=-1))  # (..., n_q, n_k), rows sum to 1; a tensor is fine\n"
        ),
        (
            "    S = scores(Q, K)\n    if mask is not None:\n"
            "        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)\n"
            "    weights = np.asarray(softmax(S, axis=-2))\n"
        ),
        "missing_scale&softmax_query_axis",
    ),
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path)


def test_grading_ignores_the_environments_pytest_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's PYTEST_ADDOPTS and PYTEST_PLUGINS, or a plugin installed in the environment, never reach the graders:
    the reference still scores full, and the user's settings are back afterwards."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "--collect-only -x")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin_module")
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    report = kit.grade(kit.SOLUTIONS, steps=("softmax",))
    assert report.earned == report.possible > 0, [c.message for r in report.steps for c in r.failed]
    assert os.environ["PYTEST_ADDOPTS"] == "--collect-only -x"
    assert os.environ["PYTEST_PLUGINS"] == "no_such_plugin_module"
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
