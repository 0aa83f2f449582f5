"""What a student wrote, made safe to show: HTML from an allow-list, no script, style, frame, form or foreign URL.

nbgrader shows the autograded notebook to the instructor (formgrader) and turns it into the feedback page, and
both render markdown cells with nbconvert's markdown filter *without* sanitising them; a classmate's notebook is
never shown to a student, but the feedback page is released. So the course sanitises the notebook itself, once,
when it is autograded (:class:`autograder.deliver.nbgrader_course.preprocessors.SanitiseForViewers`), and every view of
it (formgrader, the feedback page, Jupyter) shows what is left:

- a markdown cell is rendered as nbconvert renders it (its raster attachments inlined), the HTML is cleaned by
  bleach with :data:`TAGS` and :data:`ATTRIBUTES` (no ``style``, ``class``, ``id`` or event attribute; links to
  http, https, mailto or a fragment; images from PNG, JPEG or GIF data or a plain relative path), and the cell
  keeps that HTML on one line, which every markdown renderer passes through as it is (a CommonMark HTML block
  ends only at a blank line);
- an output keeps only the kinds :data:`OUTPUT_KINDS` names: text, PNG and JPEG data, and HTML or markdown
  cleaned the same way (no JavaScript, SVG, widget, Mermaid or LaTeX output);
- the notebook's own metadata keeps only its kernel and language (no widget state, no title).

bleach is the sanitiser nbconvert itself uses (already installed with it, maintained with security releases);
the allow-list and the URL rule are the kit's. The renderer and the sanitiser are the libraries'; what is written
by hand here is only the choice of what is allowed, which no library can make for this page.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from typing import Any

import bleach
from nbformat import NotebookNode

# What a student's markdown may become: text structure, tables, links, images. No style, class or id (CSS that
# exfiltrates, DOM clobbering of the page's own scripts, Mermaid's or MathJax's markers).
TAGS = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2",
        "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
        "small", "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
        "var",
    }
)  # fmt: skip
ATTRIBUTES = {
    "a": ("href", "title"),
    "abbr": ("title",),
    "img": ("src", "alt", "title", "width", "height"),
    "ol": ("start",),
    "td": ("colspan", "rowspan", "align"),
    "th": ("colspan", "rowspan", "align"),
}
RASTER = ("image/png", "image/jpeg", "image/gif")
LINK = re.compile(r"(https?://|mailto:)[^\s\"'<>`\\]+|#[\w.-]*", re.IGNORECASE)
IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]+", re.IGNORECASE)
# A plain path below the page's folder: no scheme, no leading slash, no "..": an image may name a file the student
# handed in (reports/timing_scaling.png), never another page or the server's API. (An image, never a link: a page
# the student handed in, opened from formgrader's origin, would run its script there.)
RELATIVE = re.compile(r"(?!.*(^|/)\.\.(/|$))[A-Za-z0-9_][A-Za-z0-9_.\-/ ]*(#[\w.-]*)?")
NUMBER = re.compile(r"\d{1,4}%?")
# A student id that is safe as a folder name and as text on nbgrader's pages (which do not escape it).
PLAIN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}")

# Outputs a viewer may show, and how: "text" as it is (nbconvert escapes it), "image" if it is base64 data,
# "html"/"markdown" cleaned; review: the kit's own payload (autograder.deliver.nbgrader_course.review), which no
# template renders.
OUTPUT_KINDS = {
    "text/plain": "text",
    "image/png": "image",
    "image/jpeg": "image",
    "text/html": "html",
    "text/markdown": "markdown",
    "application/vnd.attnlab.review+json": "data",
}
IMAGE_METADATA = ("alt", "width", "height")
NOTEBOOK_METADATA = ("kernelspec", "language_info")


def _allowed(tag: str, name: str, value: str) -> bool:
    """bleach's attribute filter: the allow-list, and the URL rule for ``href`` and ``src``."""
    if name not in ATTRIBUTES.get(tag, ()):
        return False
    if name == "src":
        return bool(IMAGE_DATA.fullmatch(value) or RELATIVE.fullmatch(value))
    if name == "href":  # never relative: formgrader serves a submission's own files (an .html too) on its origin
        return bool(LINK.fullmatch(value))
    if name in ("width", "height", "colspan", "rowspan", "start"):
        return bool(NUMBER.fullmatch(value))
    return True


