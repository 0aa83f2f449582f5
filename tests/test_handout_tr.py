"""The Turkish handout: the same generated blocks, anchors and figures as the English one, current, in Turkish."""

from __future__ import annotations

import difflib
import re

import pytest

from autograder import i18n, tasks
from autograder.handout import blocks, generate, html
from autograder.i18n import _
from autograder.kit import Kit

KIT = Kit.source_tree()
LANG = "tr"


def markdown(lang: str = LANG) -> str:
    return KIT.handout_for(lang).read_text(encoding="utf-8")


def test_the_turkish_handout_is_listed_and_generated() -> None:
    assert LANG in generate.languages(KIT)


def test_generated_blocks_are_current() -> None:
    committed, fresh = markdown(), generate.generated(KIT, LANG)
    diff = "".join(
        list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), "committed", "generated"))[:40]
    )
    if committed != fresh:
        pytest.fail(f"the Turkish handout's generated blocks are stale; run: attnlab handout\n{diff}", pytrace=False)


def test_same_blocks_and_anchors_as_the_english_handout() -> None:
    english, turkish = blocks.find_blocks(markdown("en")), blocks.find_blocks(markdown())
    assert [(b.kind, b.key) for b in turkish] == [(b.kind, b.key) for b in english]
    anchors = re.compile(r'<a id="([^"]+)"></a>')
    assert anchors.findall(markdown()) == anchors.findall(markdown("en"))


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_every_step_has_its_anchor_above_its_turkish_heading(step: tasks.Step) -> None:
    lines = markdown().splitlines()
    anchor = f'<a id="{step.anchor}"></a>'
    after = lines[lines.index(anchor) + 1]
    with i18n.using(LANG):
        title = _(step.title)
    assert after.startswith("## ") and title in after, (anchor, after)


def test_generated_text_is_turkish() -> None:
    text = markdown()
    for english in ("Run `attnlab grade", "points (of which hidden)", "Likely mistake:", "more points from hidden"):
        assert english not in text, english
    for turkish in ("Olası hata:", "puan (gizli olanlar)", "Şekil 1.", "gizli kontrollerden"):
        assert turkish in text, turkish


def test_html_page_is_turkish_and_self_contained(tmp_path) -> None:
    page = html.build(KIT, tmp_path / "page.html", LANG).read_text(encoding="utf-8")
    assert '<html lang="tr">' in page
    assert not re.search(r'(src|href)="(https?:)?//', page) and "<script" not in page
    assert page.count('src="data:image/png;base64,') == 8  # 7 figures and the workbench screenshot
    assert {s.anchor for s in tasks.STEPS} <= set(re.findall(r'\bid="([^"]+)"', page))


def test_markdown_is_plain_utf8_without_tabs() -> None:
    text = KIT.handout_for(LANG).read_bytes().decode("utf-8")
    assert "\t" not in text and text.endswith("\n")
