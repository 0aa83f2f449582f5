"""Render the handout's markdown as one self-contained HTML page (works offline).

Math written as ``$...$`` (inline) or ``$$...$$`` (display) becomes MathML
(``latex2mathml``), which browsers draw without any script or font download.
Figures are embedded as ``data:`` URIs, so the page can be copied anywhere
on its own. Markdown is converted with Python-Markdown (tables, fenced code,
heading ids, markdown inside ``<div markdown="1">``).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import markdown
from latex2mathml.converter import convert

from autograder.base.kit import Kit
from autograder.report import htmlpage

# Fenced code, inline code (kept as they are), display math, inline math.
TOKENS = re.compile(
    r"(?P<fence>^```.*?^```[ \t]*$)"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<display>\$\$(?P<display_tex>.+?)\$\$)"
    r"|(?P<inline>(?<![\\$\w])\$(?=\S)(?P<inline_tex>[^$\n]+?)(?<=\S)\$(?![\w$]))",
    re.MULTILINE | re.DOTALL,
)
PLACEHOLDER = "MATHSPAN{}END"
IMAGE = re.compile(r'<img ([^>]*?)src="(?P<src>[^":]+\.png)"')

# Fonts with Latin, Turkish, Indonesian and Cyrillic glyphs first (DejaVu ships with Debian's fonts-dejavu-core;
# Noto and Liberation cover the same on other systems), so a Russian page never falls back glyph by glyph.
FONT_STACK = '"DejaVu Sans", "Noto Sans", "Liberation Sans", "Helvetica Neue", Arial, sans-serif'
MONO_STACK = '"DejaVu Sans Mono", "Noto Sans Mono", "Liberation Mono", Menlo, Consolas, monospace'
STYLE = """
body { font-family: FONT_STACK; line-height: 1.5; color: #1d1d1d;
       max-width: 54rem; margin: 2rem auto; padding: 0 1.2rem; }
h1, h2, h3 { line-height: 1.25; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2.6rem; }
code { font-family: MONO_STACK; font-size: .88em; background: #f3f3f3;
       padding: 0 .2em; }
pre { background: #f6f6f6; border: 1px solid #e1e1e1; padding: .7rem; overflow-x: auto; font-size: .9em;
      line-height: 1.35; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9em; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d0d0; padding: .25rem .5rem; vertical-align: top; } th { background: #f0f0f0; }
img { max-width: 100%; height: auto; display: block; margin: 1rem auto .3rem; }
.box { background: #fff8e1; border: 1px solid #e8c766; border-radius: 4px; padding: .2rem 1rem; margin: 1rem 0; }
@media print { pre { white-space: pre-wrap; } img, table, pre { break-inside: avoid; } h2, h3 { break-after: avoid; } }
math { font-family: "STIX Two Math", "Latin Modern Math", "DejaVu Math TeX Gyre", "Cambria Math", math; }
math[display="block"] { margin: .8rem 0; font-size: 1.15em; overflow-x: auto; max-width: 100%; }
h1, h2, h3 { overflow-wrap: break-word; }
""".replace("FONT_STACK", FONT_STACK).replace("MONO_STACK", MONO_STACK)


def _mathml(tex: str, display: bool) -> str:
    """MathML of one TeX span; bracketed matrices get stretchy fences (``\\left[ ... \\right]``)."""
    tex = (
        tex.strip()
        .replace(r"\begin{bmatrix}", r"\left[\begin{matrix}")
        .replace(r"\end{bmatrix}", r"\end{matrix}\right]")
    )
    return convert(tex, display="block" if display else "inline")


def protect_math(text: str) -> tuple[str, list[str]]:
    """``text`` with every math span replaced by a placeholder, and the MathML of each span in order."""
    rendered: list[str] = []

    def replace(match: re.Match) -> str:
        if match.group("fence") or match.group("code"):
            return match.group(0)
        display = match.group("display") is not None
        rendered.append(_mathml(match.group("display_tex") if display else match.group("inline_tex"), display))
        return PLACEHOLDER.format(len(rendered) - 1)

    return TOKENS.sub(replace, text), rendered


def embed_images(body: str, folder: Path) -> str:
    """Every relative ``.png`` image as a ``data:`` URI (a missing file raises ``FileNotFoundError``)."""

    def replace(match: re.Match) -> str:
        data = base64.b64encode((folder / match.group("src")).read_bytes()).decode("ascii")
        return f'<img {match.group(1)}src="data:image/png;base64,{data}"'

    return IMAGE.sub(replace, body)


def render_html(text: str, folder: Path, title: str = "Lab 7: attention", lang: str = "en") -> str:
    """The page for the markdown ``text`` whose relative image paths start at ``folder``."""
    protected, maths = protect_math(text)
    body = markdown.markdown(
        protected, extensions=["tables", "fenced_code", "toc", "md_in_html", "sane_lists"], output_format="html"
    )
    for index, mathml in enumerate(maths):
        placeholder = PLACEHOLDER.format(index)
        if mathml.startswith("<math") and 'display="block"' in mathml:
            body = body.replace(f"<p>{placeholder}</p>", mathml)
        body = body.replace(placeholder, mathml)
    return htmlpage.page(embed_images(keyboard_scrollable(body), folder), title=title, style=STYLE, lang=lang)


def keyboard_scrollable(body: str) -> str:
    """``body`` with its code blocks and display formulas focusable: they scroll sideways when wider than the page,
    and a region that scrolls must be reachable from the keyboard (WCAG 2.1.1; axe's scrollable-region-focusable)."""
    body = body.replace("<pre>", '<pre tabindex="0">')
    return re.sub(r'<math(?=[^>]*\bdisplay="block")', '<math tabindex="0"', body)


def build(kit: Kit, out: Path | None = None, lang: str = "en") -> Path:
    """Render the handout of ``lang`` to ``out`` (default ``handouts/build/lab07_attention[.lang].html``); the path."""
    target = out or kit.html_for(lang)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = kit.handout_for(lang)
    text = source.read_text(encoding="utf-8")
    first_heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "Lab 7: attention")
    target.write_text(render_html(text, source.parent, first_heading, lang), encoding="utf-8")
    return target
