"""A check reads its case's stored answer, and the stored wrong answers only when it fails
(:mod:`autograder.judge.cases`): a correct hand-in's grade decompresses no wrong answer, a wrong one's still names
its mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.judge import cases
from tests import kit
from tests.kit import Variant

STEPS = ("softmax", "scaling", "mask")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored arrays read from now on (the cache emptied first, as in a fresh grading process)."""
    read: list[str] = []
    archive_of = cases._archive

    def array(key: str) -> object:
        read.append(key)
        return archive_of(cases._index()[key.partition("/")[0]][0])[key]

    monkeypatch.setattr(cases, "_array", array)
    return read


def test_a_correct_hand_in_reads_no_wrong_answer(reads: list[str]) -> None:
    report = kit.grade(kit.SOLUTIONS, steps=STEPS, public_only=True)
    assert report.earned == report.possible > 0
    assert reads, "no stored answer was read: the test checks nothing"
    assert all(key.partition("/")[2].startswith("expected") for key in reads), sorted(set(reads))


def test_a_wrong_hand_in_still_names_its_mistake(reads: list[str], tmp_path: Path) -> None:
    """Attention without the 1/sqrt(d_k) scale: named from the public cases' stored wrong answers."""
    scaled, unscaled = "return scores(Q, K) / np.sqrt(d_k)", "return scores(Q, K)"
    variant = Variant("missing_scale", "scaling", "scaling", scaled, unscaled, "missing_scale")
    kit.assert_diagnosed(kit.grade(variant.build(tmp_path), steps=("scaling",), public_only=True), variant)
    assert any("/missing_scale" in key for key in reads), "the mistake was named without its stored answer"
