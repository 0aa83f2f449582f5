"""Languages: the choice of language, and catalogs that are complete, consistent and current.

Every string the kit marks for students (``_()``, ``N_()``, step titles,
mistake texts, grader check titles) must have a Turkish translation with the
same placeholders, different from the English unless it is a technical word
the chapter keeps; the committed template and ``.mo`` must be what Babel makes
from the sources and the ``.po``.
"""

from __future__ import annotations

import fnmatch

import pytest

from autograder import i18n
from autograder.base import tasks
from autograder.i18n import N_, _, catalogs
from autograder.i18n.extract import grader_titles
from tests import kit
from tests.untranslated import english_outside_the_catalog, unmarked_sentences

try:
    import tomllib  # novermin
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@pytest.mark.parametrize(
    ("explicit", "environ", "expected"),
    [
        ("tr", {"ATTNLAB_LANG": "en", "LANG": "en_US.UTF-8"}, "tr"),
        (None, {"ATTNLAB_LANG": "tr", "LANG": "en_US.UTF-8"}, "tr"),
        (None, {"LANG": "tr_TR.UTF-8"}, "tr"),
        (None, {"LC_ALL": "tr_TR.utf8", "LANG": "en_US.UTF-8"}, "tr"),
        (None, {"LANGUAGE": "de:tr:en", "LANG": "de_DE.UTF-8"}, "tr"),
        (None, {"LANG": "de_DE.UTF-8"}, "en"),
        (None, {"LANG": "C.UTF-8"}, "en"),
        (None, {}, "en"),
        ("tr-TR", {}, "tr"),
    ],
)
def test_language_is_the_explicit_choice_then_the_variable_then_the_locale(
    explicit: str | None, environ: dict[str, str], expected: str
) -> None:
    assert i18n.choose(explicit, environ) == expected


def test_an_unknown_language_asked_for_by_name_is_an_error() -> None:
    shipped = "ships " + ", ".join(i18n.LANGUAGES)  # en, tr and each catalog that joined (id, ru)
    with pytest.raises(ValueError, match=shipped):
        i18n.choose("xx", {})
    with pytest.raises(ValueError, match=shipped):
        i18n.choose(None, {"ATTNLAB_LANG": "klingon"})


def test_graded_code_falls_back_to_english_instead_of_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLAB_LANG", "klingon")
    assert i18n.choose_or_source() == "en"
    assert i18n.choose_or_source("tr") == "tr"


def test_the_active_language_translates_and_english_reads_the_source() -> None:
    with i18n.using("tr"):
        assert _("Causal mask") == "Nedensel maske"
        assert _("a string no catalog holds") == "a string no catalog holds"
    with i18n.using("en"):
        assert _("Causal mask") == "Causal mask"
    assert N_("Causal mask") == "Causal mask"


def test_languages_match_the_catalogs_on_disk() -> None:
    on_disk = {p.parent.parent.name for p in i18n.LOCALE_DIR.glob("*/LC_MESSAGES/attnlab.po")}
    assert on_disk == set(catalogs.translated_languages()) == set(i18n.LANGUAGES) - {i18n.SOURCE}
    assert i18n.LANGUAGES[0] == i18n.SOURCE and "tr" in i18n.LANGUAGES


@pytest.mark.parametrize("lang", catalogs.translated_languages())
def test_every_marked_string_is_translated_with_the_same_placeholders(lang: str) -> None:
    problems = catalogs.problems(kit.ROOT, lang)
    assert not problems, "run `attnlab i18n`, then translate:\n" + "\n".join(map(str, problems[:40]))


def test_the_committed_template_and_compiled_catalogs_are_current() -> None:
    assert catalogs.stale(kit.ROOT) == [], "run `attnlab i18n` (or `attnlab handout`) and commit the result"


