"""Mistakes of no one step: the generic ones a relation between answers can name by itself."""

from __future__ import annotations

from autograder.judge.diagnose import Mistake
from autograder.judge.diagnose.relations import HALF_PRECISION

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            HALF_PRECISION,
            "part of the computation is rounded to half precision (bfloat16 or float16 keep 8 or 11 bits, tables "
            "of cos and sin included); compute in float32 or float64 and cast at the end if you must",
        ),
    )
}
