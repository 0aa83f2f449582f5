"""The chapter's values, recomputed, as committed in ``data/chapter_values.json``.

Graders read expected numbers from here by catalog id (``T72-A``, ``RU-dQ``,
...). The file is a copy of the course's values catalog; the kit never needs
the original to run or test.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

DATA = "chapter_values.json"


@lru_cache(maxsize=1)
def _values() -> dict[str, Any]:
    return json.loads(resources.files("autograder.data").joinpath(DATA).read_text(encoding="utf-8"))


def value(entry: str) -> Any:
    """The recomputed value of catalog entry ``entry`` (arrays as float arrays)."""
    raw = _values()[entry]
    try:
        return np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        return raw


def status(entry: str) -> str:
    """MATCH, MISMATCH, NOT-REPRODUCIBLE or COMPUTED-ONLY."""
    return _values()["_status"][entry]


def entries() -> dict[str, str]:
    """Every catalog id with its status."""
    return dict(_values()["_status"])


def ids() -> set[str]:
    """Every id with a value (catalog entries and the extra arrays recomputed beside them)."""
    return {key for key in _values() if not key.startswith("_")}


def inputs(name: str) -> np.ndarray:
    """One of the chapter's input matrices (``X``, ``WQ``, ``RU_Q``, ...)."""
    return np.asarray(_values()["_inputs"][name], dtype=float)


def tokens() -> list[str]:
    return list(_values()["_inputs"]["tokens"])
