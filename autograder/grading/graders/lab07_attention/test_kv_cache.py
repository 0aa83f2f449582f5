"""Public checks of step 7, the KV cache: appends, one decoding step, causal attention token by token, and its
memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, Nn_, _, counted, ngettext
from autograder.judge import cases
from autograder.judge.cases import kv_cache as kv_cases
from autograder.judge.checking import Got, Lab, expect_close, expect_that
from autograder.judge.checks.kv_cache import (
    AFTERWARDS,
    APPENDS,
    DECODE,
    INCREMENTAL,
    expect_appends,
    expect_decoded,
    expect_incremental,
)
from autograder.judge.diagnose.answers import Answers
from autograder.judge.diagnose.kv_cache import bytes_answers, kv_cache_bytes_variants
from autograder.sandbox.protocol import AsTorch

pytestmark = pytest.mark.step("kv_cache")

FLOAT32 = dict(rtol=1e-4, atol=1e-5)  # float32 inputs: float32 rounding of the whole head
EXACT = dict(rtol=1e-12, atol=0.0)  # byte counts are integers; GB values are those counts / 1e9
GB, GIB = 1e9, 2**30
WEIGHTS_7B = 7e9 * 2  # fp16 weights of a 7B model, bytes
FREE_NODE = (4 * 80 - 140) * GB  # four 80 GB cards minus a 70B model's fp16 weights (140 GB)
# How a number is shown in a message; "{value}" is the number.
IN_GB, IN_GIB = "{value} GB", "{value} GiB"
TIMES_THE_WEIGHTS = Nn_("{value} times the weights", "{value} times the weights")
TOKENS = Nn_("{value} token", "{value} tokens")
EXERCISE = N_("exercise {number}, {call}: {what}")
SEVENTY_B = Nn_("70B-class with {heads} KV head, 32k tokens, fp16", "70B-class with {heads} KV heads, 32k tokens, fp16")


def _derived(got: Got, call: str, value: Any) -> Got:
    """A quantity the grader computed from the student's result ``got``, described by ``call``."""
    return got.derive(call, np.asarray(value, dtype=float), derived=True)


def _of_bytes(got: Got, quantity: Any = None) -> Any:
    """The wrong answers of ``quantity(bytes)`` for the call ``got`` of ``kv_cache_bytes`` (see ``bytes_answers``)."""
    if got.source is None:
        return None
    return bytes_answers(got.source.args, got.source.kwargs, quantity)


def _shown(shown: str | tuple[str, str], number: float) -> str:
    """``number`` written with its unit: ``shown`` a unit (``"{value} GB"``) or an ``Nn_`` pair with words."""
    text = counted(shown, number) if isinstance(shown, tuple) else _(shown)
    return text.format(value=f"{number:.6g}")


def _expect_number(
    got: Got, expected: float, *, shown: str | tuple[str, str] = "{value}", wrong: dict | None = None
) -> None:
    """Expect the number in ``got`` (computed by the grader from the student's bytes) to be ``expected``, to
    rounding; ``shown`` writes a number with its unit (``"{value} GB"``, or an ``Nn_`` pair when it has words)."""
    value = float(got.value)
    holds = bool(np.isclose(value, expected, **EXACT))
    expect_that(
        got,
        holds,
        _shown(shown, expected),
        _shown(shown, value),
        value=np.asarray(value),
        wrong=wrong,
    )


def _bytes(lab: Lab, *args: int, what: str, **kwargs: int) -> tuple[Got, float]:
    """``kv_cache_bytes(*args, **kwargs)`` and its value as a number; ``what`` (translated) says what it is."""
    shown = ", ".join([*map(str, args), *(f"{k}={v}" for k, v in kwargs.items())])
    got = lab.call("kv_cache_bytes", *args, text=f"kv_cache_bytes({shown}) ({what})", **kwargs)
    return got, got.number()


def _incremental(lab: Lab, name: str, text: str, tolerance: dict | None = None) -> tuple[Got, np.ndarray]:
    """``incremental_attention`` on the tokens of case ``name``, compared with causal full attention."""
    head = kv_cases.INPUTS[f"head_{name}"]
    call = "incremental_attention(X, W_Q, W_K, W_V)"
    got = lab.call(
        "incremental_attention", *(AsTorch(head[k]) for k in ("X", "W_Q", "W_K", "W_V")), text=_(text).format(call=call)
    )
    outputs = expect_incremental(
        got,
        cases.expected(f"incremental_{name}", 0),
        cases.wrong(f"incremental_{name}"),
        float64_inputs=head["X"].dtype == np.float64,
        **(tolerance or {}),
    )
    return got, outputs


