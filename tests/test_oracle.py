"""The checks' trusted torch side (autograder/judge/oracle.py): the same values in the grader and in a child of its own,
torch kept out of the grader where the child computes, a failure costing only its checks, and no student child
that can see the child holding the reference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.grading import engine
from autograder.judge import oracle as oracles
from autograder.sandbox.client import Limits, Sandbox
from autograder.sandbox.isolation import Level
from tests import kit, layers
from tests.oracles import oracle  # noqa: F401  (the fixture: both sides)

needs_namespaces = pytest.mark.skipif(
    Level.NAMESPACES not in layers.testable(), reason="the boxed oracle needs the namespaces layer (bubblewrap)"
)


def _head(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2)), rng.normal(size=(3, 2))


def test_head_gradients_are_the_references_backward(oracle) -> None:  # noqa: F811
    """torch autograd on the trusted side agrees with the reference's own attention_backward (an independent
    derivation), on either side."""
    Q, K, V, dO = _head(3)
    got = oracle.probe("oracle_head_gradients", Q, K, V, dO)
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    for part, expected in zip(got, ref.gradients.attention_backward(Q, K, V, dO)):
        assert isinstance(part, np.ndarray) and part.dtype == np.float64
        np.testing.assert_allclose(part, expected, rtol=1e-10, atol=1e-12)


def test_toy_gpt_probes_give_the_references_answers(oracle) -> None:  # noqa: F811
    """Weights, logits and greedy generation from the reference's toy_gpt, as NumPy values, on either side."""
    weights = oracle.probe("oracle_gpt_weights", 13, 6, 3, 2, 9, 1234)
    assert isinstance(weights["wte"], np.ndarray) and weights["wte"].shape == (13, 6)
    tokens = [1, 5, 2, 7]
    logits = oracle.probe("oracle_gpt_logits", weights, tokens)
    gpt = Reference(kit.SOLUTIONS, tasks.MODULES).toy_gpt
    expected = gpt.gpt_forward(gpt.as_tensors(weights), tokens).numpy()
    assert isinstance(logits, np.ndarray)
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)
    new, new_logits = oracle.probe("oracle_gpt_generate", weights, [3], 4)
    assert new.shape == (4,) and new_logits.shape == (4, 13)
    assert new.tolist() == [int(np.argmax(row)) for row in new_logits]


def test_reference_calls_and_missing_reference(oracle) -> None:  # noqa: F811
    """A plain call of a reference function; a probe that needs no reference works without one, a call fails
    with OracleFailed (the check's internal error), never something the student is blamed for."""
    assert oracle.call("kv_cache", "kv_cache_bytes", 2, 4, 64, 100) == 2 * 2 * 4 * 64 * 100 * 2
    bare = (
        oracles.InProcessOracle(None)
        if isinstance(oracle, oracles.InProcessOracle)
        else oracles.BoxedOracle(None, Limits(), Level.NAMESPACES)
    )
    try:
        Q, K, V, _ = _head(4)
        assert np.asarray(bare.probe("oracle_sdpa", Q, K, V, None)).shape == (3, 2)
        with pytest.raises(oracles.OracleFailed):
            bare.call("kv_cache", "kv_cache_bytes", 2, 4, 64, 100)
    finally:
        bare.close()


def test_the_layer_chooses_the_side(monkeypatch: pytest.MonkeyPatch) -> None:
    assert oracles.boxed(Level.NAMESPACES)
    assert not oracles.boxed(Level.USER) and not oracles.boxed(Level.HOOK)
    monkeypatch.setenv(oracles.ENV_SWITCH, "grader")
    assert not oracles.boxed(Level.NAMESPACES)


GRADE_AND_LOOK = """
import json, sys
from autograder.grading import engine
from autograder.sandbox.client import Limits
report = engine.grade(engine.GradeOptions(
    submission=sys.argv[1], hidden=sys.argv[2], reference=sys.argv[1], seed=7,
))
print(json.dumps({"score": report.earned, "max": report.possible, "isolation": report.isolation,
                  "torch": "torch" in sys.modules}))
"""


