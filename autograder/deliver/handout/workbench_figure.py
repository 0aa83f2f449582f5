"""The handout's picture of ``attnlab workbench``: a headless-chromium screenshot of its page for the reference.

Unlike the matplotlib figures (:mod:`autograder.deliver.handout.figures`), a
screenshot depends on the machine's browser and fonts, so it is taken when
chromium is there and otherwise the committed one is kept; the staleness
check asks only that it exists (two machines never draw a page to the same
pixels). The page is built by the workbench itself, from the reference
solution, in English; the state shown (stage 2 of the worked example, a score
clicked) is chosen through the page's address.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from autograder.base.kit import Kit
from autograder.deliver.handout import browser

NAME = "workbench"  # the figure's name: handouts/figures/workbench.png, block figure:workbench
STATE = "tab=stages&stage=sum&cell=2,1"
WIDTH, HEIGHT = 1100, 790


def path(kit: Kit) -> Path:
    return kit.figures / f"{NAME}.png"


def render(kit: Kit) -> bytes | None:
    """The screenshot's PNG bytes, or None where there is no chromium."""
    if browser.find_chromium() is None:
        return None
    from autograder.deliver.workbench import build  # runs the reference through the sandbox: only when a shot is taken

    with tempfile.TemporaryDirectory(prefix="attnlab-workbench-shot-") as folder:
        page = Path(folder) / "workbench.html"
        build.write(build.Options(kit.solutions), page)
        return browser.screenshot(page, Path(folder) / "shot.png", WIDTH, HEIGHT, STATE).read_bytes()


def write(kit: Kit) -> list[Path]:
    """Take the screenshot again where chromium is (kept when it draws the same); the files that changed."""
    from autograder.deliver.handout.figures import same_image

    data = render(kit)
    target = path(kit)
    if data is None or (target.is_file() and same_image(target.read_bytes(), data)):
        return []
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return [target]


def stale(kit: Kit) -> list[str]:
    """The screenshot's file name when it is missing (its pixels are the machine's; they are never compared)."""
    return [] if path(kit).is_file() else [f"{NAME}.png"]