def test_the_wheel_ships_the_compiled_catalogs() -> None:
    config = tomllib.loads((kit.ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["autograder"]
    for lang in catalogs.translated_languages():
        relative = catalogs.mo_path(lang).relative_to(kit.ROOT / "autograder").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), (relative, patterns)


def test_a_placeholder_mismatch_and_an_untranslated_copy_are_caught() -> None:
    assert catalogs.placeholders("{step}: {call}, {x:.2f} and {{literal}}") == ["call", "step", "x"]
    assert catalogs.placeholders("{call}: {step}") != catalogs.placeholders("{step}: {call} {extra}")
    assert catalogs.may_stay_english("softmax") and catalogs.may_stay_english("causal_mask(4)")
    assert catalogs.may_stay_english("{title}: {what}") and catalogs.may_stay_english("Q = X W^Q")
    assert not catalogs.may_stay_english("Causal mask")
    assert not catalogs.may_stay_english("the scores are not divided by sqrt(d_k)")


def test_problems_names_a_missing_translation_a_mismatch_and_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from babel.messages.catalog import Catalog

    template = Catalog()
    for message in ("Grading {submission}", "Total", "Causal mask", "softmax"):
        template.add(message)
    translated = Catalog(locale="tr")
    translated.add("Grading {submission}", "{submisyon} değerlendiriliyor")
    translated.add("Causal mask", "Causal mask")
    translated.add("softmax", "softmax")
    monkeypatch.setattr(catalogs, "extract", lambda root: template)
    monkeypatch.setattr(catalogs, "read", lambda lang: translated)
    found = {(p.message, p.what.split(":")[0]) for p in catalogs.problems(kit.ROOT, "tr")}
    assert found == {
        ("Grading {submission}", "placeholders differ"),
        ("Total", "no translation"),
        ("Causal mask", "translation identical to the English"),
    }


def test_grader_titles_are_extracted_as_the_report_shows_them() -> None:
    source = (kit.KIT.public_graders / "test_softmax.py").read_text(encoding="utf-8")
    titles = {name: title for _line, title, name in grader_titles(source)}
    assert titles["test_worked_example"] == (
        "Softmax of the worked example's scaled scores gives the chapter's attention matrix"
    )


def test_step_titles_and_check_titles_are_turkish_in_turkish() -> None:
    from autograder.deliver.handout import checks

    with i18n.using("tr"):
        found = checks.checks_by_step(kit.KIT.public_graders, "tr")
        assert found["softmax"][0].title.startswith("Çözümlü örneğin ölçeklenmiş skorlarının softmax")
        assert {_(s.title) for s in tasks.STEPS} >= {"Nedensel maske", "KV önbelleği"}


# Where the graders' words are written: the grader files, the checks they share, and the modules that word what
# a check found (instructor-facing errors, e.g. a malformed question file, stay English).
GRADER_WORDS = (
    "autograder/grading/graders",
    "hidden",
    "autograder/judge/checks",
    "autograder/judge/checking.py",
    "autograder/judge/messages.py",
    "autograder/judge/diagnose/moe_router.py",
    "autograder/sandbox/probes/predictions.py",
    "autograder/judge/timing/analysis.py",
    "autograder/judge/timing/explain.py",
    "autograder/judge/timing/report.py",
)


def test_every_english_sentence_of_the_graders_is_marked_for_the_catalogs() -> None:
    files = [p for name in GRADER_WORDS for p in sorted((kit.ROOT / name).rglob("*.py")) or [kit.ROOT / name]]
    assert len(files) > 30
    found = [f"{p.relative_to(kit.ROOT)}:{line}: {text!r}" for p in files for line, text in unmarked_sentences(p)]
    assert not found, "mark these with _() or N_() (named fields and .format, never an f-string):\n" + "\n".join(found)


def test_the_scan_finds_an_unmarked_sentence_and_passes_code(tmp_path) -> None:
    source = tmp_path / "grader.py"
    source.write_text(
        '''"""A docstring is not shown."""
KEYWORDS = ("at least one",)
def test_x(lab, x):
    """Neither is a check's title: it is extracted from here."""
    lab.call("softmax", x, text=f"softmax(x) with x of shape {x.shape}")
    lab.call("softmax", x, text=_("softmax(x) with x of shape {shape}").format(shape=x.shape))
    lab.call("rope", x, text=f"rope(x, positions) {x.shape}", axis=0)
    expect_that(got, ok, "a bool array", f"dtype {x.dtype}")
''',
        encoding="utf-8",
    )
    assert [text for _line, text in unmarked_sentences(source)] == ["softmax(x) with x of shape ", "a bool array"]
    assert english_outside_the_catalog("\u27e6beklenen \u27e7x of shape\u27e6 ile\u27e7") == ["x of shape"]
    assert english_outside_the_catalog("raised NotImplementedError: softmax is not implemented yet") == []
