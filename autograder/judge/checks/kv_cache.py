"""What step 7's public and hidden graders expect of a KV cache, whatever the inputs.

Token by token through the cache must equal causal full attention. Many
inference codebases run the softmax in float32 and cast back, so the outputs
are judged to float32 rounding (:data:`INCREMENTAL`); that they come back in
the inputs' dtype is checked exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from autograder.i18n import N_, _, ngettext
from autograder.judge.checking import Got, expect_close, expect_that
from autograder.judge.diagnose import answers
from autograder.judge.diagnose.answers import Answers

INCREMENTAL = dict(rtol=1e-5, atol=1e-6)  # float32 softmax on float64 inputs lands within 1e-7 of float64
# How the public and hidden checks describe their probes of a KVCache.
APPENDS = N_(
    "KVCache(): append(k, v) of {sizes} tokens in turn ({shapes}), reading len(cache), cache.keys and "
    "cache.values after each"
)
DECODE = N_("decode_step(x_t, W_Q, W_K, W_V, cache) with {x_t} and a KVCache holding keys {keys} and values {values}")
AFTERWARDS = (N_("len(cache) afterwards"), N_("cache.keys afterwards"), N_("cache.values afterwards"))


def expect_appends(got: Got, keys: Sequence[np.ndarray], values: Sequence[np.ndarray]) -> None:
    """The states the probe ``kv_cache_appends`` read after each append: length, keys and values in order."""
    sizes = [k.shape[-2] for k in keys]
    call = got.source.args if got.source is not None else ()
    states = got.parts(*(f"{index}" for index in range(len(got.value)))) if isinstance(got.value, list) else []
    for index, (state, (length, cached_k, cached_v)) in enumerate(zip(states, got.value)):
        after = _("{call}: after append {number}").format(call=got.call, number=index + 1)
        read = state.parts("len", "keys", "values")
        for which, (name, chunks, cached) in enumerate((("keys", keys, cached_k), ("values", values, cached_v))):
            expect_close(  # what they hold tells more than their count, so they are checked first
                read[which + 1].derive(f"{after}, cache.{name}", cached),
                np.concatenate(chunks[: index + 1], axis=-2),
                wrong=Answers.of_call(call, {}, partial(_appended, which=which, index=index)),
            )
        n, total = read[0].derive(f"{after}, len(cache)", length), sum(sizes[: index + 1])
        expect_that(
            n,
            n.number() == total,
            ngettext("{value} token", "{value} tokens", total).format(value=total),
            f"{n.number():g}",
            value=np.asarray(n.number()),
            wrong=Answers.of_call(call, {}, lambda a, k, index=index: {"cache_keeps_last_only": _sizes(a)[index]}),
        )


def _chunks(args: tuple, which: int) -> list[np.ndarray]:
    """The key (``which`` 0) or value chunks of the probe ``kv_cache_appends(keys, values)``, as arrays."""
    return [np.asarray(getattr(chunk, "array", chunk)) for chunk in args[which]]


def _sizes(args: tuple) -> list[np.ndarray]:
    return [np.asarray(chunk.shape[-2]) for chunk in _chunks(args, 0)]


def _appended(args: tuple, kwargs: dict, *, which: int, index: int) -> dict[str, np.ndarray]:
    """The wrong cached keys or values after append ``index`` of the probe's chunks."""
    chunks = _chunks(args, which)
    return {"cache_keeps_last_only": chunks[index], **wrong_axes(chunks[: index + 1])}


def wrong_axes(chunks: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The cached arrays of a cache that joins its chunks along another axis than the token axis (-2)."""
    found = {}
    for axis in range(-chunks[0].ndim, 0):
        if axis == -2:
            continue
        try:
            found[f"cache_wrong_axis+{axis}"] = np.concatenate(chunks, axis=axis)
        except ValueError:  # the chunks differ along the other axes: that join raises in the student's code too
            continue
    return found


def expect_incremental(
    got: Got, expected: np.ndarray, wrong: Mapping[str, Any], *, float64_inputs: bool, **tolerance: float
) -> np.ndarray:
    """``incremental_attention`` equals causal full attention ``expected``, in the inputs' dtype."""
    outputs = got.array(expected.shape)
    if float64_inputs:
        expect_that(
            got,
            outputs.dtype == np.float64,
            _("float64 outputs for float64 inputs (compute in the dtype of the inputs)"),
            _("dtype {dtype}").format(dtype=outputs.dtype),
        )
    return expect_close(got, expected, wrong=wrong, **{**INCREMENTAL, **tolerance})


def expect_decoded(out_t: Got, expected: np.ndarray, wrong: Mapping[str, np.ndarray]) -> None:
    """``decode_step``'s output: the new token's attention over the cached tokens and itself (``[..., 1, d_v]`` in)."""
    expect_close(out_t, expected[..., 0, :], wrong=answers.shaped(wrong, lambda value: value[..., 0, :]))
