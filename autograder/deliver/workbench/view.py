"""What a view of the page receives: the student's arrays, the chapter's beside them, and why any is missing.

Arrays become nested lists of numbers for JSON; JSON has no NaN or infinity,
so NaN is ``null`` and the infinities are the strings ``"inf"`` and ``"-inf"``
(the page's script reads them back). A view lists each problem once, with the
handout section of the step whose function it needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from autograder.base import tasks
from autograder.deliver.workbench.found import Found
from autograder.i18n import _
from autograder.judge import messages


def numbers(value: Any) -> Any:
    """``value`` (an array, a number, or lists and dicts of them) as JSON-able numbers; booleans stay booleans."""
    if isinstance(value, np.ndarray):
        return numbers(value.tolist())
    if isinstance(value, (list, tuple)):
        return [numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: numbers(item) for key, item in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return number
    return value


def problem(found: Found) -> dict[str, Any]:
    """One problem as the page shows it: the sentence, whether it is only work not done yet, the section to read."""
    step = tasks.step(found.step) if found.step else None
    return {
        "text": found.problem,
        "todo": found.todo,
        "section": _(step.title) if step else "",
        "link": messages.handout(step) if step else "",
    }


def problems(found: Iterable[Found]) -> list[dict[str, Any]]:
    """The problems of ``found``, each sentence once, in order."""
    seen: dict[str, dict[str, Any]] = {}
    for item in found:
        if not item.ok and item.problem not in seen:
            seen[item.problem] = problem(item)
    return list(seen.values())


def warnings(found: Iterable[Found]) -> list[str]:
    return list(dict.fromkeys(item.warning for item in found if item.ok and item.warning))


def view(yours: Mapping[str, Found], chapter: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A view's data: ``yours`` (name -> :class:`Found`; ``None`` where there is no value), the chapter's values,
    the problems and warnings, and any ``extra`` JSON-able entries."""
    return {
        "yours": {name: numbers(found.value) if found.ok else None for name, found in yours.items()},
        "chapter": {name: numbers(value) for name, value in (chapter or {}).items()},
        "problems": problems(yours.values()),
        "warnings": warnings(yours.values()),
        **{name: numbers(value) for name, value in extra.items()},
    }
