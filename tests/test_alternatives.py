"""Other valid ways to write a step get full marks (tolerances, types, idioms)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import kit
from tests.kit import Variant

SOFTMAX_BODY = """    x = np.asarray(x, dtype=float)
    shifted = x - np.max(x, axis=axis, keepdims=True)  # largest entry becomes 0: exp never overflows
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)
"""
ATTENTION_TAIL = """    weights = np.asarray(softmax(S, axis=-1))  # (..., n_q, n_k), rows sum to 1; a tensor is fine
    return weights @ V, weights  # (..., n_q, d_v)
"""
SCORES_BODY = "    return Q @ np.swapaxes(K, -1, -2)  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)\n"
MASK_FILL = "        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)\n"

ALTERNATIVES = (
    Variant(
        "scipy_softmax",
        "softmax",
        "softmax",
        SOFTMAX_BODY,
        "    from scipy.special import softmax as scipy_softmax\n    return "
        "scipy_softmax(np.asarray(x, dtype=float), axis=axis)\n",
        "",
    ),
    Variant(
        "float32_softmax",
        "softmax",
        "softmax",
        SOFTMAX_BODY,
        SOFTMAX_BODY.replace("dtype=float", "dtype=np.float32"),
        "",
    ),
    Variant(
        "torch_softmax",
        "softmax",
        "softmax",
        SOFTMAX_BODY,
        "    import torch\n    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis)\n",
        "",
    ),
    Variant(
        "einsum_scores", "scaling", "scaling", SCORES_BODY, "    return np.einsum('...qd,...kd->...qk', Q, K)\n", ""
    ),
    Variant(
        "torch_attention_outputs",
        "scaling",
        "scaling",
        ATTENTION_TAIL,
        "    import torch\n    weights = softmax(S, axis=-1)\n    return torch.from_numpy(weights "
        "@ V), torch.from_numpy(weights)\n",
        "",
    ),
    Variant(
        "float32_attention",
        "scaling",
        "scaling",
        ATTENTION_TAIL,
        "    weights = softmax(S.astype(np.float32), axis=-1).astype(np.float32)\n    return "
        "weights @ V.astype(np.float32), weights\n",
        "",
    ),
    Variant(
        "minus_1e9_fill",
        "mask",
        "scaling",
        MASK_FILL,
        "        S = np.where(np.asarray(mask, dtype=bool), S, -1e9)\n",
        "",
    ),
    Variant(
        "minus_1e9_apply_mask",
        "mask",
        "mask",
        "np.asarray(scores, dtype=float), -np.inf)",
        "np.asarray(scores, dtype=float), -1e9)",
        "",
    ),
    Variant(
        "tril_mask",
        "mask",
        "mask",
        "    return j <= i + (n_k - n_q)\n",
        "    return np.tril(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q)\n",
        "",
    ),
)


@pytest.mark.parametrize("variant", ALTERNATIVES, ids=lambda v: v.name)
def test_valid_alternative_scores_full_marks(variant: Variant, tmp_path: Path) -> None:
    """Its own step and every step whose reference module imports it: the reference takes tensors and float32."""
    kit.check_alternative(variant, tmp_path)


# -- correct real implementations (bench/real_code): full marks, and never a named mistake ----------------------


def _real_correct_cases() -> list:
    from bench.real_code import all_cases

    return [c for c in all_cases() if c.correct]


@pytest.mark.parametrize("case", _real_correct_cases(), ids=lambda c: c.name)
def test_correct_real_implementation_is_judged_by_what_it_computed(case, tmp_path: Path) -> None:
    """Its own step and every step whose reference module imports what it replaced: full marks but for the checks
    of the one contract rule it may break, and no check ever names a mistake for it."""
    from bench.real_code.run import SOLUTIONS, steps_using

    steps = tuple(dict.fromkeys((case.step, *steps_using({r.module for r in case.replacements}))))
    report = kit.grade(case.build(SOLUTIONS, tmp_path), steps=steps)
    failed = [c for s in report.steps for c in s.failed]
    assert not [c.id for c in failed if c.mistake], [(c.id, c.mistake, c.message) for c in failed if c.mistake]
    outside = [c.message for c in failed if not (case.rule and c.id.startswith(case.rule))]
    assert not outside, outside
    # a broken contract rule is said in the message: what was expected (an error, an order of ties), for which inputs
    said = "ValueError" if case.rule.endswith("_raise") else "ties"
    assert all(said in c.message for c in failed), [c.message for c in failed]