@pytest.mark.points(2)
def test_appends(lab: Lab) -> None:
    """KVCache keeps every appended token in order: its length, keys and values after each append"""
    keys, values = kv_cases.INPUTS["appends"]["keys"], kv_cases.INPUTS["appends"]["values"]
    # one token at a time first, as decoding appends: chunks of one size also show a cache joined on another axis
    one_k, one_v = (np.split(chunks[-1], chunks[-1].shape[-2], axis=-2) for chunks in (keys, values))
    text = _(APPENDS).format(sizes=", ".join("1" * len(one_k)), shapes="k (2, 1, 3), v (2, 1, 5)")
    got = lab.probe("kv_cache_appends", [AsTorch(k) for k in one_k], [AsTorch(v) for v in one_v], text=text)
    expect_appends(got, one_k, one_v)
    sizes = [k.shape[-2] for k in keys]
    text = _(APPENDS).format(sizes=", ".join(map(str, sizes)), shapes="k (2, t, 3), v (2, t, 5)")
    got = lab.probe("kv_cache_appends", [AsTorch(k) for k in keys], [AsTorch(v) for v in values], text=text)
    expect_appends(got, keys, values)


def _keys_kept_last(args: tuple, kwargs: dict) -> dict[str, np.ndarray]:
    """The cached keys after ``decode_with_cache(K_cached, V_cached, x_t, W_Q, W_K, W_V)`` of a cache that keeps
    only the newest token's."""
    _K_cached, _V_cached, x_t, _W_Q, W_K, _W_V = (a.array for a in args)
    return {"cache_keeps_last_only": (x_t @ W_K)[..., None, :]}


@pytest.mark.points(1)
@pytest.mark.parametrize("name", ["single", "batch"])
def test_decode_step(lab: Lab, name: str) -> None:
    """decode_step appends the new token's key and value, then attends over the whole cache"""
    inputs = kv_cases.INPUTS[f"decode_{name}"]
    K_cached, V_cached, x_t = inputs["K_cached"], inputs["V_cached"], inputs["x_t"]
    text = _(DECODE).format(x_t=f"x_t {x_t.shape}", keys=K_cached.shape, values=V_cached.shape)
    got = lab.probe(
        "decode_with_cache",
        *(AsTorch(inputs[k]) for k in ("K_cached", "V_cached", "x_t", "W_Q", "W_K", "W_V")),
        text=text,
    )
    out_t, length, cached_k, _cached_v = got.parts("out_t", *AFTERWARDS)
    n_cached = K_cached.shape[-2]
    expect_that(
        length,
        length.number() == n_cached + 1,
        ngettext("{count} token (one more than before)", "{count} tokens (one more than before)", n_cached + 1).format(
            count=n_cached + 1
        ),
        f"{length.number():g}",
        value=np.asarray(length.number()),
        wrong=Answers.of_call(got.source.args, {}, lambda a, k: {"cache_keeps_last_only": np.asarray(1)}),
    )
    _q, K_all, _v = kv_cases.decode_qkv(inputs)
    expect_close(cached_k, K_all, wrong=Answers.of_call(got.source.args, {}, _keys_kept_last))
    expect_decoded(out_t, cases.expected(f"decode_{name}", 0), cases.wrong(f"decode_{name}"))


@pytest.mark.points(1)
def test_incremental_worked_example(lab: Lab) -> None:
    """Token by token, the worked example gives causal attention: kedi keeps its own value, içti matches the full
    head"""
    got, outputs = _incremental(lab, "worked", N_("{call} with the worked example's 3 tokens (float64)"))
    expect_close(got.with_value(outputs[0]), chapter.value("T72-V")[0], **INCREMENTAL)
    expect_close(got.with_value(outputs[2]), chapter.value("T72-AV")[2], atol=1e-6)


@pytest.mark.points(0.5)
@pytest.mark.parametrize(
    "name, text",
    [
        ("one", N_("{call} with one token, X (1, 4), d_k = 3, d_v = 2 (float64)")),
        ("six", N_("{call} with X (6, 5), d_k = 3, d_v = 4 (float64)")),
        ("batch", N_("{call} with batch axes, X (2, 3, 5, 4), d_k = 2, d_v = 6 (float64)")),
    ],
    ids=["one_token", "six_tokens", "batch_axes"],
)
def test_incremental_equals_causal_attention(lab: Lab, name: str, text: str) -> None:
    """Token by token through the cache equals causal full attention (float64 inputs, float64 outputs)"""
    _incremental(lab, name, text)


