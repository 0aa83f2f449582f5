"""The torch release the kit is tested with is named once (:mod:`autograder.base.versions`): the course locks pin it,
and ``attnlab doctor`` warns when the installed torch is another release."""

from __future__ import annotations

import re

import pytest

from autograder import i18n
from autograder.base import versions
from autograder.cli import doctor
from autograder.deliver.gradescope import build
from tests import kit


def test_the_locks_pin_the_tested_torch() -> None:
    constraints = (kit.ROOT / "requirements" / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(rf"^torch=={re.escape(versions.TESTED_TORCH)}\+cpu ; sys_platform == 'linux'$", constraints, re.M)
    assert build.torch_pin(kit.KIT.lock.read_text(encoding="utf-8")) == versions.TESTED_TORCH


@pytest.mark.parametrize(
    "installed, tested",
    [("2.13.0", True), ("2.13.0+cpu", True), ("2.13.1+cu128", True), ("2.14.0", False), ("2.3.1", False), ("x", False)],
)
def test_a_release_is_the_tested_one_by_major_and_minor(installed: str, tested: bool) -> None:
    assert versions.is_tested(installed) is tested
    assert (versions.torch_warning(installed) is None) is tested


def test_doctor_warns_about_an_untested_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "installed_torch", lambda: "2.14.0")
    lines = doctor.torch_lines()
    assert lines[0] == f"torch: 2.14.0 (tested with {versions.TESTED_TORCH})"
    assert "torch 2.14.0 is installed, but the kit is tested with torch" in lines[1]
    assert versions.install_command() in lines[1]
    monkeypatch.setattr(versions, "installed_torch", lambda: None)
    assert "torch is not installed" in doctor.torch_lines()[1]
    monkeypatch.setattr(versions, "installed_torch", lambda: versions.TESTED_TORCH + "+cpu")
    assert len(doctor.torch_lines()) == 1


def test_the_warning_is_translated() -> None:
    with i18n.using("tr"):
        warning = versions.torch_warning("2.14.0")
    assert warning is not None and warning != versions.UNTESTED_TORCH.format(
        installed="2.14.0", tested=versions.TESTED_TORCH, command=versions.install_command()
    )
