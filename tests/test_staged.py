"""One staged copy of a hand-in serves every step's sandbox of a grade (:class:`autograder.sandbox.client.Staged`),
and no child reaches it: what one step's child writes never reaches the next step's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autograder.sandbox import isolation, launcher
from autograder.sandbox.client import Sandbox, Staged
from autograder.sandbox.isolation import Level
from tests import kit

TAMPERS = textwrap.dedent("""
    import os

    def tamper(staged_file):
        '''Rewrite mask.py in the working copy and, through its path, in the staged copy: how many were written.'''
        written = 0
        for target in ("mask.py", staged_file):
            try:
                with open(target, "w") as handle:
                    handle.write("def value():\\n    return 'tampered'\\n")
                written += 1
            except OSError:
                pass
        return written
""")


def test_a_grade_stages_the_hand_in_once_for_every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    staged: list[Path] = []
    removed: list[Path] = []
    stage, unstage = launcher.stage, launcher.unstage
    monkeypatch.setattr(launcher, "stage", lambda submission: staged.append(stage(submission)) or staged[-1])
    monkeypatch.setattr(launcher, "unstage", lambda path: removed.append(path) or unstage(path))
    report = kit.grade(kit.SOLUTIONS, steps=("softmax", "scaling", "mask"), public_only=True)
    assert report.earned == report.possible > 0
    assert len(staged) == 1, staged  # one for three sandboxes (three before)
    assert removed == staged and not staged[0].exists()


@pytest.mark.parametrize("level", list(Level), ids=lambda level: level.label)
def test_no_child_changes_the_copy_the_next_step_starts_from(tmp_path: Path, level: Level) -> None:
    found = isolation.available()
    if not found.works[level]:
        pytest.skip(f"isolation {level.label} does not work here: {found.why[level]}")
    folder = tmp_path / "hand-in"
    folder.mkdir()
    (folder / "softmax.py").write_text(TAMPERS, encoding="utf-8")
    (folder / "mask.py").write_text("def value():\n    return 'handed in'\n", encoding="utf-8")
    staged = Staged(folder)
    try:
        with Sandbox(folder, isolation=level, staged=staged, torch=False) as first:
            assert first.call("softmax", "tamper", str(staged.path() / "mask.py")) == 1  # its own working copy only
            assert first.call("mask", "value") == "tampered"
        with Sandbox(folder, isolation=level, staged=staged, torch=False) as second:
            assert second.call("mask", "value") == "handed in"
        assert staged.path().exists(), "a sandbox removed the copy it shares"
        assert "handed in" in (staged.path() / "mask.py").read_text(encoding="utf-8")
    finally:
        path = staged.path()
        staged.close()
    assert not path.exists()


def test_a_shared_copy_is_of_the_sandbox_s_own_hand_in(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="a staged copy of"):
        Sandbox(kit.SOLUTIONS, staged=Staged(tmp_path))
