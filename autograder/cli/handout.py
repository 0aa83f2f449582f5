"""``attnlab handout``: regenerate the lab handout's blocks and figures and build its HTML page."""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder.base.kit import Kit
from autograder.cli import options
from autograder.cli.common import EXIT_OK, INSTRUCTOR, internal_error

NAME, AUDIENCE = "handout", INSTRUCTOR
HELP = "regenerate the lab handout's blocks and figures and build its HTML page"
EXIT_STALE = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check", action="store_true", help="only report stale generated blocks or figures (exit 1); write nothing"
    )
    parser.add_argument(
        "--root", metavar="DIR", type=options.kit, help="the kit's root folder (default: this source tree)"
    )
    parser.add_argument(
        "--html",
        metavar="PATH",
        type=options.output_file("--html", "lab07_attention.html"),
        help="where to write the English page (default: handouts/build/lab07_attention.html; other languages' "
        "pages go beside it as lab07_attention.<lang>.html)",
    )
    parser.add_argument(
        "--screenshot", metavar="PATH", type=options.output_file("--screenshot", "handout.png"),
        help="also save a headless-chromium screenshot of the page's top",
    )  # fmt: skip
    parser.add_argument(
        "--pdf", metavar="PATH", type=options.output_file("--pdf", "handout.pdf"),
        help="also print the page to PDF with headless chromium",
    )  # fmt: skip
    parser.add_argument(
        "--sample-timing",
        action="store_true",
        help="re-measure handouts/data/timing_sample.json first (slow; use a quiet machine)",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``attnlab handout`` with parsed ``args``; the exit status."""
    from autograder.deliver.handout import browser, figures, generate, html, workbench_figure
    from autograder.i18n import catalogs

    kit = Kit(Path(args.root).resolve()) if args.root else Kit.source_tree()
    if args.check:
        stale = [f"{path.relative_to(kit.root)} (generated blocks)" for path in generate.stale(kit)]
        stale += [f"handouts/figures/{name}" for name in figures.stale(kit) + workbench_figure.stale(kit)]
        stale += [f"{name} (catalogs)" for name in catalogs.stale(kit.root)]
        stale += [
            f"{path.relative_to(kit.root)} (no catalog of its language)" for path in generate.without_catalog(kit)
        ]
        for item in stale:
            print(f"stale: {item} (run: attnlab i18n, then attnlab handout)")
        if not stale:
            print("up to date: the handouts' generated blocks, the figures and the catalogs")
        return EXIT_STALE if stale else EXIT_OK
    for path in catalogs.compile_all():  # the Turkish blocks read the compiled catalog
        print(f"wrote {path}")
    if args.sample_timing:
        from autograder.deliver.handout import sample

        print(f"wrote {sample.measure(kit)}")
    for path in generate.without_catalog(kit):
        print(f"skipped {path.relative_to(kit.root)}: no catalog of its language (attnlab i18n --init LANG)")
    for path in generate.write(kit):
        print(f"wrote {path}")
    for path in figures.write(kit):
        print(f"wrote {path}")
    for path in workbench_figure.write(kit):  # a screenshot: taken where chromium is, else the committed one stays
        print(f"wrote {path}")
    english = Path(args.html) if args.html else None
    pages = [html.build(kit, english)]
    for lang in generate.languages(kit)[1:]:
        pages.append(html.build(kit, english.with_name(f"{kit.html_for(lang).name}") if english else None, lang))
    for page in pages:
        print(f"wrote {page}")
    page = pages[0]
    try:
        if args.screenshot:
            print(f"wrote {browser.screenshot(page, Path(args.screenshot))}")
        if args.pdf:
            print(f"wrote {browser.pdf(page, Path(args.pdf))}")
    except browser.BrowserError as error:
        return internal_error(NAME, str(error))
    return EXIT_OK
