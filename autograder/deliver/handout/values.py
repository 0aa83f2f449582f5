"""The chapter's values as the handout shows them: per-step tables and the errata box.

Values come from the kit's copy of the catalog (``autograder/data/chapter_values.json``,
through :mod:`autograder.base.chapter`); what each entry is and what the chapter
printed come from ``catalog_notes.json`` beside this file, a one-time copy of
the catalog's descriptive columns.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from autograder.base import chapter
from autograder.i18n import N_, _

NOTES = Path(__file__).with_name("catalog_notes.json")
MAX_CHARS = 110
NO_VALUES = N_(
    "*The graders of this step check no printed chapter value; they compare with the reference on the inputs above.*"
)
NO_VALUES_FOR = {  # steps without chapter values whose graders compare with something else than the reference
    "predictions": N_(
        "*The graders of this step check no printed chapter value: the public checks compare each prediction with "
        "what your own code computes, the hidden check with the value the reference computes.*"
    ),
    "timing": N_(
        "*The graders of this step check no printed chapter value: they read your report and time your kernels "
        "themselves, on their own random inputs, comparing every timed call's result with the reference's.*"
    ),
}
VALUES_HEAD = N_("| catalog id | chapter | what | value the graders use |")
PRINTS = N_(" (the chapter prints {printed}; see the errata)")
HIDDEN_CHECKS = N_(" (hidden checks)")
ERRATA_HEAD = N_("| where | what | the chapter prints | correct | why |")


@lru_cache(maxsize=1)
def notes() -> dict[str, dict[str, str]]:
    """Each catalog id's section, description, printed value and (for the slips) erratum."""
    return json.loads(NOTES.read_text(encoding="utf-8"))["entries"]


GROUP = "\u202f"  # narrow no-break space: groups thousands inside a list, where a comma would be ambiguous


def number(value: Any, fixed: bool = False, group: str = ",") -> str:
    """One number as a student reads it: 0.6961, 1,048,576, 8.49e-04, -inf.

    ``fixed`` writes integer-valued floats with decimals too (inside a list of
    non-integers); ``group`` separates thousands of integers.
    """
    if isinstance(value, str):
        return "-inf" if value.strip() == "-inf" else "inf" if value.strip() in ("inf", "+inf") else value
    if isinstance(value, bool):
        return str(value)
    value = float(value)
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    if value == int(value) and abs(value) < 1e15 and not fixed:
        return f"{int(value):,}".replace(",", group)
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
        return f"{value:.2e}"
    return f"{value + 0.0:.4f}"


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _is_integer(value: Any) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value == int(value)
    )


def shown(value: Any) -> str:
    """A value (number, nested list or dict) on one bounded line; a list of non-integers has one format throughout."""
    if isinstance(value, dict):
        text = "; ".join(f"{key}: {shown(item)}" for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        fixed = not all(_is_integer(leaf) or isinstance(leaf, str) for leaf in _leaves(value))

        def inner(item: Any) -> str:
            if isinstance(item, (list, tuple)):
                return "[" + ", ".join(inner(i) for i in item) + "]"
            return shown(item) if isinstance(item, dict) else number(item, fixed=fixed, group=GROUP)

        text = inner(value)
    else:
        text = number(value)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip(", ;") + "…"


def raw(entry: str) -> Any:
    """The catalog value as stored (lists stay lists, dicts stay dicts)."""
    return chapter._values()[entry]


def cell(text: str) -> str:
    """Text made safe for one markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("\n", " ")


def values_markdown(ids: dict[str, bool], step: str = "") -> str:
    """The table of the chapter values one step's graders check (``ids``: id -> used by a public check); for a
    step without any, what its graders compare with instead (``step``: its id)."""
    if not ids:
        return _(NO_VALUES_FOR.get(step, NO_VALUES))
    order = list(notes())
    rows = [_(VALUES_HEAD), "|---|---|---|---|"]
    for entry in sorted(ids, key=lambda e: (order.index(e) if e in order else len(order), e)):
        note = notes().get(entry, {"section": "", "what": ""})
        value = shown(raw(entry))
        if chapter.entries().get(entry) == "MISMATCH":
            value += _(PRINTS).format(printed=note["printed"])
        hidden = "" if ids[entry] else _(HIDDEN_CHECKS)
        rows.append(f"| `{entry}` | {cell(note['section'])} | {cell(_(note['what']))}{hidden} | {cell(value)} |")
    return "\n".join(rows)


def errata_markdown() -> str:
    """The errata box: every MISMATCH entry, what the chapter printed and the correct value."""
    rows = [_(ERRATA_HEAD), "|---|---|---|---|---|"]
    for entry, status in chapter.entries().items():
        if status != "MISMATCH":
            continue
        note = notes()[entry]
        rows.append(
            f"| {cell(note['section'])} (`{entry}`) | {cell(_(note['what']))} | {cell(note['printed'])} "
            f"| {cell(shown(raw(entry)))} | {cell(_(note.get('erratum', '')))} |"
        )
    return "\n".join(rows)
