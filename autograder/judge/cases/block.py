"""Cases of the block step: the chapter's two heads, W_O, LayerNorm, the FFN and the worked block.

A head whose value projection is ``READOUT`` (with ``X @ READOUT = I``) has
``V = I``, so its output is its attention matrix: that is how the checks read
attention weights through ``multi_head``.
"""

from __future__ import annotations

import numpy as np

from autograder.base import chapter
from autograder.judge.cases import Case
from autograder.judge.diagnose import block as block_mistakes

X = chapter.inputs("X")
HEAD1 = tuple(chapter.inputs(n) for n in ("WQ", "WK", "WV"))
HEAD2 = tuple(chapter.inputs(n) for n in ("WQ2", "WK2", "WV2"))
W_O, W1, b1, W2, b2 = (chapter.inputs(n) for n in ("WO", "W1", "b1", "W2", "b2"))
READOUT = np.linalg.pinv(X)  # (4, 3): X @ READOUT = I_3
RESIDUAL = chapter.value("T735-residual")
LN_TABLE = chapter.value("T735-LN")
CONSTANT_ROW = np.array([0.9, -0.7])  # the chapter's row 4 for W^K (key side) and W^Q (query side)


def with_row4(W: np.ndarray, row: np.ndarray) -> np.ndarray:
    """``W`` with its fourth row (the constant 0.5 feature of X) replaced by ``row``."""
    W = np.array(W, dtype=float)
    W[3] = row
    return W


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260709)  # public, fixed: hidden checks draw their own
    d_model, d_ff = 6, 10
    return {
        "X": rng.normal(size=(2, 5, d_model)),
        "heads": [tuple(rng.normal(size=(d_model, d)) * 0.7 for d in (3, 3, 2)) for _ in range(3)],
        "W_O": rng.normal(size=(6, d_model)) * 0.5,
        "W1": rng.normal(size=(d_model, d_ff)) * 0.5,
        "b1": rng.normal(size=d_ff) * 0.3,
        "W2": rng.normal(size=(d_ff, d_model)) * 0.5,
        "b2": rng.normal(size=d_model) * 0.3,
        "x_small": rng.normal(size=(3, 4, 5))
        * rng.uniform(0.005, 0.05, size=(3, 4, 1)),  # rows of small variance: eps shows
    }


INPUTS = _rng_inputs()
RANDOM_BLOCK = (INPUTS["X"], INPUTS["heads"], INPUTS["W_O"], INPUTS["W1"], INPUTS["b1"], INPUTS["W2"], INPUTS["b2"])


CASES: tuple[Case, ...] = (
    Case(
        "block_head2_weights",
        "block",
        "multi_head",
        (X, [(HEAD2[0], HEAD2[1], READOUT)], np.eye(3)),
        block_mistakes.multi_head_variants,
    ),
    Case("block_concat", "block", "multi_head", (X, [HEAD1, HEAD2], np.eye(4)), block_mistakes.multi_head_variants),
    Case("block_multi_head", "block", "multi_head", (X, [HEAD1, HEAD2], W_O), block_mistakes.multi_head_variants),
    Case(
        "block_key_side",
        "block",
        "multi_head",
        (X, [(HEAD1[0], with_row4(HEAD1[1], CONSTANT_ROW), READOUT)], np.eye(3)),
        block_mistakes.multi_head_variants,
    ),
    Case(
        "block_query_side",
        "block",
        "multi_head",
        (X, [(with_row4(HEAD1[0], CONSTANT_ROW), HEAD1[1], READOUT)], np.eye(3)),
        block_mistakes.multi_head_variants,
    ),
    Case(
        "block_value_side",
        "block",
        "multi_head",
        (X, [(HEAD1[0], HEAD1[1], with_row4(HEAD1[2], [0.0, 0.0]))], np.eye(2)),
        block_mistakes.multi_head_variants,
    ),
    Case("block_head1", "block", "multi_head", (X, [HEAD1], np.eye(2)), block_mistakes.multi_head_variants),
    Case(
        "block_exercise5",
        "block",
        "multi_head",
        (X, [(HEAD1[0] / np.sqrt(3), HEAD1[1] / np.sqrt(3), READOUT)], np.eye(3)),
        block_mistakes.multi_head_variants,
    ),
    Case(
        "block_random_multi_head",
        "block",
        "multi_head",
        (INPUTS["X"], INPUTS["heads"], INPUTS["W_O"]),
        block_mistakes.multi_head_variants,
    ),
    Case(
        "block_residual",
        "block",
        "block",
        (X, [HEAD1, HEAD2], W_O, W1, b1, np.zeros((8, 4)), b2),
        block_mistakes.block_variants,
    ),
    Case(
        "block_pass_through",
        "block",
        "block",
        (X, [HEAD1, HEAD2], np.zeros((4, 4)), W1, b1, np.zeros((8, 4)), np.zeros(4)),
        block_mistakes.block_variants,
    ),
    Case("block_layer_norm", "block", "layer_norm", (RESIDUAL,), block_mistakes.layer_norm_variants),
    Case("block_layer_norm_tokens", "block", "layer_norm", (X,), block_mistakes.layer_norm_variants),
    Case("block_rms_norm", "block", "rms_norm", (RESIDUAL,), block_mistakes.rms_norm_variants),
    Case("block_rms_norm_small", "block", "rms_norm", (INPUTS["x_small"],), block_mistakes.rms_norm_variants),
    Case(
        "block_detectors",
        "block",
        "feed_forward",
        (LN_TABLE, W1, b1, np.eye(8), np.zeros(8)),
        block_mistakes.feed_forward_variants,
    ),
    Case("block_worked", "block", "block", (X, [HEAD1, HEAD2], W_O, W1, b1, W2, b2), block_mistakes.block_variants),
    Case("block_random", "block", "block", RANDOM_BLOCK, block_mistakes.block_variants),
)
