"""What step 12's graders expect of the toy GPT, whatever the weights (the kit's, or fresh hidden ones).

The weights cross to the child as a dict of tensors; the logits come back and
are compared with the reference's to float32 rounding, so a float32
implementation passes; a mistake is named from the wrong answers of
:mod:`autograder.judge.diagnose.toy_gpt`, whatever their shape (projecting with
``wpe`` gives ``[n, n_ctx]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from autograder.i18n import N_, _, ngettext
from autograder.judge import messages
from autograder.judge.checking import Got, Lab, expect_close, expect_that
from autograder.judge.diagnose import answers
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.protocol import AsTorch

LOGITS = dict(
    rtol=1e-4, atol=1e-5
)  # float32 lands within 1e-6 of float64 here; every known mistake is 1e-3 or more away


def send(weights: dict[str, Any], dtype: type = np.float64) -> dict[str, Any]:
    """A NumPy weights dict as the student receives it: every array a tensor of ``dtype``, ``n_heads`` an int."""

    def tensor(array: Any) -> AsTorch:
        return AsTorch(np.asarray(array, dtype=dtype))

    blocks = [{key: tensor(value) for key, value in block.items()} for block in weights["blocks"]]
    return {
        **{key: tensor(weights[key]) for key in ("wte", "wpe", "lnf_g", "lnf_b")},
        "n_heads": int(weights["n_heads"]),
        "blocks": blocks,
    }


FRESH = N_("fresh weights ({size})")  # a hidden check's model, with its size (describe)


def describe(weights: dict[str, Any]) -> str:
    """The model's size in words, e.g. ``2 blocks of 2 heads, width 8, 16 tokens, 16 positions``."""
    V, d = np.shape(weights["wte"])
    blocks = len(weights["blocks"])
    sentence = ngettext(
        "{blocks} block of {heads} heads, width {width}, {vocabulary} tokens, {positions} positions",
        "{blocks} blocks of {heads} heads, width {width}, {vocabulary} tokens, {positions} positions",
        blocks,
    )
    return sentence.format(
        blocks=blocks, heads=weights["n_heads"], width=d, vocabulary=V, positions=len(weights["wpe"])
    )


def expect_logits(got: Got, expected: np.ndarray, wrong: Mapping[str, np.ndarray]) -> np.ndarray:
    """Logits equal to ``expected`` to float32 rounding; a wrong answer of another shape is named too."""
    value = got.value
    if isinstance(value, np.ndarray) and value.shape != np.shape(expected):
        expect_that(
            got,
            False,
            _(messages.AN_ARRAY_OF_SHAPE).format(shape=messages.shape(np.shape(expected))),
            _(messages.OF_SHAPE).format(shape=messages.shape(value)),
            value=value,
            wrong=wrong,
        )
    return expect_close(got, expected, wrong=wrong, **LOGITS)


def forward_matches(
    lab: Lab,
    weights: dict[str, Any],
    tokens: Sequence[int],
    expected: np.ndarray,
    wrong: Mapping[str, Any],
    described: str,
    dtype: type = np.float64,
) -> None:
    """``gpt_forward(weights, tokens)`` gives the reference's logits."""
    text = _("{call} with {weights} ({dtype}) and tokens {tokens}").format(
        call="gpt_forward(weights, tokens)", weights=described, dtype=np.dtype(dtype).name, tokens=list(tokens)
    )
    got = lab.call("gpt_forward", send(weights, dtype), AsTorch(np.asarray(tokens, dtype=np.int64)), text=text)
    expect_logits(got, expected, wrong)


