"""A handout in a language, checked in a temporary kit: the real Russian one (the English one for a
language without a handout) with a Russian paragraph added.

A temporary kit holds that copy as ``lab07_attention.ru.md``: ``attnlab handout``'s steps generate its
blocks, find them stale, and build its page; in chromium the page's fonts
have the Cyrillic glyphs and no text is clipped. The real Indonesian page is
built from the kit itself and held to the same: no text clipped or off the
page outside a box that scrolls (``tests/page_probe.py`` measures both). The
translators' real ``id``/``ru`` prose gets the same checks in
``tests/test_handout_tr.py``.
"""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder import i18n
from autograder.base.kit import Kit
from autograder.deliver.handout import blocks, browser, generate, html
from tests import page_probe

REAL = Kit.source_tree()
RUSSIAN = (
    "Вычислите одну голову самовнимания без маски: запросы сопоставляются с ключами, каждая строка оценок "
    "проходит нормировку softmax, а веса внимания смешивают значения. ЁЖЩЫЭЮЯ ёжщыэюя."
)
LINKED = ("autograder", "hidden", "solutions", "assignments", "requirements")
needs_chromium = pytest.mark.skipif(browser.find_chromium() is None, reason="chromium is not installed")


def placeholder_kit(root: Path, lang: str = "ru") -> Kit:
    """A kit at ``root`` sharing the real one's code and graders, whose handouts are copies, with ``lang``'s the
    English prose and a Russian paragraph under the title."""
    root.mkdir(parents=True)
    for name in LINKED:
        (root / name).symlink_to(REAL.root / name)
    handouts = root / "handouts"
    handouts.mkdir()
    for name in ("figures", "data"):
        (handouts / name).symlink_to(REAL.handout.parent / name)
    for path in REAL.handout.parent.glob("*.md"):
        shutil.copy(path, handouts / path.name)
    kit = Kit(root)
    # The language's real handout where the kit has one (its blocks are current for its real catalog), else
    # the English one (whose blocks are what a language without translations gives).
    source = REAL.handout_for(lang) if REAL.handout_for(lang).exists() else REAL.handout
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    lines.insert(title + 1, f"\n{RUSSIAN}\n")
    kit.handout_for(lang).write_text("".join(lines), encoding="utf-8")
    return kit


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kit:
    monkeypatch.setattr(i18n, "LANGUAGES", (*i18n.LANGUAGES, "ru") if "ru" not in i18n.LANGUAGES else i18n.LANGUAGES)
    return placeholder_kit(tmp_path / "kit")


def test_a_new_languages_handout_is_generated_checked_and_built(kit: Kit) -> None:
    assert "ru" in generate.languages(kit) and generate.without_catalog(kit) == []
    path = kit.handout_for("ru")
    first = blocks.find_blocks(path.read_text(encoding="utf-8"))[0]
    assert generate.stale(kit) == []  # the blocks copied are what the language's catalog gives
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"<!-- /{first.kind}", f"an edit by hand\n<!-- /{first.kind}", 1), encoding="utf-8")
    assert generate.stale(kit) == [path]
    assert generate.write(kit) == [path] and generate.stale(kit) == []
    page = html.build(kit, None, "ru")
    assert page == kit.html_for("ru") and page.name == "lab07_attention.ru.html"
    content = page.read_text(encoding="utf-8")
    assert '<html lang="ru">' in content and RUSSIAN.split(":")[0] in content and html.FONT_STACK in content


def test_a_handout_in_a_language_without_a_catalog_is_reported(tmp_path: Path) -> None:
    kit = placeholder_kit(tmp_path / "kit", "xx")
    assert "xx" not in generate.languages(kit)
    assert generate.without_catalog(kit) == [kit.handout_for("xx")]


def test_the_font_stack_names_an_installed_font_with_cyrillic_glyphs() -> None:
    if shutil.which("fc-list") is None:
        pytest.skip("fontconfig's fc-list is not installed")
    listed = subprocess.run(["fc-list", ":lang=ru", "family"], capture_output=True, text=True, check=True).stdout
    with_cyrillic = {name.strip() for line in listed.splitlines() for name in line.split(",")}
    stack = [name.strip().strip('"') for name in html.FONT_STACK.split(",")]
    assert stack[0] in with_cyrillic, (stack, sorted(with_cyrillic))  # DejaVu Sans (fonts-dejavu-core)


# Measured in the page (tests/page_probe.py): whether each family of the body's font stack draws the Cyrillic sample
# itself, then every element whose own text is Cyrillic and that clips what overflows it or runs off the page
# outside a box that scrolls.
PROBE = page_probe.on_load(page_probe.CYRILLIC, page_probe.CYRILLIC_SAMPLE)


def probed(page: Path, probe: str = PROBE) -> dict:
    """The probe's result for ``page`` (a copy of it with ``probe`` added runs in chromium)."""
    copy = page.with_name(f"probed.{page.name}")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    found = re.search(r'<pre id="probe">(.*?)</pre>', browser.dom(copy), re.S)
    assert found, "the probe did not run"
    return json.loads(html_module.unescape(found.group(1)))


@needs_chromium
def test_the_russian_page_has_the_glyphs_and_clips_no_text(kit: Kit, tmp_path: Path) -> None:
    page = html.build(kit, tmp_path / "lab07_attention.ru.html", "ru")
    result = probed(page)
    assert result["matched"] >= 1
    assert result["fonts"][0]["family"].strip('"') == "DejaVu Sans"
    assert result["fonts"][0]["covers"], f"the first font of the page lacks Cyrillic glyphs: {result['fonts']}"
    assert result["clipped"] == []


INDONESIAN = re.compile(r"\b(yang|dengan|untuk|dan)\b")  # words of the Indonesian prose, not of the English


@needs_chromium
def test_the_real_indonesian_page_clips_no_text(tmp_path: Path) -> None:
    source = REAL.handout_for("id")
    assert INDONESIAN.search(source.read_text(encoding="utf-8")), "the Indonesian handout is not in Indonesian"
    page = html.build(REAL, tmp_path / "lab07_attention.id.html", "id")
    assert '<html lang="id">' in page.read_text(encoding="utf-8")
    result = probed(page, page_probe.on_load(page_probe.LATIN, page_probe.INDONESIAN_SAMPLE))
    assert result["matched"] >= 100, result["matched"]  # the whole handout's text was looked at
    assert result["fonts"][0]["family"].strip('"') == "DejaVu Sans" and result["fonts"][0]["covers"]
    assert result["clipped"] == [], result["clipped"]


@needs_chromium
def test_the_probe_finds_text_clipped_or_off_the_page(tmp_path: Path) -> None:
    """The probe itself: a box that hides its overflow, and a line wider than the page, are both found."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html lang="id"><head><meta charset="utf-8"></head><body style="margin: 0">'
        '<p style="width: 5em; overflow: hidden; white-space: nowrap">dengan kalimat yang terlalu panjang</p>'
        '<p style="width: 5000px">baris yang melewati tepi halaman</p>'
        '<div style="overflow-x: auto"><p style="width: 5000px">baris dalam kotak yang bisa digulir</p></div>'
        "</body></html>",
        encoding="utf-8",
    )
    result = probed(page, page_probe.on_load(page_probe.LATIN, page_probe.INDONESIAN_SAMPLE))
    assert result["clipped"] == [
        "P: dengan kalimat yang terlalu panjang",
        "off the page: P: baris yang melewati tepi halaman",
    ], result["clipped"]
