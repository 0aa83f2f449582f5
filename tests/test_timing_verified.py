"""Timing points only for verified work: made-up timing scores no more than an honest partial submission.

The honest partial submission writes the kernels and the analysis (``naive_attention``, ``loglog_slope``, the
toy GPT) and leaves the timing functions unwritten, so it has no report. Each fabrication below keeps those
kernels and fakes the timing in one of the ways issue 25 lists; none may score more. Kernels that hide their
cost from the child's own clocks, or remember answers, fail the grader's own measurement. The grader's own
measurement is timed on this shared machine, so no test asserts a time, only scores and check names.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from autograder.grading import serialize
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.judge.timing import report
from autograder.report import gradescope, render_terminal
from tests import kit
from tests.test_step_timing import DEVICE_CHECKS, REPORT_CHECKS, STEP, cuda_report, measure_into

TIMERS = ("time_attention", "time_decoding", "peak_memory")
STUB = '    raise NotImplementedError("not written yet")\n'
FORMULA_ATTENTION = """    import random

    cost = {"naive": 4e-10, "sdpa": 1.5e-10}[kind] * (1.2 if causal else 1.0)
    seconds = [(2e-5 + cost * n * n) * random.uniform(0.97, 1.05) for _ in range(repeats)]
    return seconds if return_times else statistics.median(seconds)
"""
FORMULA_DECODING = """    import random

    seconds = [
        (3e-4 + (0.0 if use_cache else 4e-6 * t)) * random.uniform(0.97, 1.05) for t in range(1, n_tokens + 1)
    ]
    return (seconds, [START_TOKEN] * n_tokens) if return_tokens else seconds
"""
IGNORES_N = """    target = resolve_device(device)
    generator = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(1, 1, 256, d, generator=generator).to(target) for _ in range(3))  # n is ignored

    def forward() -> Tensor:
        if kind == "naive":
            return naive_attention(Q, K, V, causal)
        return F.scaled_dot_product_attention(Q, K, V, is_causal=causal)

    with torch.inference_mode(), single_thread(target):
        forward()
        seconds = [timed(forward, target)[1] for _ in range(repeats)]
    return seconds if return_times else statistics.median(seconds)
"""

CACHELESS_STEP = """

_history: dict = {}


def _cacheless(weights, token, position, cache):
    \"\"\"gpt_step without the cache: gpt_forward over every token so far (the same logits, a growing cost).\"\"\"
    tokens = _history.setdefault(id(cache), [])
    del tokens[position:]
    tokens.append(int(token))
    return gpt_forward(weights, torch.tensor(tokens))[-1]
"""
# appended to toy_gpt.py: a gpt_step without a cache that makes the probe's clock (rebound) read 0.1 ms a step
REBINDS_CLOCK = (
    CACHELESS_STEP
    + """

import sys as _sys
import time as _time

_real = _time.thread_time_ns
_hidden = [0]
_probe = _sys.modules.get("autograder.sandbox.probes.timing")
if _probe is not None:
    _probe._CPU_NS = lambda: _real() - _hidden[0]


def gpt_step(weights, token, position, cache):
    started = _real()
    logits = _cacheless(weights, token, position, cache)
    _hidden[0] += max(_real() - started - 100_000, 0)
    return logits
"""
)
# appended to toy_gpt.py: the same gpt_step, its work done in a thread (the calling thread's clock sees none)
IN_A_THREAD = (
    CACHELESS_STEP
    + """

import threading as _threading


def gpt_step(weights, token, position, cache):
    answer = []
    worker = _threading.Thread(target=lambda: answer.append(_cacheless(weights, token, position, cache)))
    worker.start()
    worker.join()
    return answer[0]
"""
)
# appended to timing.py: naive_attention computed once per input shape, remembered afterwards
MEMOISES = """

_computed = naive_attention
_remembered: dict = {}


def naive_attention(Q, K, V, causal=False):
    key = (tuple(Q.shape), bool(causal))
    if key not in _remembered:
        _remembered[key] = _computed(Q, K, V, causal)
    return _remembered[key]
"""


def _with_bodies(into: Path, name: str, bodies: dict[str, str], keep_report: bool = True) -> Path:
    """The reference with the solution blocks of ``bodies``' functions replaced; its committed report kept or not."""
    folder = into / name
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "timing.py"
    text = path.read_text(encoding="utf-8")
    for function, body in bodies.items():
        pattern = re.compile(rf"(def {function}\(.*?)    # BEGIN SOLUTION\n.*?    # END SOLUTION\n", re.DOTALL)
        text, count = pattern.subn(lambda match: match.group(1) + body, text, count=1)  # noqa: B023
        assert count == 1, function
    path.write_text(text, encoding="utf-8")
    if not keep_report:
        shutil.rmtree(folder / report.FOLDER)
    return folder


def _appended(into: Path, name: str, module: str, text: str) -> Path:
    """The reference (no report) with ``text`` appended to ``module``.py: its definitions replace the reference's."""
    folder = _with_bodies(into, name, {}, keep_report=False)
    path = folder / f"{module}.py"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    return folder


def _grade(folder: Path) -> StepResult:
    return kit.grade(folder, steps=(STEP,)).step(STEP)


def _names(checks: tuple[CheckResult, ...]) -> set[str]:
    return {c.name for c in checks}


