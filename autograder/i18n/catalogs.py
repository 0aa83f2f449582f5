"""The kit's message catalogs, kept with Babel: extract the template, update each ``.po``, compile the ``.mo``.

Instructor tooling (Babel is a development dependency; the installed engine
reads the compiled ``.mo`` with :mod:`gettext` alone). ``attnlab i18n`` runs
:func:`refresh`; the kit's tests and ``attnlab handout`` call :func:`compile_all`
and :func:`problems`. The same steps by hand::

    pybabel extract -F autograder/locale/babel.cfg -o autograder/locale/attnlab.pot --no-location .
    pybabel update -i autograder/locale/attnlab.pot -d autograder/locale -D attnlab
    pybabel compile -d autograder/locale -D attnlab
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po, write_po

from autograder.i18n import DOMAIN, LOCALE_DIR, SOURCE

CONFIG = LOCALE_DIR / "babel.cfg"
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)?(?:[!:][^{}]*)?\}(?!\})")
# Words a translation may leave as they are: the chapter keeps these in English, and a code name stays code.
SAME_IN_EVERY_LANGUAGE = frozenset(
    {"softmax", "Softmax", "KV cache", "RoPE", "ALiBi", "GELU", "LayerNorm", "RMSNorm", "SDPA", "logits"}
)
IDENTIFIER = re.compile(r"^[\w.\[\]()=, *+/\-^|`'{}:]*$")  # code-like messages: names, calls, formulas
TOKEN = re.compile(r"[\w^]+")  # a word, a name or a number; names with _, digits or ^ (d_model, W^Q) are code
MATH_NAMES = frozenset({"sqrt", "exp", "log", "softmax", "relu", "gelu", "rowsum", "sum", "max", "min", "mean", "var"})
# words the chapter writes in English too (key: the Turkish and Indonesian texts keep query, key and value)
KEPT_WORDS = frozenset({"head", "heads", "token", "tokens", "key", "keys", "gamma", "beta", "eps"})


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str) -> Path:
    return po_path(lang).with_suffix(".mo")


def translated_languages() -> tuple[str, ...]:
    """The languages with a ``.po`` in ``locale/``, in alphabetical order: the source tree's translations.

    Every one is shipped once :func:`refresh` has compiled it (:data:`autograder.i18n.LANGUAGES` lists the
    compiled ones).
    """
    return tuple(sorted(p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po")))


def plural_forms(lang: str) -> str:
    """The ``Plural-Forms`` header CLDR gives ``lang`` (Babel's table): ``nplurals=3; plural=(...);`` for ru."""
    return get_plural(lang).plural_forms


def plural_count(lang: str) -> int:
    """How many forms a sentence with a count has in ``lang`` (1 for id, 2 for en and tr, 3 for ru)."""
    return get_plural(lang).num_plurals


class UnknownLanguage(ValueError):
    """A language code Babel's CLDR data does not know (so no plural rule)."""


def init(lang: str) -> Path:
    """``attnlab i18n --init LANG``: start ``lang``'s catalog with every message untranslated; its ``.po``.

    The header names the language and its CLDR plural rule. A catalog that
    exists is left as it is (:func:`update` brings it up to date).
    """
    try:
        Locale.parse(lang)
    except (UnknownLocaleError, ValueError) as error:
        raise UnknownLanguage(f"{lang!r} is no language code Babel knows (e.g. id, ru, de, pt_BR)") from error
    if lang == SOURCE:
        raise UnknownLanguage(f"{lang!r} is the source language: its strings are the ones written in the code")
    path = po_path(lang)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = Catalog(locale=lang, domain=DOMAIN, project="attnlab", fuzzy=False)
        path.write_text(_po_text(catalog), encoding="utf-8")
    return path


def extract(root: Path) -> Catalog:
    """Every student-facing string of the kit under ``root``, as Babel's template catalog."""
    with CONFIG.open(encoding="utf-8") as file:
        method_map, options_map = parse_mapping_cfg(file, str(CONFIG))
    catalog = Catalog(project="attnlab", domain=DOMAIN, fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        root, method_map, options_map, keywords={}, comment_tags=("TRANSLATORS:",), strip_comment_tags=True
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def _po_text(catalog: Catalog, **options: bool) -> str:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=120, omit_header=False, sort_output=True, include_lineno=False, **options)
    return buffer.getvalue().decode("utf-8")


def _without_dates(text: str) -> str:
    return re.sub(r'^"(POT-Creation-Date|PO-Revision-Date): .*\\n"\n', "", text, flags=re.MULTILINE)


def template_text(root: Path) -> str:
    return _po_text(extract(root))


def read(lang: str) -> Catalog:
    with po_path(lang).open("rb") as file:
        return read_po(file, locale=lang, domain=DOMAIN)


def compiled(lang: str) -> bytes:
    """The ``.mo`` bytes Babel compiles from the committed ``.po`` (fuzzy entries left out)."""
    buffer = io.BytesIO()
    write_mo(buffer, read(lang), use_fuzzy=False)
    return buffer.getvalue()


def compile_all() -> list[Path]:
    """Compile every ``.po`` whose ``.mo`` is missing or out of date; the ``.mo`` files written."""
    written = []
    for lang in translated_languages():
        data = compiled(lang)
        if not mo_path(lang).is_file() or mo_path(lang).read_bytes() != data:
            mo_path(lang).write_bytes(data)
            written.append(mo_path(lang))
    return written


def update(root: Path) -> list[Path]:
    """Write the template from the sources and merge it into each ``.po`` (new strings untranslated); the files."""
    template = extract(root)
    written = []
    if not TEMPLATE.is_file() or _without_dates(TEMPLATE.read_text(encoding="utf-8")) != _without_dates(
        _po_text(template)
    ):
        TEMPLATE.write_text(_po_text(template), encoding="utf-8")
        written.append(TEMPLATE)
    for lang in translated_languages():
        path = po_path(lang)
        if path.is_file():
            catalog = read(lang)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            catalog = Catalog(locale=lang, domain=DOMAIN, project="attnlab")
        before = _po_text(catalog, ignore_obsolete=True)
        _set_plural_forms(catalog, lang)
        catalog.update(template, no_fuzzy_matching=True)
        after = _po_text(catalog, ignore_obsolete=True)
        if _without_dates(after) != _without_dates(before) or not path.is_file():
            path.write_text(after, encoding="utf-8")
            written.append(path)
    return written


def _set_plural_forms(catalog: Catalog, lang: str) -> None:
    """Give ``catalog`` CLDR's plural rule for ``lang`` when its header names another (a hand-made header)."""
    rule = get_plural(lang)
    if (catalog.num_plurals, catalog.plural_expr) != (rule.num_plurals, rule.plural_expr):
        headers = [(name, value) for name, value in catalog.mime_headers if name.lower() != "plural-forms"]
        catalog.mime_headers = [*headers, ("Plural-Forms", plural_forms(lang))]


def refresh(root: Path) -> list[Path]:
    """``attnlab i18n``: update the template and the ``.po`` files, then compile; every file written."""
    return update(root) + compile_all()


def placeholders(text: str) -> list[str]:
    """The ``str.format`` fields of ``text``, sorted (``{}`` counts as an empty name)."""
    return sorted(match.group(1) or "" for match in PLACEHOLDER.finditer(text))


def may_stay_english(message: str) -> bool:
    """Whether a translation may equal the English: a technical word the chapter keeps, code, or a formula.

    A formula (``Q = X W^Q``, ``QK^T/sqrt(2)``) has no word but math function names.
    """
    if message in SAME_IN_EVERY_LANGUAGE or (IDENTIFIER.match(message) is not None and " " not in message.strip()):
        return True
    words = [t for t in TOKEN.findall(PLACEHOLDER.sub(" ", message)) if len(t) >= 3 and t.isalpha()]
    return all(word.lower() in MATH_NAMES | KEPT_WORDS for word in words)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one catalog entry."""

    lang: str
    message: str
    what: str

    def __str__(self) -> str:
        return f"{self.lang}: {self.what}: {self.message!r}"


def problems(root: Path, lang: str) -> list[Problem]:
    """What the catalog of ``lang`` lacks against the sources under ``root``; empty when every string is translated."""
    catalog = read(lang)
    found: list[Problem] = []
    rule = get_plural(lang)
    if (catalog.num_plurals, catalog.plural_expr) != (rule.num_plurals, rule.plural_expr):
        found.append(Problem(lang, catalog.plural_forms, f"Plural-Forms header is not {rule.plural_forms!r}"))
    for message in extract(root):
        if message.id:
            found += entry_problems(lang, message, catalog.get(message.id, context=message.context), rule.num_plurals)
    return found


def entry_problems(lang: str, message: Message, entry: Message | None, forms: int) -> list[Problem]:
    """What is wrong with the translation ``entry`` of the template's ``message`` in ``lang`` (``forms`` plurals).

    A sentence with a count needs each of its ``forms`` forms written (Russian:
    the forms of 1, of 2 to 4 and of 5), each with the English plural's placeholders.
    """
    msgid = message.id if isinstance(message.id, str) else message.id[0]
    if entry is None or not entry.string or (isinstance(entry.string, tuple) and not any(entry.string)):
        return [Problem(lang, msgid, "no translation")]
    found = []
    if entry.fuzzy:
        found.append(Problem(lang, msgid, "translation marked fuzzy (check it, then remove the flag)"))
    ids = message.id if isinstance(message.id, tuple) else (message.id,)
    strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
    if isinstance(message.id, tuple) != isinstance(entry.string, tuple):
        return [*found, Problem(lang, msgid, "singular entry for a plural message, or the other way round")]
    if isinstance(message.id, tuple) and len(strings) != forms:
        found.append(Problem(lang, msgid, f"{len(strings)} plural forms where the language has {forms}"))
    for index, text in enumerate(strings):
        what = f"form {index}: " if isinstance(message.id, tuple) else ""
        if not text:
            found.append(Problem(lang, msgid, f"{what}no translation"))
            continue
        if placeholders(text) != placeholders(ids[-1]):
            found.append(
                Problem(lang, msgid, f"{what}placeholders differ: {placeholders(ids[-1])} vs {placeholders(text)}")
            )
        if text in ids and not may_stay_english(text):
            found.append(Problem(lang, msgid, f"{what}translation identical to the English"))
    return found


def stale(root: Path) -> list[str]:
    """Catalog files that differ from what :func:`refresh` would write (names relative to ``root``)."""
    out = []
    if not TEMPLATE.is_file() or _without_dates(TEMPLATE.read_text(encoding="utf-8")) != _without_dates(
        template_text(root)
    ):
        out.append(str(TEMPLATE.relative_to(root)))
    for lang in translated_languages():
        if not mo_path(lang).is_file() or mo_path(lang).read_bytes() != compiled(lang):
            out.append(str(mo_path(lang).relative_to(root)))
    return out
