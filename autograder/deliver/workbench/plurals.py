"""The page's plural rule: the active catalog's own ``Plural-Forms`` expression, and every form of a counted sentence.

The page's counts are not bounded: they come from the student's code (the
shape their ``scores`` returns for 1,024 tokens, the lengths their cache
holds) and the script derives some of them, so a table of forms
precomputed here for a list of counts would miss one sooner or later. The page
is given instead what gettext itself uses: the catalog's ``Plural-Forms``
expression (``n % 10 == 1 && n % 100 != 11 ? 0 : ...`` for Russian), which the
script evaluates for any count (``static/workbench.js``, ``pluralIndex``), and
all ``nplurals`` forms of each counted sentence, taken from the catalog through
:func:`autograder.i18n.ngettext`. ``tests/test_workbench_plurals.py`` holds the
script's evaluation to gettext's for every shipped language.
"""

from __future__ import annotations

import gettext
import re

from autograder import i18n

SOURCE_RULE = "nplurals=2; plural=(n != 1);"  # gettext's rule for a language without a catalog (English)
HEADER = re.compile(r"^\s*nplurals\s*=\s*(?P<count>\d+)\s*;\s*plural\s*=\s*(?P<expression>.+?)\s*;?\s*$", re.DOTALL)
SEARCH = 1000  # counts tried to find one that takes each form (every CLDR rule has one below 1000)


def rule(lang: str | None = None) -> tuple[int, str]:
    """``(nplurals, expression)`` of ``lang``'s compiled catalog (the active language by default).

    The expression is checked with :func:`gettext.c2py`, the parser gettext chooses its forms with, so the page is
    never given a rule gettext would refuse.
    """
    header = i18n.translations(lang or i18n.language()).info().get("plural-forms") or SOURCE_RULE
    found = HEADER.match(header)
    if found is None:
        raise ValueError(f"a Plural-Forms header gettext cannot read: {header!r}")
    count, expression = int(found.group("count")), found.group("expression")
    gettext.c2py(expression)  # raises ValueError on an expression gettext would not evaluate
    return count, expression


def samples(count: int, expression: str) -> list[int]:
    """For each form ``0 .. count - 1``, the smallest count that takes it under ``expression``."""
    choose = gettext.c2py(expression)
    first: dict[int, int] = {}
    for n in range(SEARCH):
        first.setdefault(choose(n), n)
    missing = [k for k in range(count) if k not in first]
    if missing:
        raise ValueError(f"no count below {SEARCH} takes the plural forms {missing} of {expression!r}")
    return [first[k] for k in range(count)]


def forms(pair: tuple[str, str]) -> list[str]:
    """Every form of the ``(singular, plural)`` sentence in the active language, in the catalog's order."""
    return [i18n.ngettext(pair[0], pair[1], n) for n in samples(*rule())]


def page_rule() -> dict[str, object]:
    """The rule as the page's data holds it: ``{"nplurals": 3, "expression": "n % 10 == 1 && ..."}``."""
    count, expression = rule()
    return {"nplurals": count, "expression": expression}
