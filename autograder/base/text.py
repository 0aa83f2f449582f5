"""Text that came from student code, made safe to show: control characters escaped.

Exception messages, printed output and names from the sandboxed child reach the
terminal table, the JSON results and the HTML feedback. A raw ``ESC [ 2 J`` there
repaints a terminal (a fake all-full table), a carriage return overwrites a
line, and bidirectional overrides reorder what a reader sees. Every such
character is written as its Python escape (``\\x1b``, ``\\u202e``) once, where the
text enters the trusted side; newlines and tabs stay. Escaping is idempotent:
the result holds no control characters, so escaping it again changes nothing.

Standard library only: the sandbox's outcome types import it.
"""

from __future__ import annotations

import unicodedata

KEPT = frozenset("\n\t")
# Cc: C0/C1 controls and DEL; Cf: format characters (bidi overrides, zero-width);
# Zl/Zp: line and paragraph separators; Cs: lone surrogates; Co: private use; Cn: unassigned.
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape_char(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape_controls(text: str) -> str:
    """``text`` with every control or format character except newline and tab written as its escape."""
    if text.isprintable():  # the common case, decided in C
        return text
    return "".join(
        _escape_char(char) if char not in KEPT and unicodedata.category(char) in ESCAPED_CATEGORIES else char
        for char in text
    )


def clean(value: object, limit: int | None = None) -> str:
    """``str(value)`` escaped and, with ``limit``, cut to that many characters (marked with an ellipsis)."""
    text = escape_controls(value if isinstance(value, str) else str(value))
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text