@pytest.fixture(scope="module")
def honest_partial(tmp_path_factory: pytest.TempPathFactory) -> StepResult:
    """Kernels and analysis written, the timing functions not yet (so no report)."""
    folder = _with_bodies(tmp_path_factory.mktemp("partial"), "partial", dict.fromkeys(TIMERS, STUB), False)
    result = _grade(folder)
    # what the grader verifies on its own: the kernels it timed, its slopes of them, loglog_slope
    assert _names(result.failed) == REPORT_CHECKS | {"test_timing_functions"}, [c.message for c in result.failed]
    assert result.earned == 4
    return result


def _no_more_than_honest(result: StepResult, honest: StepResult) -> None:
    assert result.earned <= honest.earned, [(c.name, c.earned) for c in result.checks if c.earned]
    assert "test_timing_functions" in _names(result.failed)
    assert not result.for_review, "nothing of a fabricated report waits for review: it fails"
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks if c.internal_error]


def test_cuda_report_on_a_cpu_grader_without_timing_functions(honest_partial: StepResult, tmp_path: Path) -> None:
    """Issue 25's first case: a hand-made CUDA report, the timing functions still raising NotImplementedError."""
    folder = _with_bodies(tmp_path, "cuda_claim", dict.fromkeys(TIMERS, STUB))
    data = json.loads((folder / report.PATH).read_text(encoding="utf-8"))
    cuda_report(data)
    (folder / report.PATH).write_text(json.dumps(data), encoding="utf-8")
    result = _grade(folder)
    _no_more_than_honest(result, honest_partial)
    assert REPORT_CHECKS - {"test_review"} <= _names(result.failed)
    schema = next(c for c in result.checks if c.name == "test_report_schema")
    assert "count for nothing" in schema.message and "time_attention" in schema.message, schema.message


def test_formula_timers(honest_partial: StepResult, tmp_path: Path) -> None:
    """Timing functions that return a formula with a little noise, and the report `attnlab timing` writes from them."""
    folder = _with_bodies(
        tmp_path, "formula", {"time_attention": FORMULA_ATTENTION, "time_decoding": FORMULA_DECODING}, False
    )
    measure_into(folder)
    result = _grade(folder)
    _no_more_than_honest(result, honest_partial)
    timers = next(c for c in result.checks if c.name == "test_timing_functions")
    assert "not a formula" in timers.message or "warm-up" in timers.message, timers.message


def test_times_that_ignore_n(honest_partial: StepResult, tmp_path: Path) -> None:
    """A real measurement of the wrong thing: time_attention always times n = 256, whatever n it is given."""
    folder = _with_bodies(tmp_path, "ignores_n", {"time_attention": IGNORES_N})
    result = _grade(folder)
    _no_more_than_honest(result, honest_partial)
    timers = next(c for c in result.checks if c.name == "test_timing_functions")
    assert "time_attention" in timers.message, timers.message


@pytest.mark.parametrize(
    "name, text", [("rebinds_the_probe_clock", REBINDS_CLOCK), ("works_in_a_thread", IN_A_THREAD)], ids=str
)
def test_a_cacheless_decoder_cannot_hide_its_cost(name: str, text: str, tmp_path: Path) -> None:
    """gpt_step without a cache (right tokens, a cost that grows with the prefix) hidden from the child's own
    clocks, by rebinding the probe's clock or by working in a thread: the keeper's clock counts it all, so the
    grader's decoding check fails (before the keeper's clock, both passed with a flat 0.1 ms a step)."""
    result = _grade(_appended(tmp_path, name, "toy_gpt", text))
    decoding = next(c for c in result.checks if c.name == "test_grader_decoding")
    assert not decoding.passed, decoding.message
    assert "test_kernels_verified" not in _names(result.failed), "the tokens are right: only the time tells"


def test_a_memoising_kernel_is_reported_wrong(tmp_path: Path) -> None:
    """naive_attention that remembers its first answer for each shape: every timed call has new inputs, so the
    remembered answers are wrong (before, the repeats saw the warm-up's inputs and passed)."""
    result = _grade(_appended(tmp_path, "memoises", "timing", MEMOISES))
    verified_check = next(c for c in result.checks if c.name == "test_kernels_verified")
    assert not verified_check.passed and "values off by" in verified_check.message, verified_check.message


def _one_review() -> GradeReport:
    from autograder.base import tasks

    checks = (
        CheckResult(STEP, "test_kernels_verified", "kernels", 1, True, False),
        CheckResult(STEP, "test_attention_slopes", "slopes", 1, False, False, "for review: no GPU here", review=True),
    )
    return GradeReport("folder", (StepResult(tasks.step(STEP), checks),), public_only=True, seed=None)


def test_review_is_a_typed_status_everywhere() -> None:
    """A check for review earns 0, is not a failure to fix, and shows as review in every renderer."""
    graded = _one_review()
    check = graded.steps[0].checks[1]
    assert check.status == "review" and check.earned == 0 and graded.earned == 1
    assert graded.steps[0].for_review == (check,)
    back = serialize.report_from_json(serialize.report_json(graded))
    assert back.steps[0].checks[1].review and back.steps[0].checks[1].status == "review"
    assert gradescope.state(check) == gradescope.REVIEW_STATE
    test = gradescope.results(graded)["tests"][1]
    assert "status" not in test and gradescope.TO_REVIEW in test["tags"] and test["extra_data"]["state"] == "review"
    shown = render_terminal.text(graded)
    assert "For review" in shown and "for review: no GPU here" in shown, shown
    assert render_terminal.REVIEW_MARK in render_terminal.text(graded, render_terminal.VERBOSE)
    assert DEVICE_CHECKS  # the device-specific checks a CUDA report leaves for review (test_step_timing)
