"""The real Indonesian and Russian workbench pages in chromium: they run, draw Cyrillic, clip nothing, say it all
in the language.

Four pages are built for the module, as ``attnlab workbench --lang id`` and
``--lang ru`` write them: of the reference solutions and of the untouched
stubs. Each is walked view by view (the eight stages, the calibrator and its
question, the tracker, the lens, prefill and decode, every experiment tested)
at a desktop width and a narrow one, and in every state: the script logs no
error; the fonts the Russian text is drawn in have the Cyrillic glyphs
(``tests/page_probe.py``); no text is clipped or runs off the page outside a
box that scrolls; and no English sentence of the catalog whose translation is
different is visible.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder import i18n
from autograder.deliver.workbench import build, strings, worked
from autograder.i18n import catalogs
from tests import kit, page_probe
from tests.test_workbench_browser import _missing, driver, find, open_page, predict  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()}; the workbench's browser tests skip")

LANGS = ("id", "ru")
FOLDERS = {"reference": kit.SOLUTIONS, "stubs": kit.STUBS}
WIDTHS = (1300, 760)  # a laptop's window, and one half as wide
SCRIPT = {  # the letters whose text is probed, and a sample of them
    "ru": (page_probe.CYRILLIC, page_probe.CYRILLIC_SAMPLE),
    "id": (page_probe.LATIN, page_probe.INDONESIAN_SAMPLE),
}
GUESSES = {"value_row": "1", "drop_scale": "0", "mask_first_row": "0.5", "scores_1024": "1000", "cache_length": "12"}
MIN_WORDS = 3  # an English passage this long, absent from the translation, is an untranslated sentence
SYMBOLS = " \u25b6\u25c0\u275a\u26a0\u2026\u00a0"  # the buttons' and tabs' marks around their words

OWN_TEXTS = """
return Array.from(document.querySelectorAll("body *")).filter(function (el) {
  return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
}).map(function (el) {
  return Array.from(el.childNodes).filter(function (n) { return n.nodeType === 3; })
    .map(function (n) { return n.textContent; }).join("").trim();
}).filter(function (t) { return t.length > 0; });
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    into = tmp_path_factory.mktemp("workbench-languages")
    built = {}
    for lang in LANGS:
        with i18n.using(lang):  # as attnlab workbench --lang does: the sentences of the data and of the page
            for name, folder in FOLDERS.items():
                out = into / f"{name}.{lang}.html"
                build.write(build.Options(folder), out)
                built[name, lang] = out
    return built


def states(driver, page: Path) -> Iterator[str]:  # noqa: F811 (the fixture)
    """Open ``page`` in each of its views and states in turn; yield the name of each."""
    for stage in worked.STAGES:
        open_page(driver, page, f"tab=stages&stage={stage}")
        yield f"stage {stage}"
    for tab in ("calibrator", "tracker", "lens", "cache"):
        open_page(driver, page, f"tab={tab}")
        yield tab
    open_page(driver, page, "tab=calibrator")
    find(driver, "#cal-scale").click()  # a changed condition: the question before the result
    yield "calibrator question"
    open_page(driver, page, "tab=lens")
    driver.execute_script(
        "const s = document.getElementById('lens-source'); s.value = 'worked'; s.dispatchEvent(new Event('change'));"
    )
    yield "lens, the worked example"
    open_page(driver, page, "tab=cache&step=11")
    yield "cache, the last step"
    for experiment, guess in GUESSES.items():
        predict(driver, experiment, guess)
    yield "every experiment tested"


def english_passages(lang: str) -> tuple[dict[str, str], dict[str, str]]:
    """From ``lang``'s catalog, for every message whose translation differs from the English: its passages of
    ``MIN_WORDS`` words or more that no form of the translation holds, and its whole English when it has no field
    (a button's "Play"); each mapped to the message."""
    passages, whole = {}, {}
    for message in catalogs.read(lang):
        if not message.id or not message.string:
            continue
        english = message.id if isinstance(message.id, tuple) else (message.id,)
        translated = message.string if isinstance(message.string, tuple) else (message.string,)
        if set(english) & set(translated):
            continue  # kept as it is (code, a formula, a word the chapter keeps)
        for text in english:
            if not catalogs.placeholders(text):
                whole[text.strip()] = english[0]
            for passage in catalogs.PLACEHOLDER.split(text):
                passage = passage.strip()
                if len(passage.split()) >= MIN_WORDS and not any(passage in t for t in translated):
                    passages[passage] = english[0]
    return passages, whole