@needs_namespaces
@pytest.mark.parametrize("switch", ["box", "grader"])
def test_a_grade_in_namespaces_leaves_torch_out_of_the_grader(switch: str) -> None:
    """The whole lab graded in a fresh process (the checks' SDPA, autograd, the reference's torch modules, the
    predictions' reference values): full marks either way, and with the box the grading process never imports
    torch (one torch import per grade, in the fork server)."""
    done = subprocess.run(
        [sys.executable, "-c", GRADE_AND_LOOK, str(kit.SOLUTIONS), str(kit.HIDDEN)],
        capture_output=True, text=True, timeout=300, cwd=kit.ROOT,
        env={**os.environ, oracles.ENV_SWITCH: switch, "PYTHONPATH": str(kit.ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["isolation"] == "namespaces" and seen["score"] == seen["max"] > 0, seen
    assert seen["torch"] is (switch == "grader"), seen


@needs_namespaces
def test_a_broken_reference_costs_only_the_checks_that_need_it(tmp_path: Path) -> None:
    """A reference whose toy_gpt cannot run: the toy-GPT hidden checks that ask the box report the grader's
    own failure (internal, not the student's), every other check still grades, and the grade finishes."""
    broken = tmp_path / "reference"
    shutil.copytree(kit.SOLUTIONS, broken)
    source = broken / "toy_gpt.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n\ndef random_weights(*a, **k):\n    raise OSError\n")
    report = engine.grade(
        engine.GradeOptions(
            submission=kit.SOLUTIONS, hidden=kit.HIDDEN, reference=broken, seed=kit.TEST_SEED, steps=("toy_gpt",)
        )
    )
    checks = [check for step in report.steps for check in step.checks]
    failed = [check for check in checks if not check.passed]
    assert failed and all(check.hidden and check.internal_error for check in failed), failed
    assert all("random_weights" in check.message or "oracle_gpt" in check.message for check in failed)
    assert any(check.passed and check.hidden is False for check in checks)


HUNT = """
import os

def hunt(token):
    '''Everything this child can find of the token: in the files of every process it can see, and below /.'''
    found, pids = [], [name for name in os.listdir('/proc') if name.isdigit()]
    for pid in pids:
        for link in ('cwd', 'root'):
            try:
                for name in os.listdir(f'/proc/{pid}/{link}'):
                    path = f'/proc/{pid}/{link}/{name}'
                    if os.path.isfile(path) and token in open(path, errors='replace').read(4096):
                        found.append(path)
            except OSError:
                pass
    system = ('proc', 'sys', 'dev', 'usr', 'lib', 'lib64', 'bin', 'sbin', 'etc')  # read-only binds of the host's
    for top, folders, files in os.walk('/'):
        folders[:] = [f for f in folders if not (top == '/' and f in system) and 'python3.' not in f]
        if top.count('/') > 8:
            folders[:] = []
        for name in files:
            try:
                with open(os.path.join(top, name), 'rb') as file:
                    if token.encode() in file.read(65536):
                        found.append(os.path.join(top, name))
            except OSError:
                pass
    return {'found': found, 'pids': len(pids)}
"""


@needs_namespaces
def test_no_student_child_sees_the_box_or_its_reference(tmp_path: Path) -> None:
    """While the box holds a reference with a marker in it, a student child of the same fork server (audit hook
    off: the OS layer on its own) finds the marker only in its own working copy: not through any process it can
    see, not on any file system it can walk."""
    token = "oracle-canary-" + "7f3a9c"
    reference = tmp_path / "reference"
    shutil.copytree(kit.SOLUTIONS, reference)
    (reference / "canary.txt").write_text(token, encoding="utf-8")
    student = tmp_path / "student"
    student.mkdir()
    (student / "softmax.py").write_text(HUNT, encoding="utf-8")
    (student / "own.txt").write_text(token, encoding="utf-8")  # what the hunt must find: its own copy only
    box = oracles.BoxedOracle(reference, Limits(), Level.NAMESPACES)
    try:
        assert box.call("kv_cache", "kv_cache_bytes", 1, 1, 1, 1) == 4  # the box is alive and holds the reference
        limits = Limits(audit_hook=False, call_timeout_s=60)
        with Sandbox(student, limits, isolation=Level.NAMESPACES, torch=True) as sandbox:
            seen = sandbox.call("softmax", "hunt", token)
        assert seen["found"] and all(path.endswith("/own.txt") for path in seen["found"]), seen
        assert seen["pids"] <= 3, seen  # its keeper and itself (and a process it started): no other child's
    finally:
        box.close()
