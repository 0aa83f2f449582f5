"""Every known mistake of every step, by id (ids are unique across steps)."""

from __future__ import annotations

from autograder.diagnose import Mistake
from autograder.diagnose import mask, scaling, softmax

MISTAKES: dict[str, Mistake] = {}
for _module in (softmax, scaling, mask):
    for _id, _mistake in _module.MISTAKES.items():
        if MISTAKES.get(_id, _mistake) != _mistake:
            raise ValueError(f"mistake id {_id!r} is defined twice with different texts")
        MISTAKES[_id] = _mistake
