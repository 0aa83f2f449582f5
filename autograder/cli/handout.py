"""``attnlab handout``: regenerate the lab handout's blocks and figures and build its HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, INSTRUCTOR
from autograder.kit import Kit

NAME, AUDIENCE = "handout", INSTRUCTOR
HELP = "regenerate the lab handout's blocks and figures and build its HTML page"
EXIT_STALE = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check", action="store_true", help="only report stale generated blocks or figures (exit 1); write nothing"
    )
    parser.add_argument("--root", metavar="DIR", help="the kit's root folder (default: this source tree)")
    parser.add_argument(
        "--html", metavar="PATH", help="where to write the page (default: handouts/build/lab07_attention.html)"
    )
    parser.add_argument(
        "--screenshot", metavar="PATH", help="also save a headless-chromium screenshot of the page's top"
    )
    parser.add_argument("--pdf", metavar="PATH", help="also print the page to PDF with headless chromium")
    parser.add_argument(
        "--sample-timing",
        action="store_true",
        help="re-measure handouts/data/timing_sample.json first (slow; use a quiet machine)",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``attnlab handout`` with parsed ``args``; the exit status."""
    from autograder.handout import browser, figures, generate, html

    kit = Kit(Path(args.root).resolve()) if args.root else Kit.source_tree()
    if args.check:
        stale = (["handouts/lab07_attention.md (generated blocks)"] if generate.stale(kit) else []) + [
            f"handouts/figures/{name}" for name in figures.stale(kit)
        ]
        for item in stale:
            print(f"stale: {item} (run: attnlab handout)")
        return EXIT_STALE if stale else EXIT_OK
    if args.sample_timing:
        from autograder.handout import sample

        print(f"wrote {sample.measure(kit)}")
    if generate.write(kit):
        print(f"wrote {kit.handout}")
    for path in figures.write(kit):
        print(f"wrote {path}")
    page = html.build(kit, Path(args.html) if args.html else None)
    print(f"wrote {page}")
    try:
        if args.screenshot:
            print(f"wrote {browser.screenshot(page, Path(args.screenshot))}")
        if args.pdf:
            print(f"wrote {browser.pdf(page, Path(args.pdf))}")
    except browser.BrowserError as error:
        print(f"attnlab handout: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK
