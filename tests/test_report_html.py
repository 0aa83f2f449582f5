"""The HTML report (``attnlab grade --html``): one self-contained page with heatmaps, drawn in a real browser."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from autograder import i18n
from autograder.base import chapter, tasks
from autograder.deliver.handout import browser
from autograder.grading.model import CallFailure, CheckResult, GradeReport, StepResult
from autograder.judge.evidence import WORKED_EXAMPLE, Evidence
from autograder.report import render_figures, render_html

needs_chromium = pytest.mark.skipif(
    browser.find_chromium() is None,
    reason="chromium is not installed (apt-get install -y chromium, or set ATTNLAB_CHROMIUM)",
)
IMAGES = re.compile(r'<img [^>]*src="([^"]+)"')
PROBE = (  # reports each image's decoded size once the page has loaded
    '<script>window.addEventListener("load", () => document.body.setAttribute("data-images", '
    "JSON.stringify([...document.images].map(i => [i.naturalWidth, i.naturalHeight]))));</script>"
)


def wrong_axis(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def graded() -> GradeReport:
    expected = np.asarray(chapter.value("T72-A"), dtype=float)
    scaled = np.asarray(chapter.value("T72-scaled"), dtype=float)
    tokens = tuple(chapter.tokens())
    axes = ("query position", "key position")
    worked = Evidence(
        "softmax(x) with the worked example", expected, wrong_axis(scaled), axes, (tokens, tokens), WORKED_EXAMPLE
    )
    batch = np.random.default_rng(0).normal(size=(2, 3, 5))
    cube = Evidence("softmax(x) of a batch", np.exp(batch) / np.exp(batch).sum(-1, keepdims=True), batch)
    common = dict(step="softmax", points=1, passed=False, hidden=False)
    checks = (
        CheckResult(name="test_worked", title="Worked <example>", message="expected <b>", evidence=worked, **common),
        CheckResult(name="test_batch", title="Batch", message="expected a batch", evidence=cube, **common),
        CheckResult(name="test_scalar", title="Scalar", message="expected 1, got 2", **common),
    )
    stub = CallFailure("raised", "attention", "NotImplementedError")
    scaling = CheckResult(step="scaling", name="test_a", title="A", points=2, passed=False, hidden=False,
                          message="raised", call_failure=stub)  # fmt: skip
    steps = (StepResult(tasks.step("softmax"), checks), StepResult(tasks.step("scaling"), (scaling,)))
    return GradeReport(submission="lab <folder>", steps=steps, public_only=False, seed=3)


def decoded(uri: str) -> np.ndarray:
    from PIL import Image

    assert uri.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as image:
        return np.asarray(image.convert("RGB"))


def test_the_page_stands_alone_and_escapes_what_it_shows() -> None:
    page = render_html.page(graded())
    assert not re.search(r'(src|href)="(https?:|//)', page) and "<link" not in page
    assert all(src.startswith("data:image/png;base64,") for src in IMAGES.findall(page))
    assert "Worked &lt;example&gt;" in page and "expected &lt;b&gt;" in page and "lab &lt;folder&gt;" in page


def test_each_failed_matrix_check_has_heatmaps_and_the_worked_example_is_shown() -> None:
    page = render_html.page(graded())
    assert page.count('class="heatmaps"') == 2  # the worked example and the batch; not the scalar check
    assert page.count('class="worked"') == 1
    assert "attention: not implemented yet — handout section" in page
    for uri in IMAGES.findall(page):
        pixels = decoded(uri)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 300
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50, "an image is a flat colour"


def test_a_cause_is_drawn_once_and_its_other_checks_point_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks of one cause (the same recognised mistake) keep their own message; only the first has heatmaps, the
    others say where they are (issue 35: a wrong function upstream fails a dozen checks alike). Another cause and a
    check without a mistake id still get their own."""
    drawn: list[str] = []
    monkeypatch.setattr(render_figures, "_drawn_once", lambda key, draw: drawn.append(key) or b"png")
    rng = np.random.default_rng(35)
    common = dict(step="scaling", points=1, passed=False, hidden=False)

    def check(name: str, mistake: str | None) -> CheckResult:
        evidence = Evidence(f"{name}(Q, K, V)", rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))
        return CheckResult(name=name, title=f"Title {name}", message=f"wrong {name}", mistake=mistake,
                           evidence=evidence, **common)  # fmt: skip

    checks = (check("a", "missing_scale"), check("b", "missing_scale"), check("c", "kq_transposed"),
              check("d", "missing_scale"), check("e", None))  # fmt: skip
    html_text = render_html.step_failures(StepResult(tasks.step("scaling"), checks), "handout.html")
    assert html_text.count('class="heatmaps"') == 3 and len(drawn) == 3  # a, c and e
    assert all(f"wrong {c.name}" in html_text for c in checks)
    assert html_text.count('class="same"') == 2 and html_text.count("“Title a”") == 2


def test_heatmaps_mark_the_largest_difference_and_take_a_slice_of_a_cube() -> None:
    cube = graded().steps[0].checks[1].evidence
    expected, _got, lead, labels = render_figures._as_matrix(cube)
    worst = render_figures._worst(cube.got, cube.expected)
    assert lead == worst[:1] and expected.shape == (3, 5) and labels == ("row", "column")


def test_the_page_speaks_the_report_language() -> None:
    with i18n.using("tr"):
        page = render_html.page(graded())
    assert '<html lang="tr">' in page and "Çözümlü örnekte attention ağırlıklarınız" in page
    assert "Başarısız kontroller, adım adım" in page


@needs_chromium
def test_chromium_draws_every_image(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html.page(graded()).replace("</body>", PROBE + "</body>"), encoding="utf-8")
    found = re.search(r'data-images="([^"]*)"', browser.dom(page))
    assert found, "the page's images were not reported (did the page load?)"
    sizes = json.loads(found.group(1).replace("&quot;", '"'))
    assert len(sizes) == 3, sizes
    assert all(width > 100 and height > 100 for width, height in sizes), sizes


def test_the_handout_reference_is_a_link_to_its_section() -> None:
    step = tasks.step("softmax")
    failed = CheckResult(
        "softmax", "test_x", "X", 1, False, False, f"wrong. See the handout ({tasks.HANDOUT}#softmax)."
    )
    todo = CheckResult(
        "softmax",
        "test_y",
        "Y",
        1,
        False,
        False,
        "stub",
        call_failure=CallFailure("raised", "softmax", "E", ("NotImplementedError",)),
    )
    report = GradeReport("lab", (StepResult(step, (failed, todo), ("softmax",)),), False, 1)
    page = render_html.page(report)
    link = f'<a href="handouts/lab07_attention.html#softmax">{tasks.HANDOUT}#softmax</a>'
    assert page.count(link) == 2, "the failure's reference and the not-implemented line's"
    assert f'<a href="../h.html#softmax">{tasks.HANDOUT}#softmax</a>' in render_html.page(report, handout="../h.html")
    with i18n.using("tr"):
        assert 'href="handouts/lab07_attention.tr.html#softmax"' in render_html.page(report)
