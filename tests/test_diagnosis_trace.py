"""Diagnosis that follows the student's own computation (issue 32): the tracer, the departure search and its proof,
upstream first, errors explained, and never a name the numbers do not prove.

These run the diagnosis in this process (both sides load their folder here); the sandboxed path is exercised by the
step tests and by the real-code benchmark (``bench/real_code/run.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge.diagnose import relations, twin
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.trace import explain, follow, model
from autograder.judge.oracle import InProcessOracle
from bench.real_code import cases_traced
from tests import kit

RNG = np.random.default_rng(32)
_REFERENCE = Reference(kit.SOLUTIONS, tasks.modules_present(kit.SOLUTIONS))


class _Side:
    """A folder's code as an :class:`explain.Side`, in this process."""

    def __init__(self, folder: Path) -> None:
        self.oracle = InProcessOracle(Reference(folder, tasks.modules_present(folder)))

    def probe(self, name: str, module: str | None, *args):
        try:
            return True, self.oracle.probe(name, *args)
        except Exception:
            return False, None

    def call(self, module: str, name: str, *args, **kwargs):
        try:
            return True, self.oracle.call(module, name, *args, **kwargs)
        except Exception:
            return False, None


def _student(tmp_path: Path, module: str, old: str, new: str) -> Path:
    folder = tmp_path / "student"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {module}.py any more"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return folder


def _sides(folder: Path) -> explain.Sides:
    return explain.Sides(_Side(folder), _Side(kit.SOLUTIONS), reference=_REFERENCE)


def _explain(folder: Path, source: explain.Source) -> explain.Diagnosis | None:
    sides = _sides(folder)
    call = explain._traces(source, sides)
    assert call.student is not None and call.reference is not None
    if call.student.error is not None:
        return explain.cause_of_error(source, sides, None)
    value = follow.part_of(call.student.returned, source.path)
    return explain.explain(source, value, None, sides)


# -- the tracer ----------------------------------------------------------------------------------------------------
def test_the_tracer_records_numpy_operations_with_their_parameters() -> None:
    sides = _sides(kit.SOLUTIONS)
    x = RNG.normal(size=(3, 4))
    trace = sides.trace(sides.trusted, explain.Source("call", "softmax", "softmax", (x,)), (x,), {}, {"values": True})
    assert trace is not None and trace.error is None
    ops = [e.op for e in trace.events]
    assert ops[0] == "softmax.softmax" and {"max", "subtract", "exp", "sum", "divide"} <= set(ops)
    summed = next(e for e in trace.events if e.op == "sum")
    assert summed.kwargs.get("axis") == -1 and summed.kwargs.get("keepdims") is True
    np.testing.assert_allclose(follow.part_of(trace.returned, ()), np.exp(x) / np.exp(x).sum(-1, keepdims=True))


def test_the_tracer_follows_torch_and_python_numbers() -> None:
    sides = _sides(kit.SOLUTIONS)
    source = explain.Source("call", "kv_cache", "kv_cache_bytes", (32, 8, 128, 4096), {"batch": 3})
    trace = sides.trace(sides.trusted, source, source.args, source.kwargs, {"values": True})
    assert trace is not None and [e.op for e in trace.events].count("mul") >= 4
    assert int(follow.part_of(trace.returned, ())) == 2 * 32 * 8 * 128 * 4096 * 2 * 3
    torch = pytest.importorskip("torch")
    from autograder.sandbox.protocol import AsTorch

    X, W_Q, W_K, W_V = (RNG.normal(size=s) for s in ((5, 4), (4, 3), (4, 3), (4, 2)))
    args = tuple(AsTorch(a) for a in (X, W_Q, W_K, W_V))
    source = explain.Source("call", "kv_cache", "incremental_attention", args)
    trace = sides.trace(sides.trusted, source, args, {}, {"values": True})
    assert trace is not None and trace.error is None, trace and trace.error
    assert any(e.lib == "torch" for e in trace.events) and torch is not None


def test_a_trace_is_plain_data_checked_before_it_is_read() -> None:
    for garbage in (None, 3, {"events": "x"}, {"events": [[1, 2]], "nodes": []}):
        with pytest.raises((model.TraceError, TypeError, ValueError, KeyError, IndexError)):
            model.parse(garbage)


# -- naming from the departure ---------------------------------------------------------------------------------------
SOFTMAX_AXIS = ("softmax", "e / np.sum(e, axis=axis, keepdims=True)", "e / np.sum(e, axis=0, keepdims=True)")


