"""The lab handout: generated blocks, figures and the rendered page (``attnlab handout``).

``handouts/lab07_attention.md`` is written by hand except for its marked
blocks, which are generated from the registry, the stubs, the graders, the
diagnosis and the catalog copy (:mod:`.generate`). The figures under
``handouts/figures/`` are drawn from the reference solution (:mod:`.figures`).
The HTML page (:mod:`.html`) is built into ``handouts/build/`` (not committed).

Commands (run from the instructor kit; the lead wires :func:`register` into
``attnlab``; ``python -m autograder.handout`` works on its own):

- ``attnlab handout``: regenerate blocks and figures, build the HTML page.
- ``attnlab handout --check``: only report what is stale (exit 1), write nothing.
- ``attnlab handout --screenshot PATH`` / ``--pdf PATH``: also open the page in
  headless chromium and save a screenshot / a PDF.
- ``attnlab handout --sample-timing``: re-measure the sample timings first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_STALE, EXIT_FAILED = 0, 1, 3


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
    from autograder.handout.kit import Kit, default_root

    kit = Kit(Path(args.root).resolve() if args.root else default_root())
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
        return EXIT_FAILED
    return EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``handout`` command to ``attnlab``'s subparsers."""
    parser = subparsers.add_parser(
        "handout", help="regenerate the lab handout's blocks and figures and build its HTML page"
    )
    add_arguments(parser)
    parser.set_defaults(run=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.handout", description="Build the lab handout (see attnlab handout)."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
