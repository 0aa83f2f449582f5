"""The reference's prediction answers of a batch's copy flags are computed once per course and kit: a second batch
reads them back equal, and any change to the reference, or a cache that cannot be read, computes them again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.deliver.batch import answers_cache, similarity
from tests import kit


@pytest.fixture
def reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(answers_cache, "folder", lambda: tmp_path / "cache")
    folder = tmp_path / "reference"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    return folder


def _refused() -> answers_cache.Answers:
    raise AssertionError("computed again although the cache holds these answers")


def test_a_second_batch_reads_the_answers_the_first_computed(reference: Path) -> None:
    computed = similarity.reference_answers(reference)
    assert computed, "the reference answers no question"
    assert list((answers_cache.folder()).glob("*.json")), "nothing was kept"
    assert (answers_cache.folder().stat().st_mode & 0o077) == 0
    again = answers_cache.answers(reference, _refused)
    assert again == computed  # the same questions, each value in its question's form (tuples stay tuples)


def test_a_changed_reference_is_computed_again(reference: Path) -> None:
    similarity.reference_answers(reference)
    before = answers_cache.key(reference)
    with (reference / "scaling.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    assert answers_cache.key(reference) != before
    calls = []
    answers_cache.answers(reference, lambda: calls.append(1) or {})
    assert calls == [1]


@pytest.mark.parametrize("content", ["not json", '{"format": "attnlab-reference-answers/1", "answers": {"x": 1}}'])
def test_a_cache_that_cannot_be_read_back_costs_only_the_time(reference: Path, content: str) -> None:
    computed = similarity.reference_answers(reference)
    for path in answers_cache.folder().glob("*.json"):
        path.write_text(content, encoding="utf-8")
    assert similarity.reference_answers(reference) == computed


def test_the_switch_turns_the_cache_off(reference: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(answers_cache.ENV_SWITCH, "0")
    calls = []
    for _ in range(2):
        answers_cache.answers(reference, lambda: calls.append(1) or {})
    assert calls == [1, 1]
    assert not answers_cache.folder().exists()


def test_the_folder_keeps_the_most_recently_used_answers_only(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every kit or reference version adds a file; writing a new one keeps the KEEP most recently used (a file
    read counts as used) and removes what a writer that died left half written."""
    monkeypatch.setattr(answers_cache, "KEEP", 3)
    cache = answers_cache.folder()
    cache.mkdir(mode=0o700)
    for number in range(5):
        old = cache / f"old{number}.json"
        old.write_text("{}", encoding="utf-8")
        os.utime(old, (1_000_000 + number, 1_000_000 + number))
    (cache / "dead.4242.tmp").write_text("{", encoding="utf-8")
    computed = similarity.reference_answers(reference)
    kept = sorted(path.name for path in cache.iterdir())
    assert len(kept) == 3 and "old4.json" in kept and "old3.json" in kept and "dead.4242.tmp" not in kept, kept
    fresh = next(name for name in kept if not name.startswith("old"))
    os.utime(cache / fresh, (1_000_000, 1_000_000))  # unused for a long time ...
    assert answers_cache.answers(reference, _refused) == computed  # ... until read again: it counts as used
    shutil.copytree(reference, tmp_path / "changed")
    with (tmp_path / "changed" / "softmax.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# another version\n")
    similarity.reference_answers(tmp_path / "changed")
    assert fresh in {path.name for path in cache.iterdir()}
