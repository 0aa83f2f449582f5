"""Finding English a Turkish student would still read: in the graders' source, and in what they print.

Two ways, for the kit's own tests:

- :func:`unmarked_sentences` reads a grader file and lists its string literals
  that hold an English sentence but are not marked for the catalogs (``_()``,
  ``N_()``, ``Step(...)``, ``Mistake(...)``), docstrings and the English
  keywords looked for in students' error messages aside.
- :class:`MarkedCatalog` is the Turkish catalog with every literal part of a
  translation between :data:`OPEN` and :data:`CLOSE`; text that a grading run
  prints outside those marks did not come from the catalog, so it must be code
  or a value (:func:`english_outside_the_catalog` lists what is not).

An English sentence is recognised by its function words (the, with, of, ...):
code, numbers, shapes and the chapter's kept terms have none.
"""

from __future__ import annotations

import ast
import gettext
import re
import string
from collections.abc import Iterator
from pathlib import Path

from autograder.i18n import catalogs

FUNCTION_WORDS = frozenset(
    "a an the with and or of at for from in into to is are was not no that than per by its each every after before "
    "without one least most only when which where then but does yet none some all".split()
)
# A lower-case word that is not part of a name, a call, a path or a keyword argument (d_k, rope(x), a.py, axis=0),
# nor a Turkish suffix after an apostrophe (head’in, attention’a).
WORD = re.compile(r"(?<![\w.\-'’`/#])[a-z]+(?![\w(=.'`/])")
MARKING_CALLS = frozenset({"_", "N_", "Nn_", "ngettext", "Step", "Mistake"})
KEYWORDS_SUFFIX = "KEYWORDS"  # constants of words looked for in a student's own message (never shown)
OPEN, CLOSE = "\u27e6", "\u27e7"
MARKED = re.compile(f"{OPEN}.*?{CLOSE}", re.S)
QUOTED_CODE = re.compile(r"\(`[^`]*`\)")  # the diagnosis quotes the student's line as (`code`)
STUDENT_ERROR = re.compile(r"\b[A-Z]\w*(Error|Exception|Warning)\b")  # a student's exception, quoted in a message


def english_words(text: str) -> list[str]:
    """The English function words of ``text`` (none in code, values or Turkish)."""
    return [word for word in WORD.findall(text) if word in FUNCTION_WORDS] if " " in text.strip() else []


def _exempt(tree: ast.AST) -> set[int]:
    """The nodes whose strings are marked, docstrings, or keywords matched against students' messages."""
    exempt: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                exempt.add(id(first.value))
        marking = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKING_CALLS
        keywords = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.endswith(KEYWORDS_SUFFIX) for t in node.targets
        )
        if marking or keywords:
            exempt.update(id(sub) for sub in ast.walk(node))
        if isinstance(node, ast.JoinedStr):  # its parts are read with it
            exempt.update(id(value) for value in node.values)
    return exempt


def unmarked_sentences(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal (or f-string part) of ``path`` that is English and unmarked, in order."""
    return sorted(_unmarked(ast.parse(path.read_text(encoding="utf-8"), str(path))))


def _unmarked(tree: ast.AST) -> Iterator[tuple[int, str]]:
    exempt = _exempt(tree)
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts = [node.value]
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        else:
            continue
        for part in parts:
            if english_words(part):
                yield node.lineno, part


def _marked(text: str) -> str:
    """``text`` with each literal part between the marks; its ``str.format`` fields stay fields."""
    if "{" not in text and "}" not in text:
        return OPEN + text + CLOSE
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:  # braces that are not a template
        return OPEN + text + CLOSE
    out = []
    for literal, field, spec, conversion in parsed:
        if literal:
            out.append(OPEN + literal.replace("{", "{{").replace("}", "}}") + CLOSE)
        if field is not None:
            out.append("{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(out)


class MarkedCatalog(gettext.NullTranslations):
    """A language's catalog, read from its ``.po``, that marks what it translates (see :data:`OPEN`)."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.strings: dict[str, str | tuple[str, ...]] = {}
        for message in catalogs.read(lang):
            if message.id and message.string:
                self.strings[message.id[0] if isinstance(message.id, tuple) else message.id] = message.string

    def gettext(self, message: str) -> str:
        found = self.strings.get(message)
        return _marked(found) if isinstance(found, str) else message

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        found = self.strings.get(singular)
        if isinstance(found, tuple):  # nplurals=2, plural=(n != 1)
            return _marked(found[0 if n == 1 else 1])
        return singular if n == 1 else plural


def english_outside_the_catalog(text: str) -> list[str]:
    """The pieces of ``text`` outside the catalog's marks that read as English (a student's own error aside)."""
    pieces, left, before = MARKED.split(text), [], ""
    marks = MARKED.findall(text)
    for index, piece in enumerate(pieces):
        # A student's exception is quoted with its class name just before the quoted detail, which the
        # template's own translated punctuation may part from it ("ValueError", then "⟦: ⟧", then "matmul: ...").
        before = (pieces[index - 1] + marks[index - 1])[-60:] if index else ""
        piece = QUOTED_CODE.sub("", piece)  # a line of the student's own code, quoted as it is
        if english_words(piece) and not STUDENT_ERROR.search(piece) and not STUDENT_ERROR.search(before):
            left.append(piece)
    return left
