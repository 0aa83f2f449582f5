"""A step whose modules are the released stubs byte for byte is reported without running its checks
(:mod:`autograder.handin.pristine`, :mod:`autograder.grading.untouched`): the same scores and report as running
them, and nothing that is not exactly the stubs is skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from autograder import i18n
from autograder.base import tasks
from autograder.deliver.batch import records
from autograder.deliver.batch.job import Result
from autograder.deliver.release import stubs
from autograder.grading import serialize
from autograder.grading.model import GradeReport
from autograder.handin import pristine
from autograder.judge import oracle
from autograder.judge.timing import report as timing_report
from autograder.report import failures, render, render_terminal
from autograder.sandbox import isolation
from tests import kit

EVERY_STEP = tuple(tasks.BY_ID)
# softmax and the steps whose modules import it, directly or through scaling
IMPORT_SOFTMAX = ("softmax", "scaling", "mask", "equivariance", "moe_router", "reference_check", "block", "gradients")


def _stubs(into: Path) -> Path:
    folder = into / tasks.LAB
    shutil.copytree(kit.STUBS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    return folder


def _change_one_letter(path: Path) -> None:
    """Swap the case of the first letter of ``path``'s docstring (one byte)."""
    text = path.read_bytes()
    at = text.index(b'"""') + 3
    changed = text[:at] + text[at : at + 1].swapcase() + text[at + 1 :]
    assert len(changed) == len(text) and sum(a != b for a, b in zip(changed, text)) == 1
    path.write_bytes(changed)


def test_the_digests_are_those_of_the_stubs_generated_from_the_solutions() -> None:
    assert not stubs.digests_drift(kit.SOLUTIONS), f"stale {pristine.DIGESTS}: run `attnlab stubs`"
    assert pristine.untouched(kit.STUBS, EVERY_STEP) == EVERY_STEP
    assert pristine.REPORT == timing_report.PATH
    assert stubs.lab_imports("import numpy as np\nfrom scaling import attention\nimport softmax.x\n") == (
        "scaling",
        "softmax",
    )


def test_one_changed_byte_and_every_module_that_imports_it_are_graded(tmp_path: Path) -> None:
    folder = _stubs(tmp_path)
    text = (folder / "softmax.py").read_bytes()
    _change_one_letter(folder / "softmax.py")
    assert set(pristine.untouched(folder, EVERY_STEP)) == set(EVERY_STEP) - set(IMPORT_SOFTMAX)
    for changed in (text + b"\n", text.replace(b"\n", b"\r\n"), text[:-1]):
        (folder / "softmax.py").write_bytes(changed)
        assert "softmax" not in pristine.untouched(folder, EVERY_STEP)
    (folder / "softmax.py").write_bytes(text)
    assert pristine.untouched(folder, EVERY_STEP) == EVERY_STEP


def test_a_link_a_folder_a_long_file_or_no_file_is_not_a_stub(tmp_path: Path) -> None:
    folder = _stubs(tmp_path)
    (folder / "positions.py").unlink()
    (folder / "positions.py").symlink_to(kit.STUBS / "positions.py")  # the very bytes, through a link
    costs = (folder / "costs.py").read_bytes()
    (folder / "costs.py").write_bytes(costs + b"#" * pristine.MAX_BYTES)
    (folder / "predictions.py").unlink()
    (folder / "predictions.py").mkdir()
    (folder / "kv_cache.py").unlink()
    found = pristine.untouched(folder, EVERY_STEP)
    assert not {"positions", "costs", "predictions", "kv_cache", "toy_gpt", "timing"} & set(found)
    assert "softmax" in found and "block" in found


def test_the_timing_step_is_graded_with_a_report_or_a_toy_gpt_of_the_students(tmp_path: Path) -> None:
    folder = _stubs(tmp_path)
    assert "timing" in pristine.untouched(folder, EVERY_STEP)
    (folder / "reports").mkdir()
    (folder / pristine.REPORT).write_text("{}", encoding="utf-8")
    assert "timing" not in pristine.untouched(folder, EVERY_STEP)
    shutil.rmtree(folder / "reports")
    assert "timing" not in pristine.untouched(folder, EVERY_STEP, ignored=[pristine.REPORT])  # a link, left out
    # a pristine timing.py measures a working toy_gpt: the grader's decoding check can pass (1 point)
    shutil.copyfile(kit.SOLUTIONS / "toy_gpt.py", folder / "toy_gpt.py")
    found = pristine.untouched(folder, EVERY_STEP)
    assert "timing" not in found and "toy_gpt" not in found and "kv_cache" in found


def test_the_switch_runs_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pristine.ENV_SWITCH, "0")
    assert pristine.untouched(kit.STUBS, EVERY_STEP) == ()


