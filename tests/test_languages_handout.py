"""A handout in a language, checked in a temporary kit: the real Russian one (the English one for a
language without a handout) with a Russian paragraph added.

A temporary kit holds that copy as ``lab07_attention.ru.md``: ``attnlab handout``'s steps generate its
blocks, find them stale, and build its page; in chromium the page's fonts
have the Cyrillic glyphs and no text is clipped. The translators' real
``id``/``ru`` prose gets the same checks in ``tests/test_handout_tr.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder import i18n
from autograder.handout import blocks, browser, generate, html
from autograder.kit import Kit

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


# Measured in the page: for each family of the body's font stack, whether it draws the Cyrillic sample itself
# (the same width whatever the fallback behind it: a missing glyph would come from the fallback); then every
# element whose own text is Cyrillic and that clips what overflows it or runs off the page outside a box that
# scrolls.
PROBE = """
<script>
window.addEventListener("load", function () {
  const sample = "Вычислите одну голову самовнимания ЁЖЩЫЭЮЯ ёжщыэюя";
  const ctx = document.createElement("canvas").getContext("2d");
  function width(font) { ctx.font = "32px " + font; return ctx.measureText(sample).width; }
  const generic = ["serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "math"];
  const families = getComputedStyle(document.body).fontFamily.split(",").map(function (f) { return f.trim(); });
  const fonts = families.filter(function (f) { return generic.indexOf(f) < 0; }).map(function (f) {
    return { family: f, covers: Math.abs(width(f + ", monospace") - width(f + ", serif")) < 0.01 };
  });
  const clipped = [];
  let cyrillic = 0;
  document.querySelectorAll("body *").forEach(function (el) {
    const own = Array.from(el.childNodes).filter(function (n) { return n.nodeType === 3; })
      .map(function (n) { return n.textContent; }).join("");
    if (!/[\\u0400-\\u04FF]/.test(own)) { return; }
    cyrillic += 1;
    const style = getComputedStyle(el);
    const clips = ["hidden", "clip"].indexOf(style.overflowX) >= 0 || ["hidden", "clip"].indexOf(style.overflowY) >= 0;
    if ((clips && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
        || style.textOverflow === "ellipsis") {
      clipped.push(el.tagName + ": " + own.slice(0, 60));
    }
    // Text in a box that scrolls (a code block, a wide table) is reachable: only text past the page's edge
    // with no scrolling box around it is lost.
    let scrolls = false;
    for (let up = el; up && up !== document.body; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll") { scrolls = true; break; }
    }
    const box = el.getBoundingClientRect();
    if (!scrolls && box.right > document.documentElement.clientWidth + 1) {
      clipped.push("off the page: " + own.slice(0, 60));
    }
  });
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({ fonts: fonts, clipped: clipped, cyrillic: cyrillic });
  document.body.appendChild(out);
});
</script>
"""


@needs_chromium
def test_the_russian_page_has_the_glyphs_and_clips_no_text(kit: Kit, tmp_path: Path) -> None:
    page = html.build(kit, tmp_path / "lab07_attention.ru.html", "ru")
    probed = page.with_name("probed.html")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    found = re.search(r'<pre id="probe">(.*?)</pre>', browser.dom(probed), re.S)
    assert found, "the probe did not run"
    result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert result["cyrillic"] >= 1
    assert result["fonts"][0]["family"].strip('"') == "DejaVu Sans"
    assert result["fonts"][0]["covers"], f"the first font of the page lacks Cyrillic glyphs: {result['fonts']}"
    assert result["clipped"] == []
