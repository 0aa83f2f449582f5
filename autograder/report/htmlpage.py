"""One self-contained HTML page: the frame the handout and the HTML report share (a leaf: standard library only)."""

from __future__ import annotations

import html

GENERATOR = "attnlab"  # every page names its writer: a later run may replace only a page the kit wrote
PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{generator}">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
{body}
</body>
</html>
"""


def page(body: str, *, title: str, style: str, lang: str = "en") -> str:
    """``body`` (HTML) in a page of language ``lang``; ``title`` is escaped here, ``body`` is used as it is."""
    return PAGE.format(lang=html.escape(lang), title=html.escape(title), style=style, body=body, generator=GENERATOR)
