"""Generated blocks inside the handout's markdown.

A block is written by hand as an opening and a closing marker; everything
between them belongs to the generator::

    <!-- contract:softmax -->
    (generated text)
    <!-- /contract -->

The kind (``contract``) says what is generated, the key (``softmax``) for what.
:func:`fill` replaces every block's body with fresh text and leaves the prose
around it untouched, so the markdown can be regenerated at any time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

OPEN = re.compile(r"<!-- (?P<kind>[a-z_]+):(?P<key>[A-Za-z0-9_.-]+) -->")
CLOSE = "<!-- /{kind} -->"


class BlockError(ValueError):
    """Markers that do not pair up."""


@dataclass(frozen=True)
class Block:
    """One generated block: its kind and key, and where its body sits in the text."""

    kind: str
    key: str
    start: int  # first character of the body (just after the opening marker's line)
    end: int  # first character of the closing marker


def find_blocks(text: str) -> list[Block]:
    """Every block of ``text`` in order; :class:`BlockError` names the line of a marker without its partner."""
    blocks = []
    for match in OPEN.finditer(text):
        kind, key = match.group("kind"), match.group("key")
        close = CLOSE.format(kind=kind)
        end = text.find(close, match.end())
        nested = OPEN.search(text, match.end(), end if end >= 0 else len(text))
        if end < 0 or nested:
            line = text.count("\n", 0, match.start()) + 1
            raise BlockError(f"line {line}: {match.group(0)} has no {close} before the next block opens")
        start = match.end() + 1 if text.startswith("\n", match.end()) else match.end()
        blocks.append(Block(kind, key, start, end))
    return blocks


def fill(text: str, body: Callable[[str, str], str]) -> str:
    """``text`` with each block's body replaced by ``body(kind, key)`` (a trailing newline is added)."""
    out, cursor = [], 0
    for block in find_blocks(text):
        out.append(text[cursor : block.start])
        fresh = body(block.kind, block.key).rstrip("\n")
        out.append(fresh + "\n" if fresh else "")
        cursor = block.end
    out.append(text[cursor:])
    return "".join(out)


def keys(text: str, kind: str) -> list[str]:
    """The keys of the blocks of one kind, in order."""
    return [b.key for b in find_blocks(text) if b.kind == kind]