def test_code_above_the_unchanged_raise_is_graded(tmp_path: Path) -> None:
    """The text scan still finds the stub's error, but the function returns before it: the checks run and pass."""
    folder = _stubs(tmp_path)
    text = (folder / "softmax.py").read_text(encoding="utf-8")
    raise_line = "    raise NotImplementedError(\n"
    assert text.count(raise_line) == 1
    body = (
        "    x = np.asarray(x, dtype=float)\n"
        "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n"
    )
    (folder / "softmax.py").write_text(text.replace(raise_line, body + raise_line), encoding="utf-8")
    assert "softmax" not in pristine.untouched(folder, EVERY_STEP)
    result = kit.grade(folder, steps=("softmax",)).step("softmax")
    assert result.stubbed == ("softmax",)  # what the text scan says: not enough to skip
    assert result.earned == result.possible > 0


def test_a_stub_with_one_changed_character_runs_its_checks(tmp_path: Path) -> None:
    folder = _stubs(tmp_path)
    _change_one_letter(folder / "positions.py")
    ran = kit.grade(folder, steps=("positions",)).step("positions")
    reported = kit.grade(kit.STUBS, steps=("positions",)).step("positions")
    assert ran.earned == reported.earned == 0 and len(ran.checks) == len(reported.checks) > 0
    assert all("raised NotImplementedError" in check.message for check in ran.checks)  # its children ran
    assert not any("raised NotImplementedError" in check.message for check in reported.checks)  # none ran


def _checks(report: GradeReport) -> list[tuple]:
    """Every check as the scores and the report's groups see it (the message aside: a run names its call)."""
    return [
        (
            *(c.id, c.title, c.points, c.hidden, c.passed, c.status, c.earned, c.internal_error, c.review),
            *(c.mistake, c.evidence is None, failures.is_to_start(c), c.not_started),
            c.call_failure is not None and c.call_failure.not_implemented,
            c.message if c.not_started else "",  # a check that fails before any call: its very message
        )
        for s in report.steps
        for c in s.checks
    ]


def _groups(report: GradeReport) -> list[tuple]:
    return [
        (g.result.step.id, g.not_implemented, g.not_started, len(g.failures), g.for_review)
        for g in failures.of_report(report.steps)
    ]


def _gradescope(report: GradeReport) -> dict:
    results = render.gradescope(replace(report, seconds=0.0))
    for test in results["tests"]:
        test.pop("output")
    return results


def _batch_csv(report: GradeReport, path: Path) -> str:
    graded = Result("ann", "d1", report=serialize.report_dict(report))
    return records.write_csv(path, [graded], EVERY_STEP, tasks.total_points()).read_text(encoding="utf-8")


def test_the_stubs_grade_the_same_with_the_skip_on_and_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scores, check ids, titles, points, states, the terminal table, results.json (each check's own text aside),
    the nbgrader cell of each step and the batch's CSV row: the same whether the stubs' checks run or not."""
    skipped = kit.grade(kit.STUBS)
    monkeypatch.setenv(pristine.ENV_SWITCH, "0")
    ran = kit.grade(kit.STUBS)
    assert not any("raised NotImplementedError" in c.message for s in skipped.steps for c in s.checks)
    assert any("raised NotImplementedError" in c.message for s in ran.steps for c in s.checks)
    assert (skipped.earned, skipped.possible) == (ran.earned, ran.possible) == (0, tasks.total_points())
    assert [(s.step.id, s.stubbed, s.earned) for s in skipped.steps] == [
        (s.step.id, s.stubbed, s.earned) for s in ran.steps
    ]
    assert _checks(skipped) == _checks(ran)
    assert _groups(skipped) == _groups(ran)
    assert _gradescope(skipped) == _gradescope(ran)
    assert _batch_csv(skipped, tmp_path / "a.csv") == _batch_csv(ran, tmp_path / "b.csv")
    for lang in ("en", "tr"):
        with i18n.using(lang):
            for detail in (render_terminal.QUIET, render_terminal.NORMAL):
                assert render.table(skipped, detail, lang=lang) == render.table(ran, detail, lang=lang)
            for one, other in zip(skipped.steps, ran.steps):  # an nbgrader cell shows its step's table
                assert render.table(replace(skipped, steps=(one,))) == render.table(replace(ran, steps=(other,)))


def test_untouched_stubs_start_no_fork_server_and_import_no_torch(tmp_path: Path) -> None:
    """``attnlab grade`` of the stubs (early start included): no torch in the grader, no fork server, no lane."""
    script = (
        "import sys\n"
        "from autograder.cli import main\n"
        "from autograder.sandbox import zygote\n"
        f"code = main(['grade', {str(kit.STUBS)!r}, '--json', {str(tmp_path / 'results.json')!r}, '--quiet'])\n"
        "print(code, 'torch' in sys.modules, len(zygote._shared))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(kit.ROOT)}
    env.pop(pristine.ENV_SWITCH, None)
    done = subprocess.run([sys.executable, "-c", script], cwd=kit.ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 False 0", done.stdout
    env[pristine.ENV_SWITCH] = "0"  # the same command running the checks: both fork servers, and torch in the
    done = subprocess.run([sys.executable, "-c", script], cwd=kit.ROOT, env=env, capture_output=True, text=True)
    torch_here = not oracle.boxed(isolation.choose())  # grader unless its checks' torch has a child of its own
    assert done.stdout.splitlines()[-1] == f"0 {torch_here} 2", done.stdout + done.stderr
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["score"] == 0
