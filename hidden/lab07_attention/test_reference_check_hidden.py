"""Hidden checks of step 8, the check against PyTorch: fresh heads and masks, and a fresh known error."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.i18n import _
from autograder.judge import messages
from autograder.judge.checking import Lab
from autograder.judge.checks.reference_check import agrees_with_torch, names_a_kernel, reports_known_error
from autograder.judge.oracle import Oracle

pytestmark = pytest.mark.step("reference_check")


def _head(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """A random float32 head with random batch axes and widths, and a mask that leaves every row a key (or none)."""
    batch = tuple(int(b) for b in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    n_q, d_k, d_v = (int(v) for v in rng.integers(1, 8, size=3))
    n_k = n_q + int(rng.integers(0, 4))
    Q, K, V = (rng.normal(size=(*batch, n, d)).astype(np.float32) for n, d in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
    kind = rng.integers(0, 3)
    if kind == 0:
        return Q, K, V, None
    if kind == 1:
        return Q, K, V, np.tril(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q)
    mask = rng.random((n_q, n_k)) < 0.6
    mask[np.arange(n_q), rng.integers(0, n_k, size=n_q)] = True
    return Q, K, V, mask


def _described(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None) -> str:
    """The inputs in words, in the active language."""
    masked = _("no mask") if mask is None else _("a bool mask {shape}").format(shape=mask.shape)
    return _("random float32 Q {q}, K {k}, V {v} and {mask}").format(q=Q.shape, k=K.shape, v=V.shape, mask=masked)


@pytest.mark.points(1)
def test_random_heads(lab: Lab, oracle: Oracle, rng: np.random.Generator) -> None:
    """A random head: the reported difference is the grader's own, below 1e-5, and the kernel is named"""
    Q, K, V, mask = _head(rng)
    names_a_kernel(oracle, agrees_with_torch(lab, oracle, Q, K, V, mask, _described(Q, K, V, mask)), Q, K, V, mask)


@pytest.mark.points(1)
def test_random_known_error(lab: Lab, oracle: Oracle, rng: np.random.Generator) -> None:
    """With an attention that is off by a random amount at a random entry, the reported difference is that amount"""
    Q, K, V, mask = _head(rng)
    shift = np.zeros(Q.shape[:-1] + V.shape[-1:])
    entries = rng.choice(shift.size, size=min(2, shift.size), replace=False)  # a largest error and a smaller one
    shift.flat[entries] = rng.uniform(0.05, 2.0) * rng.choice([-1, 1]) * np.array([1.0, -0.5])[: len(entries)]
    where = [list(np.unravel_index(int(i), shift.shape)) for i in entries]
    added = [
        _(messages.AT_ENTRY).format(value=f"{shift.flat[i]:.4g}", where=[int(j) for j in w])
        for i, w in zip(entries, where)
    ]
    text = _("{call} with {inputs}, while scaling.attention returns its output plus {shift}").format(
        call="compare_with_torch(Q, K, V, mask)",
        inputs=_described(Q, K, V, mask),
        shift=_("{first} and {second}").format(first=added[0], second=added[1]) if len(added) == 2 else added[0],
    )
    reports_known_error(lab, oracle, Q, K, V, mask, shift, text)
