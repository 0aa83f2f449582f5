"""What a student wrote reaches formgrader and the feedback page only as sanitised HTML (no nbgrader run needed).

The hostile notebook (:mod:`tests.hostile_notebook`) goes through the course's last autograde step
(:func:`autograder.deliver.nbgrader_course.sanitise.for_viewers`) and is rendered with nbgrader's own formgrade and
feedback templates under the course's exporter settings. The page must hold exactly the active elements and
event handlers the page of the untouched release holds (the templates' own), no attribute that names an
attack's URL, ``javascript:`` or an HTML or SVG data URL, and the answer's plain text. The browser test
(:mod:`tests.test_nbgrader_exchange`) opens the same pages served by a real Jupyter server.
"""

from __future__ import annotations

import html.parser
import json
from collections import Counter
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from nbconvert.exporters import HTMLExporter  # noqa: E402
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath  # noqa: E402
from nbgrader.server_extensions.formgrader import handlers  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402

from autograder.deliver.nbgrader_course import config, sanitise  # noqa: E402
from autograder.deliver.release import bundle  # noqa: E402
from tests import hostile_notebook as hostile  # noqa: E402

ACTIVE = {
    "script", "iframe", "frame", "object", "embed", "form", "link", "meta", "base", "style", "svg", "math", "button",
    "input", "textarea", "select", "video", "audio", "source", "portal", "template", "noscript",
}  # fmt: skip
BOOTSTRAP = str(Path(handlers.static_path) / "node_modules" / "bootstrap" / "dist" / "css")
BAD_IN_ATTRIBUTES = (hostile.MARK, "javascript:", "data:text", "data:image/svg", "attachment:", ".html")


class Elements(html.parser.HTMLParser):
    """The page's active elements, event handlers, style attributes and attribute values, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.active: Counter = Counter()
        self.handlers: Counter = Counter()
        self.styles: Counter = Counter()
        self.values: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ACTIVE:
            self.active[(tag, tuple(sorted(attrs)))] += 1
        for name, value in attrs:
            self.values.append(f"{tag} {name}={value}")
            if name.startswith("on"):
                self.handlers[(tag, name, value)] += 1
            if name == "style":
                self.styles[value] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(page: str) -> Elements:
    elements = Elements()
    elements.feed(page)
    return elements


def released() -> nbformat.NotebookNode:
    return nbformat.reads(bundle.student_notebook(), as_version=4)


def for_viewers(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``book`` after the course's last autograde step, with the release's cells as the gradebook's."""
    cells = [c for c in released().cells if "nbgrader" in c.metadata]
    kit = {c.metadata.nbgrader.grade_id: (c.cell_type, c.source) for c in cells}
    return sanitise.for_viewers(book, kit, set(kit))


def exporter(template: str, folder: Path) -> HTMLExporter:
    """nbgrader's template ``template`` under the course's exporter settings (its config, loaded as nbgrader does)."""
    (folder / "nbgrader_config.py").write_text(config.config_text(300.0), encoding="utf-8")
    course = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    course.HTMLExporter.template_name = template
    course.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    course.HTMLExporter.extra_template_paths = [BOOTSTRAP]  # as nbgrader's GenerateFeedback sets it
    return HTMLExporter(config=course)


