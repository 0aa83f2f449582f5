"""Hidden checks of step 8, the check against PyTorch: fresh heads and masks, and a fresh known error."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.checking import Got, Lab, expect_that
from autograder.diagnose import reference_check as torch_side

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


def _reports(reported: Got, actual: float, wrong: dict) -> None:
    """The ``max_abs_diff`` in ``reported`` is ``actual``, the difference the grader computed itself."""
    value = reported.number()
    holds = torch_side.same_difference(value, actual)
    expect_that(reported, holds, f"{actual:.6g}, the largest |attention - SDPA| the grader finds", f"{value:.6g}", value=np.asarray(value), wrong=wrong)


def _described(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None) -> str:
    return f"random float32 Q {Q.shape}, K {K.shape}, V {V.shape} and " + ("no mask" if mask is None else f"a bool mask {mask.shape}")


@pytest.mark.points(1)
def test_random_heads(lab: Lab, rng: np.random.Generator) -> None:
    """A random head: the reported difference is the grader's own, below 1e-5, and the kernel is named"""
    Q, K, V, mask = _head(rng)
    described = _described(Q, K, V, mask)
    reported, backend = lab.call("compare_with_torch", Q, K, V, mask, text=f"compare_with_torch(Q, K, V, mask) with {described}").parts("max_abs_diff", "backend")
    reported.number()  # a number, before the grader looks further
    output = lab.call("scaling.attention", Q, K, V, mask, text=f"attention(Q, K, V, mask) with {described}").parts("output", "weights")[0]
    ours = output.array(Q.shape[:-1] + V.shape[-1:])
    actual = float(np.max(np.abs(ours.astype(float) - torch_side.sdpa(Q, K, V, mask))))
    _reports(reported, actual, torch_side.compare_variants(ours, Q, K, V, mask))
    expect_that(output, actual <= torch_side.AGREE, f"within {torch_side.AGREE:g} of scaled_dot_product_attention", f"a largest difference of {actual:.3g}")
    name = backend.value
    named = {kernel for kernel in torch_side.KERNELS if isinstance(name, str) and kernel in name.lower()}
    possible = torch_side.possible_kernels(Q, K, V, mask)
    expect_that(backend, bool(named & possible), f"the name of a kernel that can run these inputs here ({' or '.join(sorted(possible))})", repr(name))


@pytest.mark.points(1)
def test_random_known_error(lab: Lab, rng: np.random.Generator) -> None:
    """With an attention that is off by a random amount at a random entry, the reported difference is that amount"""
    Q, K, V, mask = _head(rng)
    shift = np.zeros(Q.shape[:-1] + V.shape[-1:])
    entries = rng.choice(shift.size, size=min(2, shift.size), replace=False)  # a largest error and a smaller one
    shift.flat[entries] = rng.uniform(0.05, 2.0) * rng.choice([-1, 1]) * np.array([1.0, -0.5])[: len(entries)]
    where = [list(np.unravel_index(int(i), shift.shape)) for i in entries]
    added = " and ".join(f"{shift.flat[i]:.4g} at {[int(j) for j in w]}" for i, w in zip(entries, where))
    text = f"compare_with_torch(Q, K, V, mask) with {_described(Q, K, V, mask)}, while scaling.attention returns its output plus {added}"
    got = lab.probe("compare_with_shifted_attention", Q, K, V, mask, shift, text=text)
    result, seen = got.value
    reported, _ = got.with_value(result).parts("max_abs_diff", "backend")
    reported.number()  # a number, before the grader looks further
    expect_that(reported, seen is not None, "a call of attention from scaling.py", "a result computed without calling it")
    seen = got.with_value(seen).array(shift.shape)
    actual = float(np.max(np.abs(seen.astype(float) - torch_side.sdpa(Q, K, V, mask))))
    _reports(reported, actual, torch_side.compare_variants(seen, Q, K, V, mask))
