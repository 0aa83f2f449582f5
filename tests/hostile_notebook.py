"""A student's notebook that tries every way we know to run script, or reach the Jupyter API, in a viewer's page.

Each attack is a *shape* with an id; its script, if it ever runs, records the id in the top window
(``attnlabPwned``), reads ``/api/contents/attnlab-pwned-<id>`` and tries to write the file
``attnlab-pwned-<id>.txt`` through the contents API with the page's XSRF cookie; the attacks that need no script
(an image, a stylesheet, a refresh, a form, a link) point at ``/api/contents/attnlab-pwned-<id>`` too. So a
viewer that let any of them through shows up in the server's log, the browser's network log, a marker file or
the page's own state. :data:`VISIBLE` is plain text the hostile answer also holds: the page must show it (a page
that rendered nothing would pass every other check).
"""

from __future__ import annotations

import base64
import json

import nbformat

MARK = "attnlab-pwned"
VISIBLE = "The causal mask ties what a token sees to its position"
FORM_ID = "answer_causal_equivariance"  # the hostile markdown goes into this answer cell (a solution cell)


def script(shape: str) -> str:
    """JavaScript that leaves every trace of having run (single quotes only: it goes into attributes too)."""
    return (
        f"try{{window.top.attnlabPwned=(window.top.attnlabPwned||[]).concat(['{shape}'])}}catch(e){{}};"
        f"fetch('/api/contents/{MARK}-{shape}').catch(function(){{}});"
        "var m=document.cookie.match(/_xsrf=([^;]+)/);"
        f"fetch('/api/contents/{MARK}-{shape}.txt',{{method:'PUT',headers:{{'Content-Type':'application/json',"
        "'X-XSRFToken':m?decodeURIComponent(m[1]):''},"
        f"body:JSON.stringify({{type:'file',format:'text',content:'{shape}'}})}}).catch(function(){{}})"
    )


def url(shape: str) -> str:
    return f"/api/contents/{MARK}-{shape}"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def svg(shape: str) -> str:
    inner = script(shape + "-inner")
    return f'<svg xmlns="http://www.w3.org/2000/svg" onload="{script(shape)}"><script>{inner}</script></svg>'


# Markdown a student can write (in an answer cell or a cell of their own), one shape each.
MARKDOWN = {
    "img-onerror": f'<img src="x" onerror="{script("img-onerror")}">',
    "script-tag": f"<script>{script('script-tag')}</script>",
    "svg-inline": svg("svg-inline"),
    "javascript-link": f"[open the plot](javascript:{script('javascript-link')})",
    "javascript-entity": f'<a href="jav&#x09;ascript:{script("javascript-entity")}">plot</a>',
    "data-link": f"[data](data:text/html;base64,{_b64('<script>' + script('data-link') + '</script>')})",
    "data-svg-image": f"![svg](data:image/svg+xml;base64,{_b64(svg('data-svg-image'))})",
    "iframe-srcdoc": f'<iframe srcdoc="<script>{script("iframe-srcdoc")}</script>"></iframe>',
    "iframe-src": f'<iframe src="{url("iframe-src")}"></iframe>',
    "object-embed": f'<object data="{url("object")}"></object><embed src="{url("embed")}">',
    "form": f'<form action="{url("form")}" method="post"><input name="x"><button>Send</button></form>',
    "formaction": f'<button formaction="{url("formaction")}">Go</button>',
    "api-image": f'<img src="{url("api-image")}"><img src="../../..{url("api-image-up")}">',
    "css-style-tag": f"<style>body {{ background: url('{url('css-style-tag')}') }}</style>",
    "css-attribute": f"<div style=\"background-image: url('{url('css-attribute')}')\">styled</div>",
    "css-link": f'<link rel="stylesheet" href="{url("css-link")}">',
    "meta-refresh": f'<meta http-equiv="refresh" content="0;url={url("meta-refresh")}">',
    "base-href": '<base href="/api/contents/">',
    "mermaid": f'```mermaid\ngraph TD\n  A-->B\n  click A call eval("{script("mermaid")}")\n```',
    "mathjax-href": f"$\\href{{javascript:{script('mathjax-href')}}}{{x}}$",
    "mutation": f'<math><mtext><table><mglyph><style><img src=x onerror="{script("mutation")}">',
    "noscript": f'<noscript><p title="</noscript><img src=x onerror=&quot;{script("noscript")}&quot;>">',
    "own-page-link": "[my report](reports/report.html) <a href='evil.html'>evil</a>",  # formgrader serves these
    "dom-clobber": '<a id="base_url" name="base_url" href="/api/contents">x</a><form id="submission_id"></form>',
    "attachment-svg": "![plot](attachment:plot.svg)",
    "attachment-html": '<iframe src="attachment:page.html"></iframe><img src="attachment:plot.svg">',
}
ATTACHMENTS = {
    "plot.svg": {"image/svg+xml": _b64(svg("attachment-svg"))},
    "page.html": {"text/html": _b64(f"<script>{script('attachment-html')}</script>")},
}

