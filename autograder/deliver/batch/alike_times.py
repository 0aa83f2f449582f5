"""Timing reports alike up to a common scale: the raw times of two reports compared by their log-ratios.

A timing report (``reports/timing.json``) holds lists of raw times: the
repeats at each size of the attention sweep, the per-token latencies of the
decoder. Two honest measurements on one machine differ in every raw time by a
few per cent, each in its own direction (measured: the median deviation below);
a copied report keeps its original's pattern even when every time is
multiplied by one factor, rounded or written in another format.

So, for two reports, every list both hold (same path, same length) gives the
log-ratios ``log(a_i / b_i)``; each list's own median ratio is taken away (a
common factor per list, so a whole report or one series rescaled changes
nothing), and the *spread* of a section (``attention``, ``decoding``) is the
median absolute deviation of what is left, over all its lists. A list of
repeats at one size (a list inside a list) is compared sorted too, and the
closer of the two counts: the order of repeats means nothing, so reordering
them hides nothing. Two reports are alike when a section with at least
:data:`MIN_TIMES` raw times in common has a spread of at most :data:`SPREAD`.

Measured on 7 honest reports of the reference from one machine (2 shared
cores; the kit's own report and ``tests/data/honest_timing.json.gz``; 21
pairs): the smallest spread of any section was 0.0157 (the decoder's), the
median 0.036, so an honest pair is 7.8 times :data:`SPREAD` apart or more;
a copy multiplied by a factor or rounded to 4 digits has a spread under
0.0001, one jittered by 0.2 % per time under 0.001 (``tests/test_batch_similarity.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

SPREAD = 0.002  # a section whose log-ratios spread no more than this (0.2 %) is the same measurement
MIN_TIMES = 20  # raw times a section must share with the other report to be compared
MAX_TIMES = 100_000  # raw times read from one report; past this the rest take no part
MAX_DEPTH = 16  # levels of a report's JSON walked


@dataclass(frozen=True)
class Group:
    """The lists of one section that have one length: their paths, and their log times as rows."""

    paths: tuple[str, ...]
    logs: np.ndarray  # (lists, length)
    repeats: tuple[bool, ...]  # whether each list holds repeats at one size (a list inside a list)

    def rows(self) -> dict[str, int]:
        return {path: row for row, path in enumerate(self.paths)}


Timings = dict[str, dict[int, Group]]  # section -> list length -> its lists


def raw_lists(document: object) -> Iterator[tuple[str, tuple[float, ...], bool]]:
    """``(path, times, repeats)`` of every list of a report's JSON whose numbers are times: not booleans, at least
    one not an integer, every one finite and above zero. Iterative and bounded (:data:`MAX_DEPTH`,
    :data:`MAX_TIMES`)."""
    pending: list[tuple[tuple[str, ...], object, bool]] = [((), document, False)]
    taken = 0
    while pending:
        path, value, inside_list = pending.pop()
        if isinstance(value, dict) and len(path) < MAX_DEPTH:
            pending.extend(((*path, str(k)), v, False) for k, v in value.items())
        elif isinstance(value, list) and len(path) < MAX_DEPTH:
            numbers = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if value and len(numbers) == len(value):
                if any(isinstance(v, float) and not v.is_integer() for v in numbers) and all(
                    math.isfinite(v) and v > 0 for v in numbers
                ):
                    taken += len(numbers)
                    if taken > MAX_TIMES:
                        return
                    yield "/".join(path), tuple(float(v) for v in numbers), inside_list
            else:
                pending.extend(((*path, str(i)), v, True) for i, v in enumerate(value))


def timings(document: object) -> Timings:
    """A report's raw times by section and list length, as log times (what :func:`spreads` compares)."""
    found: dict[str, dict[int, list[tuple[str, tuple[float, ...], bool]]]] = {}
    for path, times, repeats in raw_lists(document):
        if len(times) >= 3:  # fewer: a list's own median ratio leaves nothing to compare
            found.setdefault(path.split("/")[0], {}).setdefault(len(times), []).append((path, times, repeats))
    return {
        section: {
            length: Group(
                tuple(p for p, _, _ in sorted(lists)),
                np.log(np.array([t for _, t, _ in sorted(lists)], dtype=float)),
                tuple(r for _, _, r in sorted(lists)),
            )
            for length, lists in by_length.items()
        }
        for section, by_length in found.items()
    }


def _deviations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|r - median(r)|`` per row of the log-ratios ``r = a - b``."""
    ratio = a - b
    return np.abs(ratio - np.median(ratio, axis=1, keepdims=True))


def spreads(a: Timings, b: Timings) -> dict[str, tuple[float, int]]:
    """Per section both reports hold: ``(spread, raw times compared)`` (see the module's description)."""
    found = {}
    for section in a.keys() & b.keys():
        parts = []
        for length in a[section].keys() & b[section].keys():
            mine, theirs = a[section][length], b[section][length]
            rows = theirs.rows()
            common = [(i, rows[path]) for i, path in enumerate(mine.paths) if path in rows]
            if not common:
                continue
            x = mine.logs[[i for i, _ in common]]
            y = theirs.logs[[j for _, j in common]]
            deviations = _deviations(x, y)
            order_free = np.array([mine.repeats[i] for i, _ in common])
            if order_free.any():  # repeats at one size: compared sorted too, the closer kept per list
                by_rank = _deviations(np.sort(x[order_free], axis=1), np.sort(y[order_free], axis=1))
                closer = np.median(by_rank, axis=1) < np.median(deviations[order_free], axis=1)
                rows_free = np.flatnonzero(order_free)
                deviations[rows_free[closer]] = by_rank[closer]
            parts.append(deviations.ravel())
        if parts:
            pooled = np.concatenate(parts)
            found[section] = (float(np.median(pooled)), int(pooled.size))
    return found


def alike(a: Timings, b: Timings) -> tuple[str, ...]:
    """The sections in which two reports are the same measurement (see the module's description), sorted."""
    return tuple(sorted(s for s, (spread, count) in spreads(a, b).items() if count >= MIN_TIMES and spread <= SPREAD))
