"""Open the rendered handout in a real headless browser: a screenshot, or a PDF.

Uses Debian's ``chromium`` (``apt-get install -y chromium``) or any Chrome
found on the path; ``ATTNLAB_CHROMIUM`` names another binary. Nothing here is
needed to build the handout; the kit's browser test skips without a browser.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 120


class BrowserError(RuntimeError):
    """The browser is missing, failed, or wrote nothing."""


def find_chromium() -> str | None:
    """The browser binary to use, or None when there is none."""
    if os.environ.get("ATTNLAB_CHROMIUM"):
        return shutil.which(os.environ["ATTNLAB_CHROMIUM"])
    return next((found for found in map(shutil.which, CANDIDATES) if found), None)


def _chromium(arguments: list[str]) -> subprocess.CompletedProcess:
    binary = find_chromium()
    if binary is None:
        raise BrowserError("no chromium found (install it with: apt-get install -y chromium, or set ATTNLAB_CHROMIUM)")
    with tempfile.TemporaryDirectory(prefix="attnlab-chromium-") as profile:
        command = [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", *arguments,
        ]  # fmt: skip
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def _run(arguments: list[str], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    result = _chromium(arguments)
    binary = find_chromium()
    if not out.is_file() or out.stat().st_size == 0:
        raise BrowserError(f"{binary} wrote no {out.name} (exit {result.returncode}): {result.stderr[-800:]}")
    return out


def dom(page: Path, budget_ms: int = 5000) -> str:
    """The page's DOM after it loaded and its scripts ran (``--dump-dom``)."""
    result = _chromium([f"--virtual-time-budget={budget_ms}", "--dump-dom", page.resolve().as_uri()])
    if "<body" not in result.stdout:
        raise BrowserError(f"chromium printed no DOM (exit {result.returncode}): {result.stderr[-800:]}")
    return result.stdout


def screenshot(page: Path, out: Path, width: int = 1100, height: int = 6000, fragment: str = "") -> Path:
    """A PNG of the top ``height`` pixels of ``page`` in a window ``width`` pixels wide; ``fragment`` (after ``#``
    in the address) chooses a state of a page that reads one, such as the workbench's."""
    address = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    return _run([f"--window-size={width},{height}", f"--screenshot={out.resolve()}", address], out)


def pdf(page: Path, out: Path) -> Path:
    """``page`` printed to PDF (no header or footer)."""
    return _run(["--no-pdf-header-footer", f"--print-to-pdf={out.resolve()}", page.resolve().as_uri()], out)