def scored(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``book`` with a score on every graded cell, as nbgrader's GetGrades leaves it for the feedback template."""
    for cell in book.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata.nbgrader.score = 0.0
    return book


RESOURCES = {
    "formgrade": {
        "base_url": "", "submission_id": "1", "notebook_id": "lab", "assignment_id": "lab", "index": 0, "total": 1,
        "student": "bob", "notebook_path": "x", "last_name": None, "first_name": None,
    },
    "feedback": {"nbgrader": {"notebook": "lab", "score": 0, "max_score": 1, "late_penalty": 0}},
}  # fmt: skip


@pytest.mark.parametrize("template", ["formgrade", "feedback"])
def test_the_hostile_notebook_renders_with_nothing_active_but_the_templates_own(template: str, tmp_path: Path) -> None:
    render = exporter(template, tmp_path)
    benign = parsed(render.from_notebook_node(scored(for_viewers(released())), resources=dict(RESOURCES[template]))[0])
    book = scored(for_viewers(hostile.make_hostile(released())))
    page = parsed(render.from_notebook_node(book, resources=dict(RESOURCES[template]))[0])
    assert page.active == benign.active, set(page.active) ^ set(benign.active)
    assert page.handlers == benign.handlers, set(page.handlers) ^ set(benign.handlers)
    assert page.styles == benign.styles, set(page.styles) ^ set(benign.styles)
    bad = [value for value in page.values if any(mark in value.lower() for mark in BAD_IN_ATTRIBUTES)]
    assert not bad, bad
    assert hostile.VISIBLE in " ".join(" ".join(page.text).split())


def test_the_sanitised_notebook_keeps_no_widget_state_title_raw_cell_attachment_or_foreign_output() -> None:
    book = for_viewers(hostile.make_hostile(released()))
    assert set(book.metadata) <= {"kernelspec", "language_info"}
    assert {c.cell_type for c in book.cells} <= {"markdown", "code"}
    assert not any("attachments" in c for c in book.cells)
    assert all(set(c.metadata) <= {"nbgrader"} for c in book.cells)
    kinds = {mime for c in book.cells if c.cell_type == "code" for o in c.outputs for mime in o.get("data", {})}
    assert kinds <= set(sanitise.OUTPUT_KINDS), kinds
    shown = [c.source for c in book.cells if c.cell_type == "markdown"]  # code is shown escaped, as code
    shown += [json.dumps(o.get("data", {})) for c in book.cells if c.cell_type == "code" for o in c.outputs]
    for text in shown:
        page = parsed(text)
        assert not page.active and not page.handlers and not page.styles, text


@pytest.mark.parametrize("shape", sorted(hostile.MARKDOWN))
def test_each_markdown_shape_becomes_html_that_markdown_passes_through_as_it_is(shape: str) -> None:
    """One line of cleaned HTML in a div: formgrader's and the feedback's unsanitised markdown filter leaves it as it
    is, so what the browser gets is exactly what bleach let through."""
    cleaned = sanitise.markdown_html(hostile.MARKDOWN[shape], hostile.ATTACHMENTS)
    assert "\n" not in cleaned and cleaned.startswith("<div>") and cleaned.endswith("</div>")
    again = MarkdownWithMath(renderer=IPythonRenderer(escape=False)).render(cleaned)
    assert again.strip() == cleaned
    page = parsed(cleaned)
    assert not page.active and not page.handlers and not page.styles
    assert not [v for v in page.values if any(mark in v.lower() for mark in BAD_IN_ATTRIBUTES)]


def test_what_a_student_may_still_write_survives() -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    source = (
        "## Why\n\nThe **mask** ties $x_s$ to *s*: see [the chapter](https://example.org/ch7#mask), "
        "![my plot](reports/timing_scaling.png) and ![inline](attachment:p.png).\n\n| n | ms |\n|---|---|\n| 8 | 1 |"
    )
    cleaned = sanitise.markdown_html(source, {"p.png": {"image/png": png}})
    for kept in (
        "<h2>Why</h2>",
        "<strong>mask</strong>",
        "$x_s$",
        '<a href="https://example.org/ch7#mask">',
        'src="reports/timing_scaling.png"',
        f'src="data:image/png;base64,{png}"',
        "<table>",
    ):
        assert kept in cleaned, (kept, cleaned)


def test_outputs_keep_text_images_and_cleaned_html_only() -> None:
    png = {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
    image = sanitise.output({"output_type": "display_data", "data": png, "metadata": {"image/png": {"alt": "plot"}}})
    assert image == {"output_type": "display_data", "data": png, "metadata": {"image/png": {"alt": "plot"}}}
    heatmap = '<p><b>softmax rows</b></p><img class="heatmaps" alt="Heatmaps" src="data:image/png;base64,iVBORw0KGgo=">'
    shown = sanitise.output({"output_type": "display_data", "data": {"text/html": heatmap}})
    assert (
        shown["data"]["text/html"]
        == '<p><b>softmax rows</b></p><img alt="Heatmaps" src="data:image/png;base64,iVBORw0KGgo=">'
    )
    for node in hostile.OUTPUTS:
        kept = sanitise.output(node)
        page = parsed(" ".join(str(v) for v in (kept or {}).get("data", {}).values()))
        assert not page.active and not page.handlers, (node, kept)
    assert sanitise.output({"output_type": "display_data", "data": {"application/javascript": "alert(1)"}}) is None


def test_an_answer_left_as_released_stays_as_it_is_and_metadata_keeps_only_what_nbgrader_reads() -> None:
    book = released()
    answer = next(c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade_id") == hostile.FORM_ID)
    released_answer = answer.source
    answer.metadata.nbgrader["points"] = 2
    answer.metadata.nbgrader["extra"] = "<b>x</b>"
    answer.metadata["tags"] = ["x"]
    kept = next(c for c in for_viewers(book).cells if c.metadata.get("nbgrader", {}).get("grade_id") == hostile.FORM_ID)
    assert kept.source == released_answer, "nbgrader's checksum must still see an unanswered cell"
    assert set(kept.metadata) == {"nbgrader"} and "extra" not in kept.metadata.nbgrader
    assert kept.metadata.nbgrader.points == 2 and kept.metadata.nbgrader.solution is True