_CLEANER = bleach.Cleaner(
    tags=TAGS,
    attributes=_allowed,
    protocols={"http", "https", "mailto", "data"},  # then narrowed by _allowed
    strip=True,
    strip_comments=True,
)


def clean_html(text: str | bytes) -> str:
    """``text`` (HTML) with only the allowed tags, attributes and URLs left, on one line (newlines as ``&#10;``).

    Also nbconvert's ``clean_html`` filter in this course (``HTMLExporter.filters``), so the outputs it sanitises
    keep tables, paragraphs and images instead of showing their tags as text."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    cleaned = _CLEANER.clean(text)
    return cleaned.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "&#10;")


def markdown_html(source: str, attachments: dict[str, Any] | None = None) -> str:
    """A markdown cell's source as safe HTML on one line, in a ``div`` (which markdown passes through as it is).

    Rendered with nbconvert's renderer (math kept for MathJax, code highlighted); of the cell's attachments only
    raster images are inlined (an SVG may carry script). Source nbconvert cannot render (e.g. a missing
    attachment) is shown as escaped text."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    raster = _Attachments(
        (name, {mime: data for mime, data in bundle.items() if mime in RASTER and _is_base64(data)})
        for name, bundle in (attachments or {}).items()
        if isinstance(bundle, dict)
    )
    try:
        renderer = IPythonRenderer(escape=False, attachments=raster, exclude_anchor_links=True)
        rendered = MarkdownWithMath(renderer=renderer).render(str(source))
    except Exception:  # whatever the renderer rejects is shown as the text it is
        rendered = f"<pre>{html.escape(str(source))}</pre>"
    return f"<div>{clean_html(rendered)}</div>"


class _Attachments(dict):
    """A cell's raster attachments for nbconvert's renderer: a name without one (an SVG, an HTML page, a name the
    cell does not have) becomes an empty text URL, which the cleaner then removes, instead of an error."""

    def __contains__(self, name: object) -> bool:
        return True

    def __missing__(self, name: str) -> dict[str, str]:
        return {"text/plain": ""}

    def __getitem__(self, name: str) -> dict[str, str]:
        return super().__getitem__(name) or self.__missing__(name)


def _is_base64(data: Any) -> bool:
    if not isinstance(data, str):
        return False
    try:
        base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def output(node: dict[str, Any]) -> dict[str, Any] | None:
    """One code-cell output made safe (a new dict), or None when nothing of it may be shown."""
    kind = node.get("output_type")
    if kind == "stream":
        name = node.get("name") if node.get("name") in ("stdout", "stderr") else "stdout"
        return {"output_type": "stream", "name": name, "text": _text(node.get("text", ""))}
    if kind == "error":
        traceback = [_text(line) for line in node.get("traceback", []) if isinstance(line, str)]
        return {
            "output_type": "error",
            "ename": _text(node.get("ename", "")),
            "evalue": _text(node.get("evalue", "")),
            "traceback": traceback,
        }
    if kind not in ("execute_result", "display_data"):
        return None
    data = {}
    for mime, value in (node.get("data") or {}).items():
        shown = OUTPUT_KINDS.get(mime)
        if shown == "text":
            data[mime] = _text(value)
        elif shown == "image" and _is_base64(_text(value)):
            data[mime] = _text(value)
        elif shown == "html":
            data[mime] = clean_html(_text(value))
        elif shown == "markdown":
            data[mime] = markdown_html(_text(value))
        elif shown == "data" and isinstance(value, dict):
            data[mime] = value
    if not data:
        return None
    safe: dict[str, Any] = {"output_type": kind, "data": data, "metadata": _image_metadata(node.get("metadata"))}
    if kind == "execute_result":
        count = node.get("execution_count")
        safe["execution_count"] = count if isinstance(count, int) else None
    return safe


