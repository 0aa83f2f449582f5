"""The report's "not implemented yet" names every function of a step whose stub error is still in its module,
read from the module's text (:mod:`autograder.handin.pristine`), not only the functions a check's call reached."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.base import tasks
from autograder.deliver.release import stubs
from autograder.grading.model import CallFailure, CheckResult, GradeReport, StepResult
from autograder.handin import pristine
from autograder.judge.diagnose.trace import explain
from autograder.report import failures
from tests import kit

MODULES = {step.id: step.module for step in tasks.STEPS}


def regions(step: tasks.Step) -> list[str]:
    """The functions the reference marks with solution regions (what the stub leaves to write), in file order."""
    text = (kit.SOLUTIONS / f"{step.module}.py").read_text(encoding="utf-8")
    return list(dict.fromkeys(region.task for region in stubs.find_regions(text)))


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_every_function_the_stub_leaves_to_write_is_found(step: tasks.Step) -> None:
    found = pristine.in_text((kit.STUBS / f"{step.module}.py").read_text(encoding="utf-8"), step.id)
    assert [name.rpartition(".")[2] for name in found] == regions(step)


def test_methods_are_named_with_their_class_and_the_reference_has_none() -> None:
    found = pristine.in_folder(kit.STUBS, MODULES)
    assert {"KVCache.__init__", "KVCache.append", "decode_step"} <= set(found["kv_cache"])
    assert {"block_params", "score_matrix_bytes", "crossover_length"} <= set(found["costs"])
    assert {"mlp", "gpt_step"} <= set(found["toy_gpt"])
    assert pristine.in_folder(kit.SOLUTIONS, MODULES) == {}


def test_a_written_function_is_no_longer_named(tmp_path: Path) -> None:
    reference = (kit.SOLUTIONS / "kv_cache.py").read_text(encoding="utf-8")
    stub = (kit.STUBS / "kv_cache.py").read_text(encoding="utf-8")
    start, end = reference.index("def decode_step("), reference.index("\ndef ", reference.index("def decode_step("))
    stub_start = stub.index("def decode_step(")
    stub_end = stub.index("\ndef ", stub_start)
    written = stub[:stub_start] + reference[start:end] + stub[stub_end:]
    names = pristine.in_text(written, "kv_cache")
    assert "decode_step" not in names and "incremental_attention" in names
    assert pristine.in_text(stub, "mask") == (), "another step's stub error is not this step's"


def test_a_link_a_fifo_or_a_missing_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text((kit.STUBS / "softmax.py").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "softmax.py").symlink_to(tmp_path / "secret.py")
    os.mkfifo(tmp_path / "mask.py")
    assert pristine.in_folder(tmp_path, {"softmax": "softmax", "mask": "mask", "scaling": "scaling"}) == {}


def test_the_step_lists_unreached_stubs_before_the_functions_that_raised() -> None:
    raised = CallFailure("raised", "incremental_attention", "NotImplementedError", ("NotImplementedError",))
    check = CheckResult("kv_cache", "test_a", "a", 1, False, False, "m", call_failure=raised)
    mine = CallFailure("raised", "helper", "NotImplementedError", ("NotImplementedError",))
    other = CheckResult("kv_cache", "test_b", "b", 1, False, False, "m", call_failure=mine)
    result = StepResult(tasks.step("kv_cache"), (check, other), ("decode_step", "incremental_attention"))
    # while the step's own functions are to write, only they are named (no private helper, no timer)
    assert failures.of_step(result).not_implemented == ("decode_step", "incremental_attention")
    # once they are written, the helper a check reached is named
    written = StepResult(tasks.step("kv_cache"), (other,), ("_check", "helper"))
    assert failures.of_step(written).not_implemented == ("_check", "helper")
    passed = StepResult(tasks.step("kv_cache"), (CheckResult("kv_cache", "t", "t", 1, True, False),), ("helper",))
    assert failures.of_step(passed).empty, "a step that lost no points lists nothing"


@pytest.mark.slow
def test_the_stubs_report_names_the_functions_no_check_reached(stubs_report: GradeReport) -> None:
    grouped = {group.result.step.id: group for group in failures.of_report(stubs_report.steps)}
    assert {"decode_step", "KVCache.append"} <= set(grouped["kv_cache"].not_implemented)
    assert {"block_params", "score_matrix_bytes", "crossover_length"} <= set(grouped["costs"].not_implemented)
    assert {"mlp", "gpt_step"} <= set(grouped["toy_gpt"].not_implemented)


def _with_module(tmp_path: Path, module: str, text: str) -> Path:
    """The reference with ``module`` replaced by ``text``."""
    folder = tmp_path / "hand-in"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / f"{module}.py").write_text(text, encoding="utf-8")
    return folder


def test_a_stubs_own_error_is_not_diagnosed_and_a_students_own_error_is(tmp_path: Path, monkeypatch) -> None:
    """A call that ends at the stub's own ``raise NotImplementedError`` has no cause but the unwritten function: the
    grader looks for none (no traced runs, issue 35). The same error raised by code the student wrote is still
    diagnosed, and the report names the stubbed function either way."""
    looked: list[str] = []
    real = explain.cause_of_error

    def recorded(source, sides, raised_in):
        looked.append(source.name)
        return real(source, sides, raised_in)

    monkeypatch.setattr(explain, "cause_of_error", recorded)
    stub = (kit.STUBS / "mask.py").read_text(encoding="utf-8")  # imports scaling, written: the checks run
    result = kit.grade(_with_module(tmp_path / "a", "mask", stub), steps=("mask",)).step("mask")
    raised = [c for c in result.failed if c.call_failure is not None and c.call_failure.not_implemented]
    assert raised and looked == [], looked
    assert "causal_mask" in failures.of_step(result).not_implemented

    reference = (kit.SOLUTIONS / "mask.py").read_text(encoding="utf-8")
    body = reference.index('    """\n', reference.index("def causal_mask(")) + len('    """\n')
    own = reference[:body] + '    raise NotImplementedError("rectangular masks come later")\n' + reference[body:]
    assert pristine.ANY_ERROR.search(own.partition("rectangular")[0].rpartition("\n")[2]) is None
    result = kit.grade(_with_module(tmp_path / "b", "mask", own), steps=("mask",)).step("mask")
    assert [c for c in result.failed if c.call_failure is not None and c.call_failure.not_implemented]
    assert "causal_mask" in looked


@pytest.mark.parametrize(
    ("file", "line", "at_stub"),
    [("mask.py", "raise", True), ("mask.py", "message", False), ("mask.py", 0, False), ("mask.py", 10**6, False),
     ("../mask.py", "raise", False), ("sub/mask.py", "raise", False), (None, "raise", False),
     ("mask.txt", "raise", False), ("mask\0.py", "raise", False), ("mask.py", None, False)],
)  # fmt: skip
def test_a_stub_raise_is_read_from_the_line_the_child_named(tmp_path: Path, file, line, at_stub) -> None:
    """What the child says (a file, a line) only picks a line of the grader's copy to read: a path out of the folder,
    a line the file lacks or one that is not the raise's own is not a stub's error."""
    text = (kit.STUBS / "mask.py").read_text(encoding="utf-8")
    (tmp_path / "mask.py").write_text(text, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mask.py").write_text(text, encoding="utf-8")
    (tmp_path / "mask.txt").write_text(text, encoding="utf-8")
    raise_line = text.splitlines().index("    raise NotImplementedError(") + 1
    number = {"raise": raise_line, "message": raise_line + 1}.get(line, line)
    assert pristine.raised_at_stub(tmp_path / "sub" if file == "../mask.py" else tmp_path, file, number) is at_stub
