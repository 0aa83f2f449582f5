"""The warm grader's generic request handler: the request is the engine's options themselves, as JSON.

``attnlab grade-batch`` and the Gradescope runner decide everything (folders,
seed, limits) before they send a request, so the worker only decodes it
(:func:`request_for` and :func:`options` are each other's inverse, through
:mod:`autograder.grading.serialize`).
"""

from __future__ import annotations

from typing import Any

from autograder import i18n
from autograder.grading import serialize
from autograder.grading.engine import GradeOptions

HANDLER = __name__
LANG = "lang"  # the feedback's language, beside the options (absent: English)


def request_for(options: GradeOptions, lang: str | None = None) -> dict[str, Any]:
    """The request that grades with ``options``, its feedback in ``lang`` (English when None)."""
    request = serialize.encode(options)
    return {**request, LANG: lang} if lang else request


def prepare(request: dict[str, Any]) -> None:
    """Before grading: the request's language (English when it names none or one the kit does not ship)."""
    i18n.activate(i18n.choose_or_source(request[LANG]) if request.get(LANG) else i18n.SOURCE)


def options(request: dict[str, Any]) -> GradeOptions:
    """The options a :func:`request_for` request names; :class:`~autograder.grading.serialize.FormatError` (a
    ValueError) when it names none."""
    return serialize.decode(GradeOptions, {key: value for key, value in request.items() if key != LANG})
