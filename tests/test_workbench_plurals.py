"""The workbench's sentences with a count take the form the catalog's plural rule gives, in the page itself.

The page gets every form of each counted sentence and the catalog's
``Plural-Forms`` expression (:mod:`autograder.deliver.workbench.plurals`); its script
evaluates the expression. Here: the forms and the rule in the page's data;
the script's evaluation against gettext's own for every shipped language and a
few more rules of CLDR's (Babel's); and in headless chromium, the reference's
page with counts planted in its data, read as a student sees it: Russian's
three forms for 1, 2, 5, 21, 22, 25, 11 and 12, Indonesian's one, English's two.
"""

from __future__ import annotations

import copy
import gettext
import re
from pathlib import Path

import pytest

from autograder import i18n
from autograder.deliver.workbench import build, page, plurals, strings
from tests import kit
from tests.test_workbench_browser import _missing, driver, find, open_page, predict  # noqa: F401 (a fixture)

needs_browser = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()}; the workbench's browser tests skip")

COUNTS = (1, 2, 5, 21, 22, 25, 11, 12)
RUSSIAN_FORM = {1: 0, 2: 1, 5: 2, 21: 0, 22: 1, 25: 2, 11: 2, 12: 2}  # 1 and 21 блок, 2 to 4 блока, 5 to 20 блоков
# The words the student reads after each count, by form: written out here, not taken from the catalog.
WORDS = {
    "ru": {
        "block": ("блок", "блока", "блоков"),
        "head": ("голова", "головы", "голов"),
        "key": ("ключ", "ключа", "ключей"),
        "score": ("оценка", "оценки", "оценок"),
        "steps": ("шага декодирования", "шагов декодирования", "шагов декодирования"),  # after "после ваших"
        "queries": ("запросу", "запросам", "запросам"),  # after "по"
    },
    "id": {
        "block": ("blok",),
        "head": ("head",),
        "key": ("key",),
        "score": ("skor",),
        "steps": ("langkah decode",),
        "queries": ("query",),
    },
    "en": {
        "block": ("block", "blocks"),
        "head": ("head", "heads"),
        "key": ("key", "keys"),
        "score": ("score", "scores"),
        "steps": ("decode step", "decode steps"),
        "queries": ("query", "queries"),
    },
}


COUNT_NOUN = re.compile(r"\{\w+\} (?!(?:is|comes|gives|has|holds|lets|runs)\b)(?:[a-z]+s|million)\b")


def expected_form(lang: str, count: int) -> int:
    return {"ru": RUSSIAN_FORM[count], "id": 0, "en": 0 if count == 1 else 1}[lang]


# ---- without a browser: the data the page is given ---------------------------------------------------------
def test_every_counted_sentence_has_each_form_of_the_language_from_the_catalog() -> None:
    for lang, count in (("en", 2), ("tr", 2), ("id", 1), ("ru", 3)):
        with i18n.using(lang):
            forms = strings.counted()
            rule = plurals.page_rule()
        assert rule["nplurals"] == count and set(strings.COUNTED) == set(forms)
        assert all(len(these) == count for these in forms.values()), lang
    with i18n.using("ru"):
        assert plurals.samples(*plurals.rule()) == [1, 2, 0]
        assert strings.counted()["n_blocks"] == ["{count} блок", "{count} блока", "{count} блоков"]
    with i18n.using("en"):
        assert plurals.rule() == (2, "(n != 1)")


def test_a_rule_gettext_cannot_read_or_that_never_gives_a_form_is_refused() -> None:
    with pytest.raises(ValueError):
        plurals.samples(2, "n ++ 1")
    with pytest.raises(ValueError, match="plural forms \\[2\\]"):
        plurals.samples(3, "(n != 1)")  # two forms only, where three are announced


def test_no_sentence_without_a_count_has_a_noun_that_follows_one() -> None:
    """A field followed by an English plural (``{n} tokens``, ``{millions} million``) belongs in COUNTED; a label
    (``with a problem: {problem}``), a position (``Stage {k} of {n}``) or a value (``{self} on itself``) does not."""
    found = [(key, hit) for key, sentence in strings.TEXT.items() for hit in COUNT_NOUN.findall(sentence)]
    assert found == [], f"a count with its noun outside COUNTED: {found}"
    # the sentences as they were before their counts had forms would be found
    assert COUNT_NOUN.findall("reads {n} tokens. (gpt_step ran {steps} times") == ["{n} tokens", "{steps} times"]
    assert COUNT_NOUN.findall("The chapter: {millions} million ({count})") == ["{millions} million"]


# ---- in the browser -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference() -> dict:
    return build.collect(build.Options(kit.SOLUTIONS))


