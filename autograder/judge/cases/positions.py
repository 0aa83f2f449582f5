"""Cases of the positions step: sinusoidal tables, RoPE rotations, ALiBi slopes and biases.

Two checks look at large answers (a 320 x 64 table, 56 rotated vectors) only
through a summary (the chapter's dot-product means, row norms, the scores of
rotated pairs); their snapshots keep that summary, computed the same way from
the reference and from every wrong answer, instead of the answers themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose import positions as mistakes


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class SummaryCase(Case):
    """A case whose snapshot keeps ``summary(answer)`` for the answer and every wrong answer."""

    summary: Callable[[Any], Any] = _same

    def run(self, ref, args: tuple | None = None, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
        expected, wrong = super().run(ref, args, kwargs)
        right = self.summary(expected)
        kept: dict[str, Any] = {}  # the first (simplest) of equal summaries names them; the right one names none
        for mistake, value in wrong.items():
            value = self.summary(value)
            if all(
                np.shape(value) != np.shape(v) or not np.allclose(value, v, rtol=1e-9, atol=1e-12)
                for v in [right, *kept.values()]
            ):
                kept[mistake] = value
        return right, kept


# The chapter's table of PE_p . PE_{p+k}: d = 64, p = 0 .. 255, these offsets k.
DOT_OFFSETS = (0, 1, 2, 4, 8, 16, 32, 64)
DOT_STARTS = 256
DOT_WIDTH = 64
DOT_ROWS = DOT_STARTS + max(DOT_OFFSETS)


def dot_products(PE: np.ndarray) -> np.ndarray:
    """``PE_p . PE_{p+k}`` for every offset ``k`` (rows) and start ``p = 0 .. 255`` (columns), in float64."""
    PE = np.asarray(PE, dtype=float)
    return np.stack([np.einsum("pd,pd->p", PE[:DOT_STARTS], PE[k : k + DOT_STARTS]) for k in DOT_OFFSETS])


def dot_means(PE: np.ndarray) -> np.ndarray:
    """The mean over ``p`` of ``PE_p . PE_{p+k}`` for each offset ``k``."""
    return dot_products(PE).mean(axis=1)


def row_norms(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.asarray(x, dtype=float), axis=-1)


# The chapter's RoPE table: a fixed q and k (d = 64), the key at start m, the query `shift` tokens later.
ROPE_STARTS = (0, 100, 1000, 5000)
ROPE_SHIFTS = tuple(int(shift) for shift in chapter.value("T745-rope")["example_seed0_scores"])
_q_k = np.random.default_rng(0)  # the catalog's draw: q, then k, N(0, 1)
ROPE_Q, ROPE_K = _q_k.normal(size=64), _q_k.normal(size=64)
_PAIRS = [(m + s, m) for m in ROPE_STARTS for s in ROPE_SHIFTS]  # (query position, key position)
ROPE_PAIR_X = np.vstack([np.tile(ROPE_Q, (len(_PAIRS), 1)), np.tile(ROPE_K, (len(_PAIRS), 1))])  # (2 * pairs, 64)
ROPE_PAIR_POSITIONS = np.array([q for q, _ in _PAIRS] + [k for _, k in _PAIRS])


def pair_scores(rotated: np.ndarray) -> np.ndarray:
    """Raw scores ``rope(q) . rope(k)`` of the rotated pairs, ``[len(ROPE_STARTS), len(ROPE_SHIFTS)]``, in float64."""
    rotated = np.asarray(rotated, dtype=float)
    queries, keys = rotated[: len(_PAIRS)], rotated[len(_PAIRS) :]
    return np.einsum("nd,nd->n", queries, keys).reshape(len(ROPE_STARTS), len(ROPE_SHIFTS))


def angle_scale(max_position: float, d: int, base: float = 10000.0, pair_sizes: np.ndarray | None = None) -> float:
    """The size of the angles behind a dot product of rotated (or encoded) vectors, for :func:`rounding_limit`.

    A correct float32 computation rounds each angle ``p * base**(-2i/d)`` to a
    relative ``eps``, so a dot product of two such vectors can be off by about
    ``eps * max_position * sum_i w_i base**(-2i/d)``, ``w_i`` the product of the
    two vectors' lengths in pair ``i`` (1 for a sinusoidal table's rows).
    This is that sum times ``max_position``.
    """
    theta = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    weights = np.ones_like(theta) if pair_sizes is None else np.asarray(pair_sizes, dtype=float)
    return float(max_position * np.sum(weights * theta))


def pair_lengths(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``|q_i| |k_i|`` for each pair ``(2i, 2i+1)`` of two vectors (``[d/2]``)."""
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    return np.hypot(q[0::2], q[1::2]) * np.hypot(k[0::2], k[1::2])


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260704)  # public, fixed: hidden checks draw their own
    return {
        "x48": rng.normal(size=(4, 8)),
        "x258": rng.normal(size=(2, 5, 8)),
        "x36": rng.normal(size=(3, 6)),
        "x616": rng.normal(size=(6, 16)),
    }


INPUTS = _rng_inputs()
NORM_POSITIONS = np.array([0, 3, 17, 100, 1000, 5000])

CASES: tuple[Case, ...] = (
    Case("pe_3_4", "positions", "sinusoidal_encoding", (3, 4), mistakes.sinusoidal_variants),
    Case("pe_20_16", "positions", "sinusoidal_encoding", (20, 16), mistakes.sinusoidal_variants),
    Case("pe_5_6_base100", "positions", "sinusoidal_encoding", (5, 6, 100.0), mistakes.sinusoidal_variants),
    SummaryCase(
        "pe_dots_64",
        "positions",
        "sinusoidal_encoding",
        (DOT_ROWS, DOT_WIDTH),
        mistakes.sinusoidal_variants,
        summary=dot_means,
    ),
    SummaryCase(
        "pe_norms_64",
        "positions",
        "sinusoidal_encoding",
        (DOT_STARTS, DOT_WIDTH),
        mistakes.sinusoidal_variants,
        summary=row_norms,
    ),
    Case(
        "rope_unit", "positions", "rope", (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1, 2])), mistakes.rope_variants
    ),
    Case("rope_4_8", "positions", "rope", (INPUTS["x48"], np.arange(4)), mistakes.rope_variants),
    Case("rope_batch", "positions", "rope", (INPUTS["x258"], np.arange(3, 8)), mistakes.rope_variants),
    Case("rope_base100", "positions", "rope", (INPUTS["x36"], np.array([0, 5, 40]), 100.0), mistakes.rope_variants),
    SummaryCase(
        "rope_norms", "positions", "rope", (INPUTS["x616"], NORM_POSITIONS), mistakes.rope_variants, summary=row_norms
    ),
    SummaryCase(
        "rope_scores",
        "positions",
        "rope",
        (ROPE_PAIR_X, ROPE_PAIR_POSITIONS),
        mistakes.rope_variants,
        summary=pair_scores,
    ),
    Case("alibi_slopes_8", "positions", "alibi_slopes", (8,), mistakes.alibi_slopes_variants),
    Case("alibi_slopes_4", "positions", "alibi_slopes", (4,), mistakes.alibi_slopes_variants),
    Case("alibi_slopes_16", "positions", "alibi_slopes", (16,), mistakes.alibi_slopes_variants),
    Case("alibi_slopes_5", "positions", "alibi_slopes", (5,), mistakes.alibi_slopes_variants),
    Case("alibi_6", "positions", "alibi_bias", (6, 0.5), mistakes.alibi_bias_variants),
)
