"""``attnlab i18n``: update the message catalogs from the sources and compile them (Babel); ``--init`` starts one."""

from __future__ import annotations

import argparse

from autograder.base.kit import Kit
from autograder.cli.common import EXIT_OK, INSTRUCTOR, usage_error

NAME, AUDIENCE = "i18n", INSTRUCTOR
HELP = "extract the kit's messages, merge them into each language's .po and compile the .mo (Babel)"
EXIT_STALE = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="only report a stale template or .mo, and untranslated, fuzzy or mismatched entries or plural forms, in "
        "every language's catalog (exit 1)",
    )
    parser.add_argument(
        "--init",
        metavar="LANG",
        help="start the catalog of a new language (a code such as de or pt_BR) with its plural rule, then update and "
        "compile every catalog: translate its .po, run attnlab i18n again, and the kit ships it",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``attnlab i18n`` with parsed ``args``; the exit status."""
    from autograder.i18n import catalogs

    root = Kit.source_tree().root
    if args.check:
        problems = [f"stale: {name}" for name in catalogs.stale(root)]
        problems += [str(p) for lang in catalogs.translated_languages() for p in catalogs.problems(root, lang)]
        for line in problems:
            print(line)
        if not problems:
            print(f"up to date: every catalog ({', '.join(catalogs.translated_languages())}) is compiled and complete")
        return EXIT_STALE if problems else EXIT_OK
    if args.init:
        try:
            path = catalogs.init(args.init)
        except catalogs.UnknownLanguage as error:
            return usage_error(NAME, str(error))
        print(f"catalog of {args.init}: {path.relative_to(root)} ({catalogs.plural_forms(args.init)})")
    for path in catalogs.refresh(root):
        print(f"wrote {path.relative_to(root)}")
    left = [p for lang in catalogs.translated_languages() for p in catalogs.problems(root, lang)]
    for problem in left:
        print(f"to translate: {problem}")
    return EXIT_OK
