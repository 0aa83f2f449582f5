"""The language a student reads: gettext catalogs, and which one is in use.

Every student-facing string is written in English in the source and looked up
here at the moment it is shown. The catalogs are ``autograder/locale/<lang>/
LC_MESSAGES/attnlab.mo`` (compiled from the ``.po`` beside them with Babel:
``attnlab i18n``); the standard library's :mod:`gettext` reads them, so the
installed engine needs nothing more. A language without a catalog (English,
the source language) reads the source strings.

The kit ships English and every language whose compiled catalog is in
``locale/`` (:data:`LANGUAGES`); ``attnlab i18n --init LANG`` starts a new one.

The language is chosen, first match wins, by an explicit choice (``--lang``,
the nbgrader course setting), ``$ATTNLAB_LANG``, the locale
(``$LANGUAGE``, ``$LC_ALL``, ``$LC_MESSAGES``, ``$LANG``), then English.

This module is a leaf (standard library only): every other module may import it.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

DOMAIN = "attnlab"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
SOURCE = "en"  # the language the source strings are written in


def _shipped() -> tuple[str, ...]:
    """English, then every language with a compiled catalog in ``locale/``, in alphabetical order.

    A language is shipped by its catalog alone: ``attnlab i18n --init xx`` and
    ``attnlab i18n`` add one, and every ``--lang`` choice follows.
    """
    found = sorted(p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return (SOURCE, *(lang for lang in found if lang != SOURCE))


LANGUAGES = _shipped()  # every language the kit ships (en, tr, and id and ru once their catalogs are in)
ENV_LANG = "ATTNLAB_LANG"
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # gettext's own order


def normalize(name: str | None) -> str | None:
    """The kit's language code for a locale name (``tr_TR.UTF-8`` -> ``tr``), or None when it ships none."""
    if not name:
        return None
    code = name.strip().split(":")[0].split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def choose(explicit: str | None = None, environ: dict[str, str] | None = None) -> str:
    """The language to use: ``explicit``, else ``$ATTNLAB_LANG``, else the locale, else English."""
    env = os.environ if environ is None else environ
    for candidate in (explicit, env.get(ENV_LANG)):
        if candidate:
            code = normalize(candidate)
            if code is None:
                raise ValueError(f"no catalog for language {candidate!r}; the kit ships {', '.join(LANGUAGES)}")
            return code
    for variable in LOCALE_VARIABLES:
        value = env.get(variable)
        if value and value not in ("C", "POSIX", "C.UTF-8"):
            # $LANGUAGE may list several (tr:en); the first one the kit ships wins
            for part in value.split(":") if variable == "LANGUAGE" else (value,):
                code = normalize(part)
                if code:
                    return code
            if variable != "LANGUAGE":
                break  # the locale names a language the kit does not ship: English
    return SOURCE


def choose_or_source(explicit: str | None = None) -> str:
    """:func:`choose`, but English instead of an error when the language asked for has no catalog.

    For code whose output is graded (a notebook's grade cell must never fail over a setting).
    """
    try:
        return choose(explicit)
    except ValueError:
        return SOURCE


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of ``lang`` (the source strings for English or a missing catalog)."""
    if lang == SOURCE:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[lang], fallback=True)


_current: list[str] = [SOURCE]  # the active language (one per process; grading is single-threaded)


def activate(lang: str) -> str:
    """Make ``lang`` the language of every later message; the previous one."""
    previous = _current[0]
    _current[0] = normalize(lang) or SOURCE
    return previous


def language() -> str:
    """The active language's code."""
    return _current[0]


@contextmanager
def using(lang: str) -> Iterator[None]:
    """``lang`` for the duration of a ``with`` block."""
    previous = activate(lang)
    try:
        yield
    finally:
        activate(previous)


def _(message: str) -> str:
    """``message`` in the active language (the English source when no translation exists)."""
    return translations(_current[0]).gettext(message) if message else message


def plural_count(count: float) -> int:
    """The whole number a catalog's plural rule is asked about for ``count``.

    gettext's rules (``Plural-Forms``) take whole numbers. A whole ``count``
    is itself; a fraction (2.5 points) is asked as 2: English and Turkish then
    read the plural, Russian the form of 2 to 4 (2,5 балла), which is the form
    Russian gives a fraction, and Indonesian has one form anyway.
    """
    value = float(count)
    return int(abs(value)) if value == int(value) else 2


def ngettext(singular: str, plural: str, count: float) -> str:
    """The form of ``singular``/``plural`` for ``count`` in the active language (Russian has three)."""
    return translations(_current[0]).ngettext(singular, plural, plural_count(count))


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs without translating it now (it is translated where it is shown)."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a sentence with a count for the catalogs, its English singular and plural, to be chosen where shown.

    Pass the pair to :func:`counted` with the count at the moment it is shown.
    """
    return singular, plural


def counted(forms: tuple[str, str], count: float) -> str:
    """The form of a :func:`Nn_` pair for ``count`` in the active language (not yet formatted)."""
    return ngettext(forms[0], forms[1], count)
