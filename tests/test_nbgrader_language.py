"""The nbgrader course in another language: the notebook's texts, the grade cells' feedback and their pictures."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("nbformat")

from autograder import i18n
from autograder.base import tasks
from autograder.deliver.nbgrader_course import cells, notebook, run
from autograder.deliver.nbgrader_course.private import Private, Settings
from autograder.grading.model import CheckResult, GradeReport, StepResult
from autograder.judge.evidence import Evidence


def failed_check(evidence: Evidence | None) -> CheckResult:
    return CheckResult("softmax", "test_worked_example", "Çözümlü örnek", 2.0, False, False, "beklenen ...",
                       evidence=evidence)  # fmt: skip


def one_step_report(check: CheckResult) -> GradeReport:
    return GradeReport("x/lab07_attention", (StepResult(tasks.step("softmax"), (check,)),), True, None)


def test_the_turkish_notebook_speaks_turkish_and_its_cells_ask_for_turkish_feedback() -> None:
    book = notebook.build(lang="tr")
    assert book.cells[0].source.startswith("# Laboratuvar 7: Transformer’lar ve attention")
    assert "handouts/lab07_attention.tr.md" in book.cells[0].source
    grade = next(c for c in book.cells if c.cell_type == "code" and 'grade("softmax"' in c.source)
    assert 'grade("softmax", private, lang="tr")' in grade.source and "Softmax" in grade.source
    assert notebook.steps_of(book) == list(tasks.BY_ID)


def test_the_english_notebook_is_the_committed_one() -> None:
    assert notebook.text(notebook.build()) == notebook.REPO_PATH.read_text(encoding="utf-8")


def test_feedback_lines_in_turkish() -> None:
    report = one_step_report(failed_check(None))
    with i18n.using("tr"):
        text = cells._feedback(tasks.step("softmax"), report, report.steps[0], 0.0, "", public_only=True)
    assert text.startswith("Softmax: 7 puandan 0 (açık kontroller)")  # then the step as the terminal shows it
    assert "Çözümlü örnek [2 puan]" in text and "beklenen ..." in text and "Toplam" in text
    assert "Föy: handouts/lab07_attention.tr.md#softmax" in text


def test_a_failed_matrix_check_shows_its_heatmaps(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[object] = []
    monkeypatch.setattr(IPython.display, "display", lambda item: shown.append(item))
    evidence = Evidence("softmax(x)", np.eye(3), np.full((3, 3), 1 / 3))
    cells._show_pictures((failed_check(evidence), failed_check(None)))
    assert len(shown) == 1
    assert 'src="data:image/png;base64,' in shown[0].data and "Çözümlü örnek" in shown[0].data


def test_the_grader_process_takes_the_course_language(tmp_path) -> None:
    private = Private(tmp_path)
    private.settings_file.write_text(Settings(language="tr").to_json(), encoding="utf-8")
    assert private.settings().language == "tr"
    assert run.language_for({"private": str(tmp_path)}) == "tr"
    assert run.language_for({"private": str(tmp_path), "lang": "en"}) == "en"
    assert json.loads(Settings().to_json())["language"] == "en"


TRANSLATED = [lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE]  # tr, then id and ru once their catalogs are in


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_languages_notebook_asks_for_its_feedback_and_links_its_handout(lang: str) -> None:
    book = notebook.build(lang=lang)
    assert f"handouts/lab07_attention.{lang}.md" in book.cells[0].source
    grade = next(c for c in book.cells if c.cell_type == "code" and 'grade("softmax"' in c.source)
    assert f'grade("softmax", private, lang="{lang}")' in grade.source
    assert notebook.steps_of(book) == list(tasks.BY_ID)
    with i18n.using(lang):
        assert i18n._(tasks.step("mask").title) != "Causal mask"  # the notebook and its feedback are translated


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_course_language_and_a_students_own_choice(lang: str, tmp_path) -> None:
    private = Private(tmp_path)
    private.settings_file.write_text(Settings(language=lang).to_json(), encoding="utf-8")
    assert run.language_for({"private": str(tmp_path)}) == lang
    other = next(code for code in i18n.LANGUAGES if code != lang)
    assert run.language_for({"private": str(tmp_path), "lang": other}) == other  # a student's lang= wins


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_score_line_takes_the_languages_plural_form(lang: str) -> None:
    report = one_step_report(failed_check(None))
    with i18n.using(lang):
        text = cells._feedback(tasks.step("softmax"), report, report.steps[0], 0.0, "", public_only=True)
        expected = i18n.counted(cells.SCORE_LINE, tasks.step("softmax").public_points)
    head = expected.format(title=i18n._(tasks.step("softmax").title), earned="0", possible="7")
    assert text.startswith(head)
