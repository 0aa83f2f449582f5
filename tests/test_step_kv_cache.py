"""The graders of the KV cache step: full marks, zero, each known mistake diagnosed, and the probes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from autograder.base import tasks
from autograder.base.reference import Reference
from autograder.judge.cases import kv_cache as kv_cases
from autograder.judge.diagnose import kv_cache as kv_mistakes
from autograder.sandbox.client import Sandbox
from autograder.sandbox.protocol import AsTorch
from tests import kit
from tests.kit import Variant

STEP = "kv_cache"

VARIANTS = (
    Variant(
        "attend_before_append",
        STEP,
        "kv_cache",
        "    cache.append(k_t, v_t)\n    K, V = cache.keys, cache.values",
        "    K, V = cache.keys, cache.values\n    cache.append(k_t, v_t)",
        "attend_before_append",
    ),
    Variant(
        "cache_keeps_last_only",
        STEP,
        "kv_cache",
        "self._keys = torch.cat([self._keys, k], dim=-2)  # (..., n_cached + t, d_k)\n            "
        "self._values = torch.cat([self._values, v], dim=-2)",
        "self._keys, self._values = k, v",
        "cache_keeps_last_only",
    ),
    Variant(
        "kv_missing_factor_two",
        STEP,
        "kv_cache",
        "per_token = 2 * n_layers",
        "per_token = n_layers",
        "kv_missing_factor_two",
    ),
    Variant(
        "cache_joined_on_batch_axis",
        "kv_cache",
        "kv_cache",
        (
            "            self._keys = torch.cat([self._keys, k], dim=-2)  # (..., n_cached + t, d_k)\n"
            "            self._values = torch.cat([self._values, v], dim=-2)  # (..., n_cached + t, d_v)\n"
        ),
        (
            "            self._keys = torch.cat([self._keys, k], dim=0)\n"
            "            self._values = torch.cat([self._values, v], dim=0)\n"
        ),
        "cache_wrong_axis",
    ),
    Variant(
        "bytes_heads_twice",
        "kv_cache",
        "kv_cache",
        "    per_token = 2 * n_layers * n_kv_heads * d_head * bytes_per_value  # K and V: the factor 2\n",
        "    per_token = 2 * n_layers * n_kv_heads * (n_kv_heads * d_head) * bytes_per_value\n",
        "kv_bytes_extra_heads_factor",
    ),
    Variant(
        "bytes_in_bits",
        "kv_cache",
        "kv_cache",
        "    per_token = 2 * n_layers * n_kv_heads * d_head * bytes_per_value  # K and V: the factor 2\n",
        "    per_token = 8 * 2 * n_layers * n_kv_heads * d_head * bytes_per_value\n",
        "kv_bytes_bits",
    ),
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_known_mistake_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path, public_only=True)


IN_PLACE_CACHE = '''
import torch


class KVCache:
    """Grows its tensors in place and has keys() and values() as methods."""

    def __init__(self):
        self._k = self._v = None

    def append(self, k, v):
        if self._k is None:
            self._k, self._v = k.clone(), v.clone()
        else:
            self._k.data = torch.cat([self._k, k], dim=-2)
            self._v.data = torch.cat([self._v, v], dim=-2)

    def keys(self):
        return self._k

    def values(self):
        return self._v

    def __len__(self):
        return self._k.shape[-2]
'''


def test_append_probe_reads_methods_and_copies(tmp_path: Path) -> None:
    (tmp_path / "kv_cache.py").write_text(textwrap.dedent(IN_PLACE_CACHE), encoding="utf-8")
    keys, values = kv_cases.INPUTS["appends"]["keys"], kv_cases.INPUTS["appends"]["values"]
    with Sandbox(tmp_path) as sandbox:
        states = sandbox.probe("kv_cache_appends", "kv_cache", [AsTorch(k) for k in keys], [AsTorch(v) for v in values])
    assert [length for length, _, _ in states] == [1, 3, 6]
    for index, (_, cached_k, cached_v) in enumerate(states):
        np.testing.assert_array_equal(cached_k, np.concatenate(keys[: index + 1], axis=-2))
        np.testing.assert_array_equal(cached_v, np.concatenate(values[: index + 1], axis=-2))


def test_variants_are_what_the_mistakes_compute() -> None:
    ref = Reference(kit.SOLUTIONS, tasks.MODULES)
    Q, K, V, _mask = kv_cases.causal_qkv(kv_cases.INPUTS["head_six"])
    wrong = kv_mistakes.incremental_variants(ref, Q, K, V)
    np.testing.assert_array_equal(wrong["cache_keeps_last_only"], V)
    np.testing.assert_array_equal(wrong["attend_before_append"][0], np.zeros(V.shape[-1]))
    for t in range(1, len(Q)):  # token t sees the t tokens before it, not itself
        np.testing.assert_allclose(
            wrong["attend_before_append"][t], ref.scaling.attention(Q[t : t + 1], K[:t], V[:t])[0][0]
        )
    assert kv_mistakes.kv_cache_bytes_variants(8.0)["kv_missing_factor_two"] == 4.0
    assert kv_mistakes.kv_cache_bytes_variants(8.0, inverse=True)["kv_missing_factor_two"] == 16.0
