"""Every translated handout (Turkish, and Indonesian and Russian once their prose is in): the same generated
blocks, anchors and figures as the English one, current, in its language.

The file keeps its name from when Turkish was the only translation; the
Turkish-only checks of wording stay marked by their ``tr``.
"""

from __future__ import annotations

import difflib
import re

import pytest

from autograder import i18n
from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.deliver.handout import blocks, generate, html
from autograder.i18n import _

KIT = Kit.source_tree()
LANG = "tr"
TRANSLATED = [lang for lang in generate.languages(KIT) if lang != i18n.SOURCE]  # tr, then id and ru when in
ENGLISH_BLOCK_WORDS = ("Run `attnlab grade", "points (of which hidden)", "Likely mistake:", "more points from hidden")


def markdown(lang: str = LANG) -> str:
    return KIT.handout_for(lang).read_text(encoding="utf-8")


def test_the_turkish_handout_is_listed_and_generated() -> None:
    assert LANG in generate.languages(KIT)
    assert generate.without_catalog(KIT) == [], "a handout whose language has no catalog"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_generated_blocks_are_current(lang: str) -> None:
    committed, fresh = markdown(lang), generate.generated(KIT, lang)
    diff = "".join(
        list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), "committed", "generated"))[:40]
    )
    if committed != fresh:
        pytest.fail(f"the {lang} handout's generated blocks are stale; run: attnlab handout\n{diff}", pytrace=False)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_same_blocks_and_anchors_as_the_english_handout(lang: str) -> None:
    english, translated = blocks.find_blocks(markdown("en")), blocks.find_blocks(markdown(lang))
    assert [(b.kind, b.key) for b in translated] == [(b.kind, b.key) for b in english]
    anchors = re.compile(r'<a id="([^"]+)"></a>')
    assert anchors.findall(markdown(lang)) == anchors.findall(markdown("en"))


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_every_step_has_its_anchor_above_its_translated_heading(step: tasks.Step, lang: str) -> None:
    lines = markdown(lang).splitlines()
    anchor = f'<a id="{step.anchor}"></a>'
    after = lines[lines.index(anchor) + 1]
    with i18n.using(lang):
        title = _(step.title)
    assert after.startswith("## ") and title in after, (anchor, after)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_generated_text_is_in_the_handouts_language(lang: str) -> None:
    text = markdown(lang)
    for english in ENGLISH_BLOCK_WORDS:
        assert english not in text, english


def test_generated_text_is_turkish() -> None:
    text = markdown()
    for turkish in ("Olası hata:", "puan (gizli olanlar)", "Şekil 1.", "gizli kontrollerden"):
        assert turkish in text, turkish


@pytest.mark.parametrize("lang", TRANSLATED)
def test_html_page_is_in_its_language_and_self_contained(lang: str, tmp_path) -> None:
    page = html.build(KIT, tmp_path / "page.html", lang).read_text(encoding="utf-8")
    assert f'<html lang="{lang}">' in page
    assert not re.search(r'(src|href)="(https?:)?//', page) and "<script" not in page
    assert page.count('src="data:image/png;base64,') == 8  # 7 figures and the workbench screenshot
    assert {s.anchor for s in tasks.STEPS} <= set(re.findall(r'\bid="([^"]+)"', page))
    assert html.FONT_STACK in page  # fonts with the language's glyphs (Cyrillic too)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_markdown_is_plain_utf8_without_tabs(lang: str) -> None:
    text = KIT.handout_for(lang).read_bytes().decode("utf-8")
    assert "\t" not in text and text.endswith("\n")