@pytest.mark.points(0.5)
def test_incremental_float32(lab: Lab) -> None:
    """In float32 it equals causal full attention to float32 rounding"""
    _incremental(lab, "float32", N_("{call} with float32 X (7, 6), d_k = 4, d_v = 3"), FLOAT32)


@pytest.mark.points(1)
def test_cache_bytes_table(lab: Lab) -> None:
    """The chapter's table: 2.1 / 17.2 / 85.9 / 52.4 GB in fp16 (GB = 1e9), 48.8 GiB, nearly 4x the 7B weights"""
    rows = [
        ((32, 32, 128, 4096), N_("7B-class: 32 layers, 32 KV heads of width 128, 4096 tokens, fp16")),
        ((32, 32, 128, 32768), N_("7B-class at 32k tokens, fp16")),
        ((80, 64, 128, 32768), N_("70B-class: 80 layers, 64 KV heads, 32k tokens, fp16")),
        ((32, 32, 128, 100_000), N_("7B-class at 100k tokens, fp16")),
    ]
    for (args, what), expected_gb in zip(rows, chapter.value("T764-kv")):
        got, n_bytes = _bytes(lab, *args, what=_(what))
        _expect_number(
            _derived(got, f"{got.call} / 1e9", n_bytes / GB),
            expected_gb,
            shown=IN_GB,
            wrong=_of_bytes(got, lambda v: v / GB),
        )
    _expect_number(
        _derived(got, f"{got.call} / 2**30", n_bytes / GIB),
        chapter.value("T764-kv-gib"),
        shown=IN_GIB,
        wrong=_of_bytes(got, lambda v: v / GIB),
    )
    _expect_number(
        _derived(got, _("{call} / (7e9 x 2 bytes of fp16 weights)").format(call=got.call), n_bytes / WEIGHTS_7B),
        chapter.value("T764-4x"),
        shown=TIMES_THE_WEIGHTS,
        wrong=_of_bytes(got, lambda v: v / WEIGHTS_7B),
    )


@pytest.mark.points(0.5)
def test_gqa_and_mqa(lab: Lab) -> None:
    """Fewer KV heads shrink the 100k-token cache: 52.4 / 13.1 / 1.6 GB for 32 / 8 / 1 KV heads (1x, 4x, 32x)"""
    sizes = []
    for n_kv_heads, expected_gb in zip((32, 8, 1), chapter.value("T765-gqa")):
        got, n_bytes = _bytes(
            lab,
            32,
            n_kv_heads,
            128,
            100_000,
            what=ngettext(
                "32 layers, {heads} KV head, 100k tokens, fp16",
                "32 layers, {heads} KV heads, 100k tokens, fp16",
                n_kv_heads,
            ).format(heads=n_kv_heads),
        )
        _expect_number(
            _derived(got, f"{got.call} / 1e9", n_bytes / GB),
            expected_gb,
            shown=IN_GB,
            wrong=_of_bytes(got, lambda v: v / GB),
        )
        sizes.append(n_bytes)
    ratios = _("{ratio} for h_kv = {values}").format(
        ratio="kv_cache_bytes(32, 32, 128, 100000) / kv_cache_bytes(32, h_kv, 128, 100000)", values="32, 8, 1"
    )
    expect_close(_derived(got, ratios, sizes[0] / np.asarray(sizes)), chapter.value("T765-shrink"), **EXACT)
    exercise = chapter.value("T713-ex3")  # exercise 3: MHA and GQA-8 in GB and GiB, and their ratio
    in_units = Nn_("{heads} KV head in {unit}", "{heads} KV heads in {unit}")
    for value, key, what in (
        (sizes[0] / GB, "MHA_GB", counted(in_units, 32).format(heads=32, unit="GB")),
        (sizes[0] / GIB, "MHA_GiB", counted(in_units, 32).format(heads=32, unit="GiB")),
        (sizes[1] / GB, "GQA8_GB", counted(in_units, 8).format(heads=8, unit="GB")),
        (sizes[1] / GIB, "GQA8_GiB", counted(in_units, 8).format(heads=8, unit="GiB")),
        (sizes[0] / sizes[1], "ratio", _("{heads} over {other} KV heads").format(heads=32, other=8)),
    ):
        _expect_number(
            _derived(got, _(EXERCISE).format(number=3, call="kv_cache_bytes(32, h_kv, 128, 100000)", what=what), value),
            exercise[key],
            wrong=kv_cache_bytes_variants(exercise[key]) if key != "ratio" else None,
        )


