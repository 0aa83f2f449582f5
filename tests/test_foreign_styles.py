"""Code in the styles of public projects, wrapped to the lab's contract (see :mod:`tests.foreign`).

Correct ones score full on every step they touch, not only their own: the
reference modules that import them must take what the contract allows (a
torch tensor where an array is returned, float32 internals). Real bugs lose
points on their step and are explained there: by a named mistake, or by a
sentence that says which property failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import kit
from tests.foreign import FOREIGN, Foreign

CORRECT = [f for f in FOREIGN if f.correct]
BUGS = [f for f in FOREIGN if not f.correct]


@pytest.mark.parametrize("foreign", CORRECT, ids=lambda f: f.name)
def test_correct_style_scores_full_everywhere(foreign: Foreign, tmp_path: Path) -> None:
    # the steps whose modules run the replaced code (timing aside: tests/test_step_timing.py covers it); every other
    # step grades the reference's own modules, as the session's reference report does
    touched = kit.steps_touching(replacement.module for replacement in foreign.replacements)
    report = kit.grade(foreign.build(tmp_path), steps=touched)
    assert foreign.step in touched and [s.step.id for s in report.steps] == list(touched)
    lost = {s.step.id: [c.message for c in s.failed] for s in report.steps if s.earned < s.possible}
    assert not lost, f"{foreign.name} (own step {foreign.step}) lost points: {lost}"


@pytest.mark.parametrize("foreign", BUGS, ids=lambda f: f.name)
def test_real_bug_loses_points_and_is_explained(foreign: Foreign, tmp_path: Path) -> None:
    result = kit.grade(foreign.build(tmp_path), steps=(foreign.step,)).step(foreign.step)
    assert result.earned < result.possible, f"{foreign.name} scored full marks on {foreign.step}"
    assert not any(c.internal_error for c in result.checks), [c.message for c in result.checks if c.internal_error]
    if foreign.mistake is not None:
        named = {c.mistake for c in result.failed}
        assert foreign.mistake in named, (foreign.name, named, [c.message for c in result.failed])
    else:
        assert any(foreign.sentence in c.message for c in result.failed), [c.message for c in result.failed]


def test_most_real_bugs_get_a_named_mistake() -> None:
    """The issue's target: at least 80% of the real-bug patterns are named (the rest get a property sentence)."""
    assert sum(f.mistake is not None for f in BUGS) >= 0.8 * len(BUGS)