def state_problems(driver, where: str, lang: str) -> list[str]:  # noqa: F811 (the fixture)
    """What is wrong with the page as ``driver`` shows it now: script errors, text without its glyphs (Russian),
    text clipped or off the page, English sentences of ``lang``'s catalog."""
    letters, sample = SCRIPT[lang]
    passages, whole = english_passages(lang)
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    found = [f"{where}: script error {e}" for e in errors]
    probed = page_probe.run(driver, letters, sample)
    if probed["matched"] == 0:
        found.append(f"{where}: no text in the page's letters")
    anything = page_probe.run(driver, "\\S", sample)  # clipped: any text, a heatmap's numbers too
    found += [f"{where}: {c}" for c in anything["clipped"]]
    if lang == "ru":
        lacking = [f["family"] for f in probed["fonts"][:1] if not f["covers"]]
        lacking += [family for family, covers in probed["used"].items() if not covers]
        found += [f"{where}: no Cyrillic glyphs in {family.strip(chr(34))}" for family in lacking]
    visible = find(driver, "body").text
    found += [f"{where}: English {p!r} (of {m!r})" for p, m in passages.items() if p in visible]
    found += [f"{where}: English {own!r}" for own in driver.execute_script(OWN_TEXTS) if own.strip(SYMBOLS) in whole]
    return found


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", list(FOLDERS))
def test_the_page_runs_draws_its_letters_clips_nothing_and_speaks_the_language(
    driver,  # noqa: F811 (the fixture)
    pages: dict[tuple[str, str], Path],
    name: str,
    lang: str,
) -> None:
    page = pages[name, lang]
    assert f'<html lang="{lang}">' in page.read_text(encoding="utf-8")
    problems: list[str] = []
    walked = 0
    try:
        for width in WIDTHS:
            driver.set_window_size(width, 1400)
            for state in states(driver, page):
                problems += state_problems(driver, f"{name}.{lang} at {width} px, {state}", lang)
                walked += 1
    finally:
        driver.set_window_size(1300, 1400)
    assert walked == len(WIDTHS) * (len(worked.STAGES) + 8)
    assert problems == [], "\n".join(dict.fromkeys(problems))


def test_the_checks_find_an_error_missing_glyphs_clipped_text_and_english(
    driver,  # noqa: F811 (the fixture)
    pages: dict[tuple[str, str], Path],
) -> None:
    """The checks can fail: each thing planted in the Russian page is found."""
    open_page(driver, pages["reference", "ru"], "tab=predict")
    assert state_problems(driver, "as built", "ru") == []
    english = strings.TEXT["predict_text"]  # "Write down what you expect first. ..."
    assert english in english_passages("ru")[0]
    driver.execute_script(
        """
        const add = function (html, css) {
          const p = document.createElement("p"); p.textContent = html; p.setAttribute("style", css);
          document.getElementById("panel").appendChild(p);
        };
        add(arguments[0], "");
        add("Предсказание, которое не помещается в свою рамку", "width: 4em; overflow: hidden; white-space: nowrap");
        add("Строка шире страницы", "width: 6000px");
        add("Шрифт без кириллицы", "font-family: 'No Such Font', serif; font-size: 30px");
        add("Play", "");
        console.error("a planted error");
        """,
        english,
    )
    found = "\n".join(state_problems(driver, "planted", "ru"))
    assert "script error" in found and "a planted error" in found
    assert "P: Предсказание, которое не помещается" in found and "off the page: P: Строка шире страницы" in found
    assert "no Cyrillic glyphs in No Such Font" in found
    assert f"English {english!r}" in found and "English 'Play'" in found
