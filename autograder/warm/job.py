"""The warm grader's generic request handler: the request is the engine's options themselves, as JSON.

``attnlab grade-batch`` and the Gradescope runner decide everything (folders,
seed, limits) before they send a request, so the worker only decodes it
(:func:`request_for` and :func:`options` are each other's inverse, through
:mod:`autograder.report.serialize`).
"""

from __future__ import annotations

from typing import Any

from autograder.engine import GradeOptions
from autograder.report import serialize

HANDLER = __name__


def request_for(options: GradeOptions) -> dict[str, Any]:
    """The request that grades with ``options``."""
    return serialize.encode(options)


def options(request: dict[str, Any]) -> GradeOptions:
    """The options a :func:`request_for` request names; :class:`~autograder.report.serialize.FormatError` (a
    ValueError) when it names none."""
    return serialize.decode(GradeOptions, request)