@pytest.mark.points(0.5)
def test_70b_with_eight_kv_heads(lab: Lab) -> None:
    """A 70B model with 8 KV heads at 32k tokens needs 10.7 GB: 0.134 of an 80 GB card, more than the chapter's 1/8"""
    got, n_bytes = _bytes(lab, 80, 8, 128, 32768, what=counted(SEVENTY_B, 8).format(heads=8))
    _expect_number(
        _derived(got, f"{got.call} / 1e9", n_bytes / GB),
        chapter.value("T764-10.7"),
        shown=IN_GB,
        wrong=_of_bytes(got, lambda v: v / GB),
    )
    # The chapter says 1/8 of an 80 GB card; 10.737 GB is 1/8 of 80 GiB, but 0.1342 of 80 GB.
    _expect_number(
        _derived(got, _("{call} / 80e9 (share of one 80 GB card)").format(call=got.call), n_bytes / (80 * GB)),
        chapter.value("T764-eighth"),
        wrong=_of_bytes(got, lambda v: v / (80 * GB)),
    )


@pytest.mark.points(1)
def test_max_context_per_user(lab: Lab) -> None:
    """On 4 x 80 GB with 140 GB of weights: 2 vs 16 requests of 32k, and 17,166 vs 137,329 tokens for each of 4 users"""
    caches = []
    for n_kv_heads, expected_gb in ((64, chapter.value("T764-kv")[2]), (8, chapter.value("T764-10.7"))):
        got, n_bytes = _bytes(
            lab, 80, n_kv_heads, 128, 32768, what=counted(SEVENTY_B, n_kv_heads).format(heads=n_kv_heads)
        )
        _expect_number(
            _derived(got, f"{got.call} / 1e9", n_bytes / GB),
            expected_gb,
            shown=IN_GB,
            wrong=_of_bytes(got, lambda v: v / GB),
        )
        caches.append(n_bytes)
    requests = [FREE_NODE // caches[0], FREE_NODE // caches[1]]
    text = _(
        "requests of 32k tokens that fit in the 180 GB left: {division} for h_kv = {values}, and their ratio"
    ).format(division="180 GB // kv_cache_bytes(80, h_kv, 128, 32768)", values="64, 8")
    expect_close(_derived(got, text, [*requests, requests[1] / requests[0]]), chapter.value("T764-requests"), **EXACT)
    exercise = chapter.value("T713-ex9")  # exercise 9: the longest context each of 4 users can have
    per_user = []
    for n_kv_heads, key in ((64, "h64"), (8, "h8")):
        got, per_token = _bytes(
            lab,
            80,
            n_kv_heads,
            128,
            1,
            what=ngettext(
                "bytes per token, 70B-class with {heads} KV head",
                "bytes per token, 70B-class with {heads} KV heads",
                n_kv_heads,
            ).format(heads=n_kv_heads),
        )
        tokens = _derived(
            got,
            _("exercise {number}, 45 GB per user / {call}").format(number=9, call=got.call),
            FREE_NODE / 4 / per_token if per_token else np.inf,
        )
        _expect_number(
            tokens,
            exercise[f"tokens_{key}"],
            shown=TOKENS,
            wrong=_of_bytes(got, lambda v: FREE_NODE / 4 / v),
        )
        per_user.append(float(tokens.value))
        longest = int(exercise[f"floor_{key}"])
        for n_tokens, fits in ((longest, True), (longest + 1, False)):
            got, n_bytes = _bytes(
                lab,
                80,
                n_kv_heads,
                128,
                n_tokens,
                batch=4,
                what=ngettext(
                    "4 users of {tokens} tokens, {heads} KV head",
                    "4 users of {tokens} tokens, {heads} KV heads",
                    n_kv_heads,
                ).format(tokens=n_tokens, heads=n_kv_heads),
            )
            expect_that(
                got,
                (n_bytes <= FREE_NODE) == fits,
                _("at most the 180 GB left for the cache") if fits else _("more than the 180 GB left for the cache"),
                f"{n_bytes / GB:.6g} GB",
            )
    _expect_number(
        _derived(
            got,
            _("exercise {number}, tokens per user with 8 KV heads / with 64 KV heads").format(number=9),
            per_user[1] / per_user[0],
        ),
        exercise["ratio"],
    )