# Outputs a student leaves on cells they ran themselves (cleared and never produced again when grading).
OUTPUTS = [
    nbformat.v4.new_output("display_data", data={"text/html": f'<img src=x onerror="{script("output-html")}">'}),
    nbformat.v4.new_output("display_data", data={"image/svg+xml": svg("output-svg")}),
    nbformat.v4.new_output("display_data", data={"application/javascript": script("output-js")}),
    nbformat.v4.new_output("display_data", data={"text/markdown": f'<img src=x onerror="{script("output-md")}">'}),
    nbformat.v4.new_output(
        "display_data",
        data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "evil", "version_major": 2, "version_minor": 0},
            "text/plain": "widget",
        },
    ),
    nbformat.v4.new_output(
        "display_data", data={"text/vnd.mermaid": f'<img src=x onerror="{script("output-mermaid")}">'}
    ),
    nbformat.v4.new_output(
        "execute_result",
        data={"text/html": f"<script>{script('output-result')}</script>"},
        metadata={"image/png": {"alt": f'"><img src=x onerror="{script("output-metadata")}">'}},
        execution_count=1,
    ),
]
# A code cell that would display HTML if it ran (OnlyKitCode never runs it).
KERNEL_HTML = (
    f"from IPython.display import HTML, display\ndisplay(HTML('''<img src=x onerror=\"{script('kernel-html')}\">'''))"
)
WIDGET_STATE = {
    "application/vnd.jupyter.widget-state+json": {
        "version_major": 2,
        "version_minor": 0,
        "state": {
            "evil": {
                "model_name": "HTMLModel",
                "model_module": "@jupyter-widgets/controls",
                "model_module_version": "2.0.0",
                "state": {"value": f'<img src=x onerror="{script("widget-state")}">'},
            }
        },
    }
}
SHAPES = (
    *MARKDOWN,
    "raw-html",
    "output-html",
    "output-svg",
    "output-js",
    "output-md",
    "output-mermaid",
    "output-result",
    "output-metadata",
    "kernel-html",
    "widget-state",
    "cell-metadata",
    "notebook-title",
)


def make_hostile(book: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``book`` (the released notebook) with every shape added: in the answer cell :data:`FORM_ID`, in cells of
    the student's own, in a raw cell, in outputs, in cell and notebook metadata."""
    answer = next(c for c in book.cells if c.metadata.get("nbgrader", {}).get("grade_id") == FORM_ID)
    answer.source = f"{VISIBLE}.\n\n" + "\n\n".join(MARKDOWN.values())
    answer.attachments = ATTACHMENTS
    added = nbformat.v4.new_markdown_cell("\n\n".join(MARKDOWN.values()), attachments=ATTACHMENTS)
    added.metadata = {  # nbformat takes no comma in a tag (a notebook it rejects is not autograded at all)
        "tags": [f'"><img src=x onerror="fetch(\'{url("cell-metadata")}\')">'],
        "jupyter": {"source_hidden": True},
    }
    raw = nbformat.v4.new_raw_cell(f"<script>{script('raw-html')}</script>")
    raw.metadata = {"raw_mimetype": "text/html", "format": "text/html"}
    ran = nbformat.v4.new_code_cell("1 + 1", outputs=OUTPUTS, execution_count=1)
    kernel = nbformat.v4.new_code_cell(KERNEL_HTML)
    book.cells[1:1] = [added, raw, ran, kernel]
    book.metadata["widgets"] = WIDGET_STATE
    book.metadata["title"] = f"</title><script>{script('notebook-title')}</script>"
    return book


def summary() -> str:
    """The shapes, for a failure message."""
    return json.dumps(SHAPES)
