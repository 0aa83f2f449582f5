"""How each language's chapter writes a number in prose, and the check that a translation follows it.

The kit's English writes 0.4230 and 50,257. Each course text writes numbers its own way, and a translation's
prose follows its own chapter (decided from the source texts):

- ``tr``: the Turkish chapter writes decimal commas and thousands dots (0,4230; 50.257).
- ``id``: the Indonesian lab writes thousands dots ("lebar 12.288, dan konteks 2.048 token") and prints no
  decimal; Indonesian writes the decimal comma that goes with the dot (0,4230; 12.288).
- ``ru``: the Russian chapter writes decimal points (0.014166, 0.731059) and commas only between a vector's
  entries ([0,6], [1,3]); so a decimal point, and thousands ungrouped or apart by a no-break space
  (0.4230; 50257 or 50 257), never a comma.

Code, the values the graders compute and print, and quotes of a chapter stay as they are in every language:
a translation may always copy a number from the English. Standard library only (a leaf, like the package).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class NumberStyle:
    """A language's decimal mark and the thousands separators its prose may use."""

    decimal: str
    groups: tuple[str, ...]


ENGLISH = NumberStyle(".", (",",))
STYLES = {
    "en": ENGLISH,
    "tr": NumberStyle(",", (".",)),
    "id": NumberStyle(",", (".",)),
    "ru": NumberStyle(".", ("", "\u00a0", "\u202f")),
}
# A number as English writes it: thousands groups of three after a comma, then decimals after a point.
ENGLISH_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|[.,]\d)")
NUMBER = re.compile(r"(?<![\w.,\u00a0\u202f])\d+(?:[.,\u00a0\u202f]\d+)*(?![\w])")
# A number of the English with letters glued after it (a quoted "38,6M"): the translation may copy it.
GLUED = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?=[A-Za-z])")


def style(lang: str) -> NumberStyle:
    """The number style of ``lang`` (English's for a language not listed)."""
    return STYLES.get(lang, ENGLISH)


def written(english: str, lang: str) -> set[str]:
    """Every way ``lang``'s prose may write the number ``english`` (as English writes it), itself included."""
    match = ENGLISH_NUMBER.fullmatch(english)
    if match is None:
        return {english}
    whole, decimals = match.group(1), match.group(2)
    wanted = style(lang)
    forms = {english}
    for group in wanted.groups:
        text = whole.replace(",", group)
        forms.add(text + (wanted.decimal + decimals if decimals else ""))
    return forms


def foreign_numbers(english: str, translation: str, lang: str) -> list[str]:
    """The numbers of ``translation`` written neither as in ``english`` nor in ``lang``'s style of one of its
    numbers (``[]`` when the translation follows its chapter)."""
    # "4th" gives "4." its 4; "'38,6M'" (a quote with its unit glued on) gives "38,6".
    allowed = set(NUMBER.findall(english)) | set(re.findall(r"\d+", english)) | set(GLUED.findall(english))
    for number in list(allowed):
        for part in ENGLISH_NUMBER.finditer(number):
            allowed |= written(part.group(0), lang)
    return [number for number in NUMBER.findall(translation) if number not in allowed]