@pytest.mark.parametrize(
    ("module", "old", "new", "source", "mistake", "words"),
    [
        (
            *SOFTMAX_AXIS,
            explain.Source("call", "softmax", "softmax", (RNG.normal(size=(3, 4)),)),
            "trace.axis.sum",
            "axis",
        ),
        (
            "kv_cache",
            "per_token * n_tokens * batch",
            "per_token * n_tokens",
            explain.Source("call", "kv_cache", "kv_cache_bytes", (32, 8, 128, 4096), {"batch": 3}),
            "trace.missing.mul",
            "batch",
        ),
    ],
    ids=["wrong_axis", "batch_left_out"],
)
def test_the_first_departure_is_named_with_the_students_line(
    tmp_path: Path, module, old, new, source, mistake, words
) -> None:
    found = _explain(_student(tmp_path, module, old, new), source)
    assert found is not None and found.mistake == mistake, found
    assert words in found.text and f"{module}.py" in found.text


def test_an_error_is_explained_by_the_departure_that_raises_it_in_the_reference(tmp_path: Path) -> None:
    where = "np.where(np.asarray(mask, dtype=bool),"
    folder = _student(tmp_path, "mask", where, "np.where(np.swapaxes(np.asarray(mask, dtype=bool), -1, -2),")
    source = explain.Source("call", "mask", "apply_mask", (RNG.normal(size=(2, 5)), np.tri(2, 5, 3, dtype=bool)))
    found = _explain(folder, source)
    assert found is not None and found.mistake == "trace.extra.transpose", found
    assert "mask.py" in found.text


# -- upstream first --------------------------------------------------------------------------------------------------
def test_a_wrong_callee_is_blamed_before_the_calling_code(tmp_path: Path) -> None:
    folder = _student(tmp_path, *SOFTMAX_AXIS)
    Q, K, V, dO = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2)), RNG.normal(size=(3, 2))
    source = explain.Source("call", "gradients", "attention_backward", (Q, K, V, dO), path=(2,))
    found = _explain(folder, source)
    assert found is not None and found.mistake.startswith("upstream.softmax"), found
    assert "softmax" in found.text and "step 1" in found.text
    assert "grad_dv" not in found.mistake  # dV is right given its softmax: no mistake of its own


def test_a_culprit_upstream_leaves_the_calls_own_known_mistakes_uncomputed(tmp_path: Path) -> None:
    """Upstream first: where a wrong callee is named, the call's own known mistakes can never be the answer, so they
    are not computed (nor confirmed on the twin), though one of them matches the student's value."""
    folder = _student(tmp_path, *SOFTMAX_AXIS)
    Q, K, V, dO = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2)), RNG.normal(size=(3, 2))
    source = explain.Source("call", "gradients", "attention_backward", (Q, K, V, dO), path=(2,))
    sides = _sides(folder)
    value = follow.part_of(explain._traces(source, sides).student.returned, source.path)
    computed: list[str] = []
    wrong = Answers(lambda: computed.append("the wrong answers") or {"grad_dv_untransposed": value})
    found = explain.explain(source, value, wrong, sides)
    assert found is not None and found.mistake.startswith("upstream.softmax"), found
    assert computed == []


def test_own_code_is_blamed_too_when_it_differs_given_a_correct_callee(tmp_path: Path) -> None:
    folder = _student(tmp_path, *SOFTMAX_AXIS)
    path = folder / "gradients.py"
    text = path.read_text(encoding="utf-8")
    assert "dV = np.swapaxes(A, -1, -2) @ dO" in text
    path.write_text(text.replace("dV = np.swapaxes(A, -1, -2) @ dO", "dV = A @ dO"), encoding="utf-8")
    Q, K, V, dO = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))
    found = _explain(folder, explain.Source("call", "gradients", "attention_backward", (Q, K, V, dO), path=(2,)))
    assert found is not None and found.mistake.startswith("upstream.softmax.softmax&trace."), found


# -- never a wrong name ----------------------------------------------------------------------------------------------
def test_a_departure_that_does_not_show_on_the_twin_names_nothing() -> None:
    class Replays:
        def replays(self, plans):
            return [reference for _ in plans]

    x = np.arange(4.0)
    reference = model.parse(
        {
            "events": [["exp", "numpy", {"l": [{"n": 0}]}, {"d": {}}, [1], -1, 0, 0, -1, None]],
            "nodes": [["input", [4], "float64", 0, "x"], ["op", [4], "float64", 1, ""]],
            "values": [x, np.exp(x)],
            "files": [],
            "lines": {},
            "truncated": False,
            "inputs": [["x", 0]],
            "result": {"n": 1},
            "returned": np.exp(x),
            "error": None,
            "unanswered": [],
        }
    )
    edit = follow.Edit("inject", 0, 1, "op", "exp", 1)
    agreed = (reference, np.exp(x), Replays())
    assert follow.proved((edit,), (), agreed, agreed) is None


