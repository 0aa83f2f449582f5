"""The shapes of probe replies the grader reads, as small predicates (a leaf: standard library only).

A probe's reply comes from the student's process, where any code can change what the probe returns: a reply of
another shape than its probe gives (a forged one) must cost that check, with the grader's sentence for a reply it
cannot read, never break the grader. A probe whose reply the grader takes apart by hand (indexes a dict, unpacks
a list) declares its shape with ``@probe(reply=...)``; :meth:`autograder.judge.checking.Lab.probe` checks it before any
grader code reads the reply. Replies that are only a student function's return value need none: the graders read
those through :class:`autograder.judge.checking.Got`, which checks every shape it expects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Shape = Callable[[Any], bool]


def anything(value: Any) -> bool:
    return True


def text(value: Any) -> bool:
    return isinstance(value, str)


def integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def sequence(item: Shape = anything, length: int | None = None) -> Shape:
    """A list or tuple (of ``length`` items, where given) whose every item has the shape ``item``."""

    def check(value: Any) -> bool:
        return (
            isinstance(value, (list, tuple))
            and (length is None or len(value) == length)
            and all(item(entry) for entry in value)
        )

    return check


def record(**fields: Shape) -> Shape:
    """A dict holding at least ``fields``, each of its shape (more keys are allowed)."""

    def check(value: Any) -> bool:
        return isinstance(value, dict) and all(key in value and shape(value[key]) for key, shape in fields.items())

    return check


def one_of(*choices: str) -> Shape:
    """One of the strings ``choices``."""

    def check(value: Any) -> bool:
        return isinstance(value, str) and value in choices

    return check
