"""What a renderer needs to draw a check: the expected and the returned array, and what their axes mean.

A failed array check (:func:`autograder.judge.checking.expect_close`) carries its
:class:`Evidence` in its result, so the HTML report and the notebook feedback
can show expected, returned and their difference as heatmaps. A check may
also *exhibit* a value it passed (the student's attention weights on the
worked example), recorded through :data:`RECORDER` while the check runs.

Arrays cross to JSON as base64 ``.npy`` bytes (exact dtype, shape, ``inf``
and ``NaN`` kept; read back with ``allow_pickle=False``). This module is a
leaf: numpy, the standard library and :mod:`autograder.i18n` (itself a leaf) only.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

import numpy as np

from autograder.i18n import N_

MAX_ENTRIES = 4096  # larger arrays are not kept: a heatmap of them would not be read anyway
WORKED_EXAMPLE = "worked_example"  # the exhibit of the chapter's kedi / sütü / içti attention weights
# The axes of an attention-weight or score matrix: rows are the querying tokens, columns the keys they attend to.
QUERY_POSITION, KEY_POSITION = N_("query position"), N_("key position")
ATTENTION_AXES = (QUERY_POSITION, KEY_POSITION)


@dataclass(frozen=True, eq=False)
class Evidence:
    """The arrays of one array check, and the words for their axes (already in the report's language)."""

    call: str  # the call that produced ``got``, as the message names it
    expected: np.ndarray
    got: np.ndarray
    axes: tuple[str, ...] = ()  # one label per axis, e.g. ("query position", "key position")
    ticks: tuple[tuple[str, ...], ...] = ()  # tick labels per axis, e.g. the worked example's tokens
    exhibit: str = ""  # "" for a failed check; WORKED_EXAMPLE for the worked example's weights
    passed: bool = field(default=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Evidence):
            return NotImplemented
        return (
            (self.call, self.axes, self.ticks, self.exhibit, self.passed)
            == (other.call, other.axes, other.ticks, other.exhibit, other.passed)
            and _same(self.expected, other.expected)
            and _same(self.got, other.got)
        )

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict:
        """A JSON-ready dict (arrays as base64 ``.npy``)."""
        return {
            "call": self.call,
            "expected": array_to_text(self.expected),
            "got": array_to_text(self.got),
            "axes": list(self.axes),
            "ticks": [list(t) for t in self.ticks],
            "exhibit": self.exhibit,
            "passed": self.passed,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Evidence:
        return cls(
            call=str(data["call"]),
            expected=array_from_text(data["expected"]),
            got=array_from_text(data["got"]),
            axes=tuple(str(a) for a in data.get("axes", ())),
            ticks=tuple(tuple(str(t) for t in ticks) for ticks in data.get("ticks", ())),
            exhibit=str(data.get("exhibit", "")),
            passed=bool(data.get("passed", False)),
        )


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def array_to_text(array: np.ndarray) -> str:
    """``array`` as base64 ``.npy`` bytes."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def array_from_text(text: str) -> np.ndarray:
    """The array :func:`array_to_text` wrote (never unpickles)."""
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


def keepable(*arrays: np.ndarray) -> bool:
    """Whether arrays this size are worth keeping for a picture (numeric, at most :data:`MAX_ENTRIES` entries)."""
    return all(a.dtype.kind in "biuf" and 0 < a.size <= MAX_ENTRIES for a in arrays)


class Recorder:
    """Collects the evidence a check exhibits while it runs (the engine clears it before each check)."""

    def __init__(self) -> None:
        self._items: list[Evidence] = []

    def clear(self) -> None:
        self._items.clear()

    def record(self, evidence: Evidence) -> None:
        self._items.append(evidence)

    def last(self) -> Evidence | None:
        return self._items[-1] if self._items else None


RECORDER = Recorder()
