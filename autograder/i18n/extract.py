"""Babel extractors for what Babel's python extractor cannot see: check titles, catalog notes, question texts.

A check's title is the first paragraph of its test function's docstring
(:func:`docstring_title`), which Babel's python
extractor does not read: it finds only calls such as ``_("...")``. This
extractor yields each title as a message, with a comment naming the check,
then hands the file to Babel's python extractor for the marked strings.
Registered in ``autograder/locale/babel.cfg`` by its dotted name.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any

TEST_PREFIX = "test_"


def docstring_title(doc: str | None) -> str:
    """A check's title as written: the first paragraph of its docstring on one line, without a final full stop.

    The one rule for titles: :func:`autograder.grading.checklist.title_of` looks up this text in the catalogs.
    """
    first_paragraph = (doc or "").strip().split("\n\n")[0]
    return " ".join(first_paragraph.split()).rstrip(".")


def grader_titles(source: str) -> Iterator[tuple[int, str, str]]:
    """``(line, title, test name)`` of every test function with a docstring in one grader file."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(TEST_PREFIX):
            title = docstring_title(ast.get_docstring(node))
            if title:
                yield node.lineno, title, node.name


def grader_files(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel extractor: ``(lineno, funcname, message, comments)`` for titles and marked strings."""
    from babel.messages.extract import extract_python

    source = fileobj.read()
    for line, title, name in grader_titles(source.decode("utf-8")):
        yield line, None, title, [f"Title of the check {name}"]
    fileobj.seek(0)
    yield from extract_python(fileobj, keywords, comment_tags, options)


NOTE_FIELDS = ("what", "erratum")  # the catalog notes' texts a student reads in the handout's value tables


def catalog_notes(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel extractor for ``autograder/deliver/handout/catalog_notes.json``: each entry's description and erratum.

    JSON has no gettext markers, so its texts are read by field name; the line is
    that of the entry's id, so a translator can find it.
    """
    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    for entry, note in json.loads(text)["entries"].items():
        line = next((n for n, content in enumerate(lines, start=1) if f'"{entry}"' in content), 0)
        for field in NOTE_FIELDS:
            if note.get(field):
                yield line, None, note[field], [f"{field} of the chapter value {entry}"]


def question_file(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel extractor for ``autograder/data/predictions.toml``: each question's title and answer form.

    The title (``short``) is the check's title, as :func:`docstring_title`
    writes it; the answer form (``answer``) appears in the check's messages.
    The line is that of the question's ``id``.
    """
    try:
        import tomllib  # novermin  (3.11+; tomli stands in below)
    except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
        import tomli as tomllib

    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    for question in tomllib.loads(text).get("question", []):
        ident = question.get("id", "")
        line = next((n for n, content in enumerate(lines, start=1) if content.strip() == f'id = "{ident}"'), 0)
        if question.get("short"):
            yield line, None, docstring_title(question["short"]), [f"Title of the question {ident}"]
        if question.get("answer"):
            yield line, None, question["answer"].strip(), [f"The answer form of the question {ident}"]
