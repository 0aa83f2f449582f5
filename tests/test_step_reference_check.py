"""The graders of the reference-check step: full marks, zero, known mistakes, cheats caught, and the probe."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge.diagnose import reference_check as torch_side
from autograder.sandbox.client import Sandbox
from tests import kit
from tests.kit import Variant
from tests.oracles import oracle  # noqa: F401  (the fixture: both trusted torch sides)

STEP = "reference_check"
MASK_LINE = "attn_mask = None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))"
DIFF_LINE = "max_abs_diff = np.max(np.abs("

VARIANTS = (
    Variant(
        "sdpa_float_mask",
        STEP,
        "reference_check",
        MASK_LINE,
        MASK_LINE.replace("dtype=bool", "dtype=np.float32"),
        "sdpa_float_mask",
    ),
    Variant(
        "compare_mean_not_max",
        STEP,
        "reference_check",
        DIFF_LINE,
        DIFF_LINE.replace("np.max", "np.mean"),
        "compare_mean_not_max",
    ),
)
CHEATS = (  # wrong without a known mistake: (name, old, new, the checks that must fail)
    (
        "reports_zero_and_flash",
        "return float(max_abs_diff), backend",
        'return 0.0, "flash"',
        {"test_reports_the_real_difference", "test_backend_named"},
    ),
    (  # "math" always runs, so a name alone used to pass: the grader now watches which kernel PyTorch picks
        "always_math",
        "return float(max_abs_diff), backend",
        'return float(max_abs_diff), "math"',
        {"test_backend_named"},
    ),
    (
        "skips_attention",
        "ours, _ = attention(Q, K, V, mask)",
        "ours = torch_attention(Q, K, V, mask)[0].numpy()",
        {"test_reports_the_real_difference"},
    ),
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path, public_only=True)


@pytest.mark.parametrize("name, old, new, checks", CHEATS, ids=[c[0] for c in CHEATS])
def test_cheat_fails(name: str, old: str, new: str, checks: set[str], tmp_path: Path) -> None:
    folder = Variant(name, STEP, "reference_check", old, new, "").build(tmp_path)
    result = kit.grade(folder, steps=(STEP,), public_only=True).step(STEP)
    assert checks <= {c.name for c in result.failed}, [c.name for c in result.failed]
    assert not any(c.internal_error for c in result.checks)


def test_given_output_probe_follows_an_alias_and_restores_attention(tmp_path: Path) -> None:
    folder = Variant(
        "alias",
        STEP,
        "reference_check",
        "from scaling import attention\n",
        "from scaling import attention as my_attention\n",
        "",
    ).build(tmp_path)
    module = folder / "reference_check.py"
    module.write_text(
        module.read_text(encoding="utf-8").replace("ours, _ = attention(", "ours, _ = my_attention("), encoding="utf-8"
    )
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3))
    given = Reference(kit.SOLUTIONS, tasks.MODULES).scaling.attention(Q, K, V)[0].copy()
    given[2, 1] += 0.75
    with Sandbox(folder) as sandbox:
        reported, backend = sandbox.probe("compare_with_given_attention", "reference_check", Q, K, V, None, given)
        after, _ = sandbox.call("reference_check", "compare_with_torch", Q, K, V)
    assert abs(reported - 0.75) < 1e-5 and backend == "math"
    assert after < 1e-5  # the student's own attention is back


def test_torch_side_helpers(oracle) -> None:  # noqa: F811
    """The trusted SDPA helpers give the same answers on either oracle (``oracle``: tests/test_oracle.py)."""
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    mask = np.tril(np.ones((5, 5), dtype=bool))
    ours = Reference(kit.SOLUTIONS, tasks.MODULES).scaling.attention(Q, K, V, mask)[0]
    assert np.max(np.abs(ours - torch_side.sdpa(oracle, Q, K, V, mask))) < 1e-6
    assert torch_side.kernel_used(oracle, Q[0, 0], K[0, 0], V[0, 0], None) == "math"  # CPU flash wants 4-d inputs
    assert torch_side.kernel_used(oracle, Q, K, V, mask) == "flash" == torch_side.kernel_used(oracle, Q, K, V, None)
    assert torch_side.kernel_used(oracle, Q, K, V[..., :3], None) == "math"  # value width unlike the query's
    wrong = torch_side.compare_variants(oracle, ours, Q, K, V, mask)
    assert wrong["sdpa_float_mask"] > 0.01 and wrong["compare_mean_not_max"] < 1e-6
    assert "sdpa_float_mask" not in torch_side.compare_variants(oracle, ours, Q, K, V)
