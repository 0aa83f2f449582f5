"""The fixed inputs of the public checks, and the snapshot of their answers.

Students have no reference solution, yet a public check should still name a
known mistake. So for every fixed input here the snapshot file
``data/lab07_snapshot.npz`` holds the reference's answer and every known
wrong answer, generated from the reference by ``attnlab snapshot``; a kit test
fails when the file is stale. Hidden checks compute the same things live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from io import BytesIO
from typing import Any, Callable

import numpy as np

from autograder import chapter
from autograder.diagnose import mask as mask_mistakes
from autograder.diagnose import scaling as scaling_mistakes
from autograder.diagnose import softmax as softmax_mistakes

SNAPSHOT = "lab07_snapshot.npz"


@dataclass(frozen=True)
class Case:
    """``module.function(*args)`` on fixed inputs, with the wrong answers to recognise."""

    name: str
    module: str
    function: str
    args: tuple
    variants: Callable[..., dict[str, Any]] | None = None
    kwargs: dict = field(default_factory=dict)

    def run(self, ref) -> tuple[Any, dict[str, Any]]:
        """The reference's answer and the wrong answers, for the snapshot."""
        expected = getattr(getattr(ref, self.module), self.function)(*self.args, **self.kwargs)
        wrong = self.variants(ref, *self.args, **self.kwargs) if self.variants else {}
        return expected, wrong


def _rng_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260701)  # public, fixed: hidden checks draw their own
    return {
        "x_batch": rng.normal(size=(2, 3, 5)) * 3,
        "Qb": rng.normal(size=(2, 3, 4, 5)),
        "Kb": rng.normal(size=(2, 3, 6, 5)),
        "Vb": rng.normal(size=(2, 3, 6, 7)),
        "Q6": rng.normal(size=(6, 4)),
        "K6": rng.normal(size=(6, 4)),
        "V6": rng.normal(size=(6, 3)),
        "Q2": rng.normal(size=(2, 4)),
        "K5": rng.normal(size=(5, 4)),
        "V5": rng.normal(size=(5, 3)),
        "S45": rng.normal(size=(4, 5)),
    }


INPUTS = _rng_inputs()
X, W_Q, W_K, W_V = (chapter.inputs(n) for n in ("X", "WQ", "WK", "WV"))
Q_CH, K_CH, V_CH = X @ W_Q, X @ W_K, X @ W_V
CAUSAL3 = np.tril(np.ones((3, 3), dtype=bool))
CAUSAL6 = np.tril(np.ones((6, 6), dtype=bool))
CAUSAL25 = np.tril(np.ones((2, 5), dtype=bool), k=3)


def _causal_variants(ref, n_q, n_k=None):
    return mask_mistakes.causal_mask_variants(n_q, n_k)


def _apply_variants(ref, scores, mask):
    return mask_mistakes.apply_mask_variants(scores, mask)


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case("softmax_worked", "softmax", "softmax", (chapter.value("T72-scaled"),), softmax_mistakes.softmax_variants),
        Case("softmax_batch", "softmax", "softmax", (INPUTS["x_batch"],), softmax_mistakes.softmax_variants),
        Case("softmax_batch_axis0", "softmax", "softmax", (INPUTS["x_batch"], 0), softmax_mistakes.softmax_variants),
        Case("softmax_large", "softmax", "softmax", (INPUTS["x_batch"] + 1000.0,), softmax_mistakes.softmax_variants),
        Case("project_worked", "scaling", "project", (X, W_Q, W_K, W_V), scaling_mistakes.project_variants),
        Case("scores_worked", "scaling", "scores", (Q_CH, K_CH), scaling_mistakes.scores_variants),
        Case("scaled_worked", "scaling", "scaled_scores", (Q_CH, K_CH), scaling_mistakes.scaled_scores_variants),
        Case("attention_worked", "scaling", "attention", (Q_CH, K_CH, V_CH), scaling_mistakes.attention_variants),
        Case("attention_batch", "scaling", "attention", (INPUTS["Qb"], INPUTS["Kb"], INPUTS["Vb"]), scaling_mistakes.attention_variants),
        Case("causal_4", "mask", "causal_mask", (4,), _causal_variants),
        Case("causal_2_5", "mask", "causal_mask", (2, 5), _causal_variants),
        Case("apply_mask_25", "mask", "apply_mask", (INPUTS["S45"][:2], CAUSAL25), _apply_variants),
        Case("masked_worked", "scaling", "attention", (Q_CH, K_CH, V_CH, CAUSAL3), mask_mistakes.masked_attention_variants),
        Case("masked_6", "scaling", "attention", (INPUTS["Q6"], INPUTS["K6"], INPUTS["V6"], CAUSAL6), mask_mistakes.masked_attention_variants),
        Case("masked_2_5", "scaling", "attention", (INPUTS["Q2"], INPUTS["K5"], INPUTS["V5"], CAUSAL25), mask_mistakes.masked_attention_variants),
    )
}


def _flatten(prefix: str, value: Any, into: dict[str, np.ndarray]) -> None:
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            _flatten(f"{prefix}/{index}", item, into)
    else:
        into[prefix] = np.asarray(value)


def build_snapshot(ref) -> dict[str, np.ndarray]:
    """Every case's expected and wrong answers, flattened to named arrays."""
    arrays: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for case in CASES.values():
            expected, wrong = case.run(ref)
            _flatten(f"{case.name}/expected", expected, arrays)
            for mistake, value in wrong.items():
                _flatten(f"{case.name}/{mistake}", value, arrays)
    return arrays


def snapshot_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = BytesIO()
    np.savez_compressed(buffer, **dict(sorted(arrays.items())))
    return buffer.getvalue()


@lru_cache(maxsize=1)
def _snapshot() -> dict[str, np.ndarray]:
    raw = resources.files("autograder.data").joinpath(SNAPSHOT).read_bytes()
    with np.load(BytesIO(raw), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def expected(case: str, part: int | None = None) -> np.ndarray:
    """The reference's answer to a case (``part`` picks from a returned tuple)."""
    key = f"{case}/expected" + (f"/{part}" if part is not None else "")
    return _snapshot()[key]


def wrong(case: str, part: int | None = None) -> dict[str, np.ndarray]:
    """The known wrong answers to a case, by mistake id."""
    suffix = f"/{part}" if part is not None else ""
    found = {}
    for key, value in _snapshot().items():
        name, _, rest = key.partition("/")
        mistake, _, tail = rest.partition("/")
        if name == case and mistake != "expected" and (f"/{tail}" if tail else "") == suffix:
            found[mistake] = value
    return found