def test_half_precision_is_never_said_of_errors_half_precision_does_not_make() -> None:
    expected = RNG.normal(size=(4, 8))
    coarse = expected + 1e-2 * RNG.normal(size=expected.shape)
    found = relations.relate(coarse, expected)
    assert found is None or found.kind != "half_precision"
    rounded = expected.astype(np.float16).astype(np.float64)
    found = relations.relate(rounded, expected)
    assert found is not None and found.kind == "half_precision" and found.mistake is None


def test_equal_infinities_are_not_the_largest_difference() -> None:
    from autograder.judge import messages

    expected = np.array([[0.0, -np.inf], [-0.5, 0.0]])
    got = np.array([[0.0, -np.inf], [-0.25, 0.0]])
    text = messages.worst_entry(got, expected)
    assert "-inf" not in text and "-0.5" in text


def test_twins_redraw_floats_and_keep_integers_meaning() -> None:
    X = RNG.normal(size=(3, 4))
    drawn = twin.inputs((X, 3), {})
    assert drawn is not None
    (other, k), _kwargs = drawn
    assert other.shape == X.shape and not np.allclose(other, X) and k == 3
    assert twin.inputs((X, 3), {})[0][0].tolist() == other.tolist()  # the same draw every time


# -- the wrong names the issue lists, graded whole ---------------------------------------------------------------
def _graded(tmp_path: Path, step: str, *replacements: tuple[str, str, str]):
    from bench.real_code import RealCase, Replace

    case = RealCase("issue32", step, "", tuple(Replace(*r) for r in replacements), ("x",))
    return kit.grade(case.build(kit.SOLUTIONS, tmp_path), steps=(step,)).step(step)


MASK_TRANSPOSED = """
def causal_mask(n_q, n_k=None):
    n_k = n_q if n_k is None else n_k
    if n_q < 0 or n_k < n_q:
        raise ValueError(f"causal_mask needs 0 <= n_q <= n_k, got n_q={n_q}, n_k={n_k}")
    i = np.arange(n_q)[:, None]
    j = np.arange(n_k)[None, :]
    return (j <= i + (n_k - n_q)).T
"""
MLP_FLOAT64 = """
def mlp(x, block):
    return (gelu(x @ block["W1"] + block["b1"]) @ block["W2"] + block["b2"]).double()
"""


def test_an_error_is_blamed_on_the_file_that_caused_it(tmp_path: Path) -> None:
    result = _graded(tmp_path, "mask", ("mask", "causal_mask", MASK_TRANSPOSED))
    raised = [c for c in result.failed if "raised ValueError" in c.message]
    assert raised and all(c.mistake == "trace.extra.transpose" and "of mask.py" in c.message for c in raised)


def test_a_float64_callee_is_named_where_a_float32_computation_raised(tmp_path: Path) -> None:
    result = _graded(tmp_path / "a", "toy_gpt", ("toy_gpt", "mlp", MLP_FLOAT64))
    raised = [c for c in result.failed if "RuntimeError" in c.message]
    assert raised and all(c.mistake == "trace.dtype.mlp" and "mlp (toy_gpt.py) returned float64" in c.message
                          for c in raised)  # fmt: skip


@pytest.mark.parametrize(
    ("step", "replacement", "mistake"),
    [
        ("block", ("block", "block", cases_traced.BLOCK_NORM_OVERWRITES_RESIDUAL), "ffn_added_to_normalised"),
        ("toy_gpt", ("toy_gpt", "gpt_forward", cases_traced.GPT_RESIDUAL_FROM_NORMED), "trace.operand.add"),
    ],
    ids=["block", "toy_gpt"],
)
def test_one_bug_gets_one_diagnosis(tmp_path: Path, step, replacement, mistake) -> None:
    """A pre-norm block whose residual is the normalised input: every check names the residual, none post-norm (the
    toy GPT's is the benchmark's held-out case ``gpt_residual_from_normed``, whose class the issue itself named)."""
    result = _graded(tmp_path, step, replacement)
    named = {c.mistake for c in result.failed if c.mistake}
    assert named == {mistake}, [(c.id, c.mistake) for c in result.failed]
    assert not any("post-norm" in c.message for c in result.failed)


def test_a_correct_gradients_on_a_wrong_softmax_is_sent_upstream(tmp_path: Path) -> None:
    folder = _student(tmp_path, *SOFTMAX_AXIS)
    result = kit.grade(folder, steps=("gradients",)).step("gradients")
    named = {part for c in result.failed if c.mistake for part in c.mistake.split("&")}
    assert "upstream.softmax.softmax" in named, [(c.id, c.mistake) for c in result.failed]
    assert not any(name.startswith("grad_") for name in named), named
