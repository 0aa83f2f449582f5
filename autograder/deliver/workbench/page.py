"""The workbench's one self-contained HTML page: the kit's page frame, the data as JSON, a small script.

Everything the page shows is in one ``<script type="application/json">``
block (the student's numbers, the chapter's, the translated sentences with
every plural form and the catalog's plural rule, the palette); the script
(``static/workbench.js``) draws the views from it. Nothing is fetched: no
network, no CDN, no font. Text from student code reaches the page only inside
that JSON block, where ``<``, ``>`` and ``&`` are written as JSON escapes, so
nothing in it can close the ``<script>`` element or become markup; the script
puts every string into the page as text, never as HTML.
"""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from typing import Any

from autograder.base import chapter
from autograder.deliver.workbench import plurals, strings, worked
from autograder.i18n import language
from autograder.report import htmlpage

PALETTE = "cividis"  # the kit's heatmaps' colormap (autograder/report/render_figures.py): colour-blind safe
STOPS = 32

BODY = """<header>
<h1>{title}</h1>
<p class="lead">{lead}</p>
<p class="summary" id="summary"></p>
<div class="tabs" id="tabs" role="tablist" aria-label="{tabs_label}"></div>
<div class="timebar" id="timebar" role="toolbar" aria-label="{time_label}"></div>
</header>
<main>
<noscript><p>{noscript}</p></noscript>
<section class="panel" id="panel" role="tabpanel" tabindex="-1"></section>
<p class="muted">{footer}</p>
</main>
<script type="application/json" id="wb-data">{data}</script>
<script>{script}</script>"""


@cache
def static(name: str) -> str:
    """A file of ``autograder/deliver/workbench/static`` (the page's script and style)."""
    return resources.files("autograder.deliver.workbench").joinpath("static", name).read_text(encoding="utf-8")


@cache
def palette() -> tuple[dict[str, str], ...]:
    """The colormap as ``STOPS`` background colours from low to high, each with the text colour that reads on it."""
    from matplotlib import colormaps  # only here: the page needs the colours, not a figure

    colours = []
    for k in range(STOPS):
        r, g, b, _alpha = colormaps[PALETTE](k / (STOPS - 1))
        luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
        colours.append(
            {
                "bg": f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}",
                "fg": "#000" if luminance > 0.45 else "#fff",
            }
        )
    return tuple(colours)


def embedded_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script>``: no ``<``, ``>`` or ``&`` characters left in it."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render(data: dict[str, Any]) -> str:
    """The page for ``data`` (from :func:`autograder.deliver.workbench.build.collect`), in the active language."""
    text = strings.texts()
    meta = data["meta"]
    page_data = {
        **data,
        "text": text,
        "counted": strings.counted(),  # every form of each sentence with a count
        "plural": plurals.page_rule(),  # the catalog's Plural-Forms, which picks one of them for a count
        "tokens": chapter.tokens(),
        "stage_ids": list(worked.STAGES),
        "palette": list(palette()),
    }
    script = static("workbench.js")
    if "</script" in script.lower():
        raise ValueError("the workbench script must not contain </script")
    body = BODY.format(
        title=html.escape(text["title"].format(folder=meta["folder"])),
        lead=html.escape(text["lead"]),
        tabs_label=html.escape(text["tabs_label"]),
        time_label=html.escape(text["time_label"]),
        noscript=html.escape(text["noscript"]),
        footer=html.escape(
            text["footer"].format(version=meta["version"], folder=meta["folder"], isolation=meta["isolation"])
        ),
        data=embedded_json(page_data),
        script=script,
    )
    title = text["title"].format(folder=meta["folder"])
    return htmlpage.page(body, title=title, style=static("workbench.css"), lang=language())