def planted(reference: dict, count: int) -> dict:
    """The reference's data with ``count`` as the toy GPT's blocks and heads, the decode steps and the cache's
    length, the queries of the dropped-√d_k experiment and their keys, and the scores of a 1,024-token context."""
    data = copy.deepcopy(reference)
    data["gpt"]["sizes"] |= {"blocks": count, "heads": count}
    by_id = {x["id"]: x for x in data["experiments"]}
    by_id["cache_length"]["answer"] = count
    by_id["cache_length"]["detail"]["steps"] = count
    by_id["drop_scale"]["detail"] |= {"trials": count, "keys": count}
    by_id["scores_1024"]["answer"] = count
    return data


def shown(driver, data: dict, lang: str, out: Path) -> dict[str, str]:  # noqa: F811 (the fixture)
    """What the page of ``data`` in ``lang`` says: the tracker's sizes and three experiments' results."""
    with i18n.using(lang):
        out.write_text(page.render(data), encoding="utf-8")
    open_page(driver, out, "tab=tracker")
    said = {"tracker": find(driver, "#panel .explain").text}
    for experiment, guess in (("cache_length", "3"), ("drop_scale", "0"), ("scores_1024", "3")):
        said[experiment] = predict(driver, experiment, guess)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"the page's script failed: {errors}"
    return said


def wrong_forms(said: dict[str, str], lang: str, count: int, form: int) -> list[str]:
    """The phrases of ``count`` in ``form`` that the page does not say."""
    words = {name: forms[min(form, len(forms) - 1)] for name, forms in WORDS[lang].items()}
    wanted = {
        "tracker": [f"{count} {words['block']},", f"{count} {words['head']},"],
        "cache_length": [f"{count} {words['steps']}", f"{count} {words['key']}"],
        "drop_scale": [f"{count} {words['queries']}", f"{count} {words['key']}"],
        "scores_1024": [f"{count} {words['score']}"],
    }
    return [f"{where}: {phrase!r} in {said[where]!r}" for where, phrases in wanted.items() for phrase in phrases if
            phrase not in said[where]]  # fmt: skip


@needs_browser
def test_the_pages_rule_is_gettexts_for_every_shipped_language_and_more(driver, reference, tmp_path) -> None:  # noqa: F811
    from babel.messages.plurals import get_plural

    out = tmp_path / "en.html"
    with i18n.using("en"):
        out.write_text(page.render(reference), encoding="utf-8")
    open_page(driver, out)
    rules = {}
    for lang in i18n.LANGUAGES:
        with i18n.using(lang):
            rules[lang] = plurals.rule()[1]
    for lang in ("pl", "ar", "sl", "ga", "lt", "cs", "cy", "ja"):  # rules with up to six forms
        rules[lang] = get_plural(lang).plural_expr
    counts = [*range(0, 240), 1000, 1001, 1002, 1011, 1021, 1111, 100000, 524800, 1048576, 10**9 + 1]
    for lang, expression in rules.items():
        gettexts = [gettext.c2py(expression)(n) for n in counts]
        page_gives = driver.execute_script(
            "const rule = window.attnlabWorkbench.pluralRule(arguments[0]); return arguments[1].map(rule);",
            expression,
            counts,
        )
        assert page_gives == gettexts, (lang, expression)
    fraction = driver.execute_script("return window.attnlabWorkbench.pluralIndex(2.5);")  # English: as 2
    assert fraction == 1


@needs_browser
@pytest.mark.parametrize("lang", ["ru", "id", "en"])
def test_each_count_takes_its_form_in_the_page(driver, reference: dict, lang: str, tmp_path: Path) -> None:  # noqa: F811
    wrong = []
    for count in COUNTS:
        said = shown(driver, planted(reference, count), lang, tmp_path / f"{lang}-{count}.html")
        wrong += wrong_forms(said, lang, count, expected_form(lang, count))
    assert wrong == [], "\n".join(wrong)


@needs_browser
def test_a_page_given_the_english_rule_in_russian_is_caught(
    driver,  # noqa: F811 (the fixture)
    reference: dict,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check above can fail: with English's rule, 21 блок becomes 21 блока and 25 блоков 25 блока."""
    monkeypatch.setattr(plurals, "page_rule", lambda: {"nplurals": 3, "expression": "(n != 1)"})
    for count in (21, 25):
        said = shown(driver, planted(reference, count), "ru", tmp_path / f"wrong-{count}.html")
        wrong = wrong_forms(said, "ru", count, RUSSIAN_FORM[count])
        blocks = "блок" if count == 21 else "блоков"
        assert any(w.startswith(f"tracker: '{count} {blocks},'") for w in wrong), wrong