def cached_steps_match(
    lab: Lab,
    weights: dict[str, Any],
    tokens: Sequence[int],
    expected: np.ndarray,
    wrong: Mapping[str, Any],
    described: str,
) -> None:
    """``gpt_step`` token by token through ``new_cache`` gives the full pass's logits at every position, and fills
    every cache."""
    n, V = len(tokens), np.shape(weights["wte"])[0]
    text = _("{first}, then {then} for t = {steps}, with {weights} and tokens {tokens}").format(
        first="cache = new_cache(weights)",
        then="gpt_step(weights, tokens[t], t, cache)",
        steps=f"0..{n - 1}",
        weights=described,
        tokens=list(tokens),
    )
    got = lab.probe("toy_gpt_cached_steps", send(weights), [int(t) for t in tokens], text=text)
    rows, lengths = got.parts(N_("the logits of each step"), N_("len() of every cache afterwards"))
    expect_that(
        rows,
        isinstance(rows.value, list) and len(rows.value) == n,
        ngettext("{count} logit, one per step", "{count} logits, one per step", n).format(count=n),
        f"{len(rows.value) if isinstance(rows.value, list) else rows.value!r}",
    )
    stacked = np.stack(
        [
            Got(rows.step, _("{call}, step {step}").format(call=rows.call, step=t), row).array((V,))
            for t, row in enumerate(rows.value)
        ]
    )
    expect_logits(rows.with_value(stacked), expected, wrong)
    full = [[n] * int(weights["n_heads"]) for _block in weights["blocks"]]
    expect_that(
        lengths,
        lengths.value == full,
        ngettext(
            "every layer's and head's cache holding the {count} token: {lengths}",
            "every layer's and head's cache holding the {count} tokens: {lengths}",
            n,
        ).format(count=n, lengths=full),
        f"{lengths.value}",
    )


def _token_ids(got: Got, n_new: int) -> np.ndarray:
    """The generated ids as an integer array of ``n_new`` entries (a list of ints, or an integer tensor)."""
    value = got.value
    ids = np.asarray(value) if isinstance(value, (list, tuple, np.ndarray)) else None
    if ids is None or ids.shape != (n_new,) or ids.dtype.kind not in "biuf" or not np.array_equal(ids, np.round(ids)):
        got.fail(ngettext("{count} token id", "{count} token ids", n_new).format(count=n_new), f"{value!r:.200}")
    return ids.astype(int)


WRONG_PATH = "WrongPath"  # the exception class of autograder.sandbox.probes.toy_gpt
PATHS = {  # use_cache: the function generate must use, and the mistake of reaching the other one
    True: ("gpt_step", "generate_cache_unused"),
    False: ("gpt_forward", "generate_cache_used_without_cache"),
}


def generate_matches(
    lab: Lab,
    weights: dict[str, Any],
    prompt: Sequence[int],
    n_new: int,
    expected: tuple[np.ndarray, np.ndarray],
    wrong: Mapping[str, Any],
    described: str,
) -> None:
    """Greedy ``generate`` with and without the cache: the reference's tokens and logits, each run through its own
    path (the model function the flag rules out raises if it is reached: :data:`WRONG_PATH`)."""
    tokens_ref, logits_ref = (np.asarray(part) for part in expected)
    wrong_logits = answers.part(wrong, 1)  # the logits of each wrong (tokens, logits), read on a failure
    for use_cache in (False, True):
        call = f"generate(weights, {list(prompt)}, {n_new}, use_cache={use_cache})"
        text = _("{call} with {weights}").format(call=call, weights=described)
        outcome = lab.sandbox.run_probe(
            "toy_gpt_generate", lab.step.module, send(weights), [int(t) for t in prompt], int(n_new), use_cache
        )
        run = Got(lab.step, text, None)
        used, mistake = PATHS[use_cache]
        if isinstance(outcome, outcomes.Raised) and outcome.raised_as(WRONG_PATH):
            run.fail(
                ngettext(
                    "{function} for every new token ({count} call or more), and not the other path",
                    "{function} for every new token ({count} calls or more), and not the other path",
                    n_new,
                ).format(function=used, count=n_new),
                outcome.message[:200],
                mistake if use_cache else None,
            )
        if not isinstance(outcome, outcomes.Returned):
            run.no_result(outcome, "generate", "toy_gpt.generate")
        tokens, logits = Got(lab.step, text, outcome.value, outcome.output).parts("tokens", "logits")
        expect_logits(logits, logits_ref, wrong_logits)
        ids = _token_ids(tokens, n_new)
        expect_that(
            tokens,
            np.array_equal(ids, tokens_ref),
            _("{tokens} (each the argmax of its logits)").format(tokens=tokens_ref.tolist()),
            f"{ids.tolist()}",
        )
