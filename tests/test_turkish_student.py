"""The issue's scenario: a Turkish-speaking student whose softmax runs over the wrong axis.

``attnlab grade --lang tr`` must show, in Turkish, the table, the failed check,
what was expected and what came back, the likely mistake and the handout
section; ``report.html`` must hold the heatmaps that show the columns, not the
rows, summing to 1.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from autograder import i18n
from autograder.i18n import _
from autograder.report import render_html
from tests import kit
from tests.kit import Variant
from tests.test_cli import run_cli

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
    assert "beklenen (3, 3) boyutlu dizi [[0.6961, 0.1791, 0.1249]" in flat
    assert ", dönen (3, 3) boyutlu dizi" in flat
    assert "Olası hata: softmax yanlış eksen üzerinde alınıyor" in flat
    assert "Föyde 'Softmax' bölümüne bakın (handouts/lab07_attention.tr.md#softmax)" in flat
    assert "expected" not in flat.replace("--", "") and "Likely mistake" not in flat and "See the handout" not in flat
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
    assert page.count('class="heatmaps"') >= 1 and "Çözümlü örnekte dikkat ağırlıklarınız" in page
    assert np.array_equal(render_html.worked_example_weights(report), yours)  # shown beside the chapter's
    assert "Kodunuzdan çözümlü örnek için henüz ağırlık dönmedi" not in page