def _text(value: Any) -> str:
    """nbformat's multiline text (a string or a list of strings) as one string; anything else as nothing."""
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _image_metadata(metadata: Any) -> dict[str, Any]:
    """An output's metadata for its images only: alternative text and a numeric size."""
    kept: dict[str, Any] = {}
    for mime in ("image/png", "image/jpeg"):
        entry = metadata.get(mime) if isinstance(metadata, dict) else None
        if isinstance(entry, dict):
            values = {
                key: entry[key]
                for key in IMAGE_METADATA
                if isinstance(entry.get(key), str if key == "alt" else (int, float))
                and not isinstance(entry.get(key), bool)
            }
            if values:
                kept[mime] = values
    return kept


def notebook_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The notebook's metadata a viewer needs: its kernel and language, nothing else (widget state, a title)."""
    return {key: metadata[key] for key in NOTEBOOK_METADATA if isinstance(metadata.get(key), dict)}


def fenced(source: str, language: str = "") -> str:
    """``source`` as a markdown code block, fenced by more backticks than any run of them it holds."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", source)), default=0))
    return f"{fence}{language}\n{source}\n{fence}"


def for_viewers(nb: NotebookNode, kit: dict[str, tuple[str, str]], known: set[str]) -> NotebookNode:
    """The notebook ``nb`` as a viewer may see it.

    ``kit``: the gradebook's cells by grade id, as (cell type, source), as the kit released them; a markdown cell
    is left as it is only when it is exactly one of them (an answer cell left as released, too: nbgrader then
    scores it 0 as unanswered). Every other markdown or raw cell (answers, cells the student added, added code
    shown as markdown) becomes a markdown cell holding its sanitised HTML, without attachments; every output is
    sanitised; a cell keeps only the ``nbgrader`` entry of its metadata (:func:`_nbgrader_metadata`), when its
    grade id is in ``known``; the notebook keeps only its kernel and language.
    """
    nb.cells = [_cell_for_viewers(cell, kit, known) for cell in nb.cells]
    nb.metadata = NotebookNode(notebook_metadata(nb.metadata))
    return nb


# nbgrader's cell metadata a template or a later nbgrader step reads, and the type each must have.
NBGRADER_METADATA = {
    "grade": bool, "solution": bool, "locked": bool, "task": bool, "points": (int, float), "schema_version": int,
    "grade_id": str, "checksum": str, "cell_type": str,
}  # fmt: skip
WORD = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def _nbgrader_metadata(entry: Any, known: set[str]) -> dict[str, Any] | None:
    """A cell's ``nbgrader`` metadata with only the keys nbgrader's steps and templates read, each of its type and
    its strings plain; None when its grade id is not one of ``known`` (the gradebook's)."""
    if not isinstance(entry, dict) or entry.get("grade_id") not in known:
        return None
    kept = {}
    for key, kind in NBGRADER_METADATA.items():
        value = entry.get(key)
        plain = not isinstance(value, str) or WORD.fullmatch(value)
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)) and plain:
            kept[key] = value
    return kept


def _cell_for_viewers(cell: NotebookNode, kit: dict[str, tuple[str, str]], known: set[str]) -> NotebookNode:
    nbgrader = _nbgrader_metadata(cell.get("metadata", {}).get("nbgrader"), known)
    grade_id = nbgrader["grade_id"] if nbgrader else None
    metadata = NotebookNode({"nbgrader": NotebookNode(nbgrader)} if nbgrader else {})
    if cell.cell_type == "code":
        outputs = [output(node) for node in cell.get("outputs", [])]
        cell.outputs = [NotebookNode(node) for node in outputs if node is not None]
        cell.metadata = metadata
        return cell
    if kit.get(grade_id) == (cell.cell_type, cell.source):
        cell.pop("attachments", None)
        cell.metadata = metadata
        return cell
    attachments = cell.get("attachments") if cell.cell_type == "markdown" else None
    source = cell.source if cell.cell_type == "markdown" else fenced(str(cell.get("source", "")))
    safe = NotebookNode(cell_type="markdown", metadata=metadata, source=markdown_html(source, attachments))
    if "id" in cell:
        safe["id"] = cell["id"]
    return safe
