"""The fault set: each fault costs only the checks that needed the faulty call, and the report is complete."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.grading.model import GradeReport
from autograder.sandbox.client import Limits
from tests import kit

INSIDE = "    i = np.arange(n_q)[:, None]  # (n_q, 1) query positions\n"
FAULTS = {
    # name: (text inserted at the start of causal_mask's body, or at import when it starts with "#import"), words in the
    # messages
    "hang": ("    while True:\n        pass\n", "did not return within"),
    "os_exit_at_import": (
        "#import\nimport os\nos._exit(0)\n",
        "importing mask.py ended the grading process with exit code 0",
    ),
    "segfault": ("    import faulthandler\n    faulthandler._sigsegv()\n", "SIGSEGV"),
    "memory_hog": ("    hog = [np.empty(10**9) for _ in range(100)]\n", "MemoryError"),
    "huge_output": ("    for _ in range(10**5):\n        print('debug ' * 100)\n", "printed"),
    "nan_output": ("    return np.full((n_q, n_q if n_k is None else n_k), np.nan)\n", "got array"),
    "wrong_shape": (
        "    return np.ones((n_q + 1, n_q if n_k is None else n_k), dtype=bool)\n",
        "expected an array of shape",
    ),
    "wrong_type": ("    return 'a mask'\n", "got str"),
    "exception_at_import": (
        "#import\nraise ImportError('a missing helper')\n",
        "importing mask.py raised ImportError: a missing helper",
    ),
}
LIMITS = Limits(call_timeout_s=2.0)


def build(fault: str, tmp_path: Path) -> Path:
    folder = tmp_path / fault
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "mask.py"
    text, code = path.read_text(encoding="utf-8"), FAULTS[fault][0]
    if code.startswith("#import"):
        text = text.replace(
            "from scaling import attention, project\n",
            "from scaling import attention, project\n" + code.removeprefix("#import\n"),
        )
    else:
        assert INSIDE in text
        text = text.replace(INSIDE, code + INSIDE)
    path.write_text(text, encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_costs_only_its_checks(fault: str, tmp_path: Path, reference_report: GradeReport) -> None:
    report = kit.grade(build(fault, tmp_path), steps=("softmax", "scaling", "mask"), limits=LIMITS)
    for step in ("softmax", "scaling"):
        assert report.step(step).earned == reference_report.step(step).earned, f"{fault} cost points in {step}"
    mask, expected = report.step("mask"), reference_report.step("mask")
    assert [c.name for c in mask.checks] == [c.name for c in expected.checks], "the report lost checks"
    assert mask.earned < mask.possible
    assert not any(c.internal_error for c in mask.checks), [c.message for c in mask.checks if c.internal_error]
    words = FAULTS[fault][1]
    assert any(words in c.message for c in mask.failed), [c.message for c in mask.failed]
    if fault.endswith("at_import"):
        assert mask.earned == 0
