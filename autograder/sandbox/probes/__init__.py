"""Probes: small trusted routines that run *inside* the child around student code.

A plain function call needs no probe (the client's ``call`` does it). A probe
is for checks that must hand student code something that cannot cross the
process boundary (callables that record how they were called, a cache object
to drive step by step) and bring back only arrays, numbers and strings. Each
probe takes ``load`` (the student-module importer) first, then the decoded
arguments. Every module of this package is imported here, before any student
code runs; probe names are unique across modules.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Any

from autograder.sandbox.replies import Shape

Load = Callable[[str], ModuleType]
PROBES: dict[str, Callable[..., Any]] = {}
REPLIES: dict[str, Shape] = {}  # the shape of the reply of each probe that declares one (autograder.sandbox.replies)


def probe(
    function: Callable[..., Any] | None = None, *, reply: Shape | None = None
) -> Callable[..., Any] | Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``function`` under its own name (``@probe``), with the shape of its reply (``@probe(reply=...)``),
    which the grader checks before it reads the reply."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        if function.__name__ in PROBES:
            raise ValueError(f"probe {function.__name__!r} is defined twice")
        PROBES[function.__name__] = function
        if reply is not None:
            REPLIES[function.__name__] = reply
        return function

    return register(function) if function is not None else register


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
