"""The issue's scenario: a Turkish-speaking student whose softmax runs over the wrong axis.

``attnlab grade --lang tr`` must show, in Turkish, the table, the failed check,
what was expected and what came back, the likely mistake and the handout
section; ``report.html`` must hold the heatmaps that show the columns, not the
rows, summing to 1.
"""

from __future__ import annotations

import gettext
import importlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograder import i18n
from autograder.base import tasks
from autograder.grading.model import GradeReport
from autograder.i18n import _
from autograder.judge.timing import report as timing_report
from autograder.report import render_html, render_terminal
from tests import kit
from tests.kit import Variant
from tests.test_cli import run_cli
from tests.untranslated import MarkedCatalog, english_outside_the_catalog, english_words

WRONG_AXIS = Variant(
    "softmax_over_columns",
    "softmax",
    "softmax",
    "x = np.asarray(x, dtype=float)",
    "x = np.asarray(x, dtype=float)\n    axis = 0 if axis == -1 and x.ndim > 1 else axis  # over the columns",
    "softmax_wrong_axis",
)


@pytest.fixture(scope="module")
def submission(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return WRONG_AXIS.build(tmp_path_factory.mktemp("student"))


def test_the_terminal_says_it_all_in_turkish(submission: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    done = run_cli("grade", str(submission), "--step", "softmax", "--lang", "tr", "--html", str(page))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("adım"))
    assert lines[head].split() == ["adım", "alınan", "puan", "geçen", "kontroller"]
    assert re.match(r"Softmax\s+\d+\s+10\s+\d+/\d+$", lines[head + 2]), lines[head + 2]
    assert lines[head + 4].startswith("Toplam")
    assert "Düzeltilecekler, adım adım:" in out
    flat = " ".join(out.split())
    assert "✗ Çözümlü örneğin ölçeklenmiş skorlarının softmax’ı bölümün attention matrisini verir" in flat
    # the call and its inputs, then what was expected and what came back: words in Turkish, code and values as they are
    assert "Softmax: softmax(x), x = çözümlü örneğin ölçeklenmiş skorları (3 x 3): beklenen" in flat
    assert "beklenen (3, 3) şeklinde dizi [[0.6961, 0.1791, 0.1249]" in flat
    assert ", dönen (3, 3) şeklinde dizi [[0.4052," in flat
    assert "(en büyük fark [1, 1] konumunda: beklenen 0.680356, dönen 0.371541)" in flat
    assert "Olası hata: softmax yanlış eksen üzerinde alınıyor" in flat
    assert "Föyde 'Softmax' bölümüne bakın (handouts/lab07_attention.tr.md#softmax)" in flat
    assert "expected" not in flat.replace("--", "") and "Likely mistake" not in flat and "See the handout" not in flat
    assert english_words(flat) == [], "English left in the Turkish report"
    assert page.is_file() and '<html lang="tr">' in page.read_text(encoding="utf-8")


def test_the_handout_section_it_names_exists() -> None:
    handout = kit.KIT.handout_for("tr").read_text(encoding="utf-8")
    assert '<a id="softmax"></a>' in handout


def test_the_report_pictures_columns_summing_to_one(submission: Path) -> None:
    with i18n.using("tr"):
        report = kit.grade(submission, steps=("softmax",), public_only=True)
        page = render_html.page(report)
    worked = next(c for c in report.step("softmax").failed if c.name == "test_worked_example")
    assert worked.mistake == "softmax_wrong_axis" and worked.evidence is not None
    yours, expected = worked.evidence.got, worked.evidence.expected
    assert np.allclose(yours.sum(axis=0), 1.0) and not np.allclose(yours.sum(axis=1), 1.0)
    assert np.allclose(expected.sum(axis=1), 1.0)
    with i18n.using("tr"):
        assert render_html.pictures(worked.evidence) in page  # drawn with the Turkish labels
        assert _("yours − expected") == "sizinki − beklenen"
    assert page.count('class="heatmaps"') >= 1 and "Çözümlü örnekte attention ağırlıklarınız" in page
    assert np.array_equal(render_html.worked_example_weights(report), yours)  # shown beside the chapter's
    assert "Kodunuzdan çözümlü örnek için henüz ağırlık dönmedi" not in page


# -- no grader string left in English ----------------------------------------------------------------------------


def every_known_mistake(into: Path) -> Path:
    """The reference with every known wrong answer of the kit's tests that still applies, and a made-up timing report.

    One folder makes nearly every check fail, most with a diagnosis, so one
    grading run prints most of what the graders can say.
    """
    folder = into / "every_mistake"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in sorted((kit.ROOT / "tests").glob("test_*.py")):
        for variant in getattr(importlib.import_module(f"tests.{path.stem}"), "VARIANTS", ()):
            module = folder / f"{variant.module}.py"
            text = module.read_text(encoding="utf-8")
            if variant.old in text:  # an earlier variant may have rewritten the same line
                module.write_text(text.replace(variant.old, variant.new, 1), encoding="utf-8")
    from tests.test_step_timing import _change_a_token, _ideal_numbers, _shift_slope

    data = json.loads((folder / timing_report.PATH).read_text(encoding="utf-8"))
    for edit in (_ideal_numbers, _shift_slope, _change_a_token):
        edit(data)
    data["decoding"]["with_cache"]["seconds"] = data["decoding"]["without_cache"]["seconds"]  # the cache unused
    (folder / timing_report.PATH).write_text(json.dumps(data), encoding="utf-8")
    return folder


def _marked_turkish(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turkish from the ``.po``, every translated piece marked (see :mod:`tests.untranslated`)."""
    marked = MarkedCatalog("tr")
    monkeypatch.setattr(i18n, "translations", lambda lang: marked if lang == "tr" else gettext.NullTranslations())


def _everything_shown(report: GradeReport) -> str:
    """Every word the report shows a student: the full terminal text, each message and each 'not started' note."""
    checks = [c for s in report.steps for c in s.checks]
    return "\n".join(
        [render_terminal.text(report, render_terminal.VERBOSE), render_terminal.text(report)]
        + [c.message for c in checks if c.message]
        + [c.not_started for c in checks if c.not_started]
    )


@pytest.mark.parametrize("folder", ["stubs", "every_mistake"])
def test_no_grader_string_is_left_untranslated(folder: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In Turkish, everything outside the catalog's translations is code or a value: no English sentence is left."""
    submission = kit.STUBS if folder == "stubs" else every_known_mistake(tmp_path)
    _marked_turkish(monkeypatch)
    with i18n.using("tr"):
        report = kit.grade(submission)
        shown = _everything_shown(report)
    failed = [c for s in report.steps for c in s.failed]
    assert len(failed) > 100 and not any(c.internal_error for c in failed), "the run shows too little to judge"
    assert "\u27e6" in shown  # the marks are there: the run read the marked catalog
    left = english_outside_the_catalog(shown)
    assert not left, f"{len(left)} pieces of English not from the catalog, e.g. {left[:8]}"


SCREEN_LINES = 40  # one terminal screen


@pytest.mark.slow
@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_the_stubs_and_the_reference_fit_on_one_screen_in_every_language(lang: str) -> None:
    """What a student sees, the default-secret note included: the stubs in at most 40 lines (every function still
    to write is named, packed by file: 36 in English, 37 in Turkish), the reference under 25."""
    shown = {}
    for folder, limit in ((kit.STUBS, SCREEN_LINES), (kit.SOLUTIONS, 24)):
        done = run_cli("grade", str(folder), "--lang", lang)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) <= limit, "\n".join(lines)
        shown[folder] = " ".join(done.stdout.split())
    # nothing lost: every function still to write is named (a class's methods under the class)
    for step in tasks.STEPS:
        for name in step.functions:
            owner, _dot, method = name.rpartition(".")
            assert (method if owner else f"{name}") in shown[kit.STUBS], name


def test_a_check_title_made_from_parts_is_in_the_language_of_each_grade() -> None:
    """The hidden predictions' titles are composed when the report is written: a grade in English first (the
    graders' modules imported then) does not leave the next grade's titles in English."""
    english = kit.grade(kit.STUBS, steps=("predictions",))
    with i18n.using("tr"):
        turkish = kit.grade(kit.STUBS, steps=("predictions",))
    titles = {c.name: c.title for s in english.steps for c in s.checks}
    hidden = [c for s in turkish.steps for c in s.checks if c.name.endswith("_against_reference")]
    assert hidden, "no hidden predictions check ran"
    for check in hidden:
        assert titles[check.name].endswith(", against the reference")
        assert check.title.endswith(", referansa karşı"), check.title
