"""The rendered handout in a real headless browser: the page draws its text and its figures.

Needs Debian's chromium (``apt-get install -y chromium``; about 350 MB, two
minutes); skipped with the reason when no browser is installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from autograder.base.kit import Kit
from autograder.deliver.handout import browser, html

needs_chromium = pytest.mark.skipif(
    browser.find_chromium() is None,
    reason="chromium is not installed (apt-get install -y chromium, or set ATTNLAB_CHROMIUM); the "
    "browser check of the handout is skipped",
)

WIDTH, HEIGHT = 1100, 8000  # the top of the page: the step table, the errata and Figure 1 (the worked example)
MIN_INK = 0.05  # share of non-white pixels: text, tables, figures
MIN_FIGURE_ROWS = 150  # a figure: this many consecutive rows, each with many coloured pixels


def coloured_rows(pixels: np.ndarray, per_row: int = 150, saturation: int = 60) -> np.ndarray:
    """Which rows hold at least ``per_row`` clearly coloured (not grey, not white) pixels: figures, not text."""
    spread = pixels.max(axis=-1) - pixels.min(axis=-1)
    return (spread > saturation).sum(axis=1) >= per_row


def longest_run(flags: np.ndarray, gap: int = 4) -> tuple[int, int]:
    """The longest stretch of True rows (gaps up to ``gap`` rows bridged): (first row, length)."""
    best, start, last = (0, 0), None, None
    for row in np.flatnonzero(flags):
        if start is None or row - last > gap:
            start = row
        last = row
        if last - start + 1 > best[1]:
            best = (int(start), int(last - start + 1))
    return best


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    from PIL import Image

    folder = tmp_path_factory.mktemp("browser")
    page = html.build(Kit.source_tree(), folder / "lab07_attention.html")
    shot = browser.screenshot(page, folder / "top.png", WIDTH, HEIGHT)
    with Image.open(shot) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


@needs_chromium
def test_page_renders_text(screenshot: np.ndarray) -> None:
    assert screenshot.shape[:2] == (HEIGHT, WIDTH)
    ink = float(np.mean(screenshot.min(axis=-1) < 200))
    assert ink > MIN_INK, f"the page looks blank: only {ink:.1%} of the top {HEIGHT} pixels are not white"


@needs_chromium
def test_page_renders_a_figure(screenshot: np.ndarray) -> None:
    first, rows = longest_run(coloured_rows(screenshot))
    assert rows >= MIN_FIGURE_ROWS, (
        f"no figure drawn in the top {HEIGHT} pixels (longest coloured band: {rows} rows at y = {first}); "
        "a broken image, or Figure 1 moved further down the page"
    )
    band = screenshot[first : first + rows]
    assert len(np.unique(band.reshape(-1, 3), axis=0)) > 50, "the figure area is a flat colour, not a drawn figure"


@needs_chromium
def test_page_prints_to_pdf(tmp_path: Path) -> None:
    """``attnlab handout --pdf``: chromium prints the page (figures and all) to a multi-page PDF."""
    page = html.build(Kit.source_tree(), tmp_path / "lab07_attention.html")
    data = browser.pdf(page, tmp_path / "lab07_attention.pdf").read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
    assert pages >= 20, f"the PDF has only {pages} pages"
    assert data.count(b"/Subtype /Image") + data.count(b"/Subtype/Image") >= 7, "the figures are missing from the PDF"


def test_longest_run_bridges_small_gaps() -> None:
    flags = np.zeros(100, dtype=bool)
    flags[10:40] = True
    flags[42:60] = True  # a 2-row grid line inside a figure
    flags[80:85] = True
    assert longest_run(flags) == (10, 50)


def test_missing_browser_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_CHROMIUM", "no-such-browser-binary")
    with pytest.raises(browser.BrowserError, match="apt-get install -y chromium"):
        browser.screenshot(tmp_path / "page.html", tmp_path / "shot.png")
