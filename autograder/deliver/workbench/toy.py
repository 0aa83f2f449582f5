"""The toy GPT's views: the token tracker and head lens, and prefill against decode with the KV cache.

The model is the kit's (``toy_gpt_weights.npz`` as shipped: 2 blocks of 2 heads,
width 8, a vocabulary of 16), on the public checks' 12 tokens. What each head
attends to is read from the student's own code: a probe records what their
``gpt_forward`` hands their ``causal_self_attention`` in each block, and their
``attention`` (step 2) with the causal mask gives each head's weights on that
head's queries, keys and values (head ``h`` owns columns ``h * d_head`` to
``(h + 1) * d_head``, as the step's docstring says). The heads' outputs through
``W_O`` are compared with what the student's ``causal_self_attention``
returned, so a page whose lines are not what the student's toy GPT computes says so.

Prefill is ``gpt_forward`` on all the tokens at once; decode runs them one at
a time through ``gpt_step`` and the cache, whose contents are read after every
step. Greedy generation with and without the cache comes from the graders' own
probe (``toy_gpt_generate``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.deliver.workbench.found import Caller, Found
from autograder.deliver.workbench.view import numbers, problems, warnings
from autograder.i18n import N_, Nn_, _, counted
from autograder.judge.cases import toy_gpt as cases
from autograder.judge.checks.toy_gpt import send
from autograder.sandbox.protocol import AsTorch

TOKENS = cases.TOKENS
PROMPT, N_NEW = cases.PROMPT, cases.N_NEW
FORWARD = "gpt_forward(weights, tokens)"
STEPS = "gpt_step(weights, tokens[t], t, cache)"
NOT_CALLED = N_(
    "your gpt_forward did not call causal_self_attention once per block ({calls} for {blocks}), so "
    "the workbench cannot see what each block's attention was given"
)
CALLS, BLOCKS = Nn_("{count} call", "{count} calls"), Nn_("{count} block", "{count} blocks")
DIFFERS = N_(
    "in block {block}, your causal_self_attention returned something else (largest difference {gap}) than your "
    "attention with the causal mask, head by head, through W_O: the weights drawn here may not be the ones your "
    "toy GPT uses"
)
NOT_A_LIST = Nn_(
    "{call} did not run once for each of the {count} token", "{call} did not run once for each of the {count} tokens"
)
CACHE_ROWS = N_("after step {step}, a cache holds keys or values of shape {shape}, not rows of width {width}")
AGREEMENT = 1e-6  # relative: float32 work lands within about 1e-7 of the same computation in float64


def model() -> dict[str, Any]:
    """The kit's weights (what ``toy_gpt_weights.npz`` holds), and the sizes the page shows."""
    return cases.kit_weights()


def _heads(weights: dict[str, Any]) -> tuple[int, int]:
    d_model = np.shape(weights["wte"])[1]
    n_heads = int(weights["n_heads"])
    return n_heads, d_model // n_heads


def head_weights(caller: Caller, weights: dict[str, Any], calls: list) -> tuple[list, list[Found]]:
    """``[layer][head]`` weights (``[n, n]`` lists, None where missing) and what went wrong or is worth saying."""
    n_heads, d_head = _heads(weights)
    n = len(TOKENS)
    causal = np.tril(np.ones((n, n), dtype=bool))
    layers: list[list[Any]] = []
    noted: list[Found] = []
    for layer, (_block, x, out) in enumerate(calls):  # forward() checked they come block by block
        block = weights["blocks"][layer]
        x = Found(x, step="toy_gpt").array("causal_self_attention(x, block, n_heads) <- x", (n, n_heads * d_head))
        out = Found(out, step="toy_gpt").array("causal_self_attention(x, block, n_heads)", (n, n_heads * d_head))
        if not (x.ok and out.ok):
            noted += [x, out]
            layers.append([None] * n_heads)
            continue
        row: list[Any] = []
        rebuilt = np.zeros_like(out.value)
        for head in range(n_heads):
            columns = slice(head * d_head, (head + 1) * d_head)
            Q, K, V = (x.value @ np.asarray(block[name])[:, columns] for name in ("W_Q", "W_K", "W_V"))
            call = f"attention(Q, K, V, causal) (block {layer + 1}, head {head + 1})"
            parts = caller.call("scaling", "scaling.attention", Q, K, V, causal, call=call).parts(call, 2)
            output, attended = parts[0].array(call, (n, d_head)), parts[1].array(call, (n, n))
            noted += [output, attended]
            row.append(numbers(attended.value) if attended.ok else None)
            if output.ok:
                rebuilt += output.value @ np.asarray(block["W_O"])[columns]
        if all(r is not None for r in row):
            gap = float(np.max(np.abs(rebuilt - out.value)))
            if not gap <= AGREEMENT * max(1.0, float(np.max(np.abs(out.value)))):
                noted.append(Found(None, warning=_(DIFFERS).format(block=layer + 1, gap=f"{gap:.3g}")))
        layers.append(row)
    return layers, noted


def forward(caller: Caller, weights: dict[str, Any]) -> dict[str, Any]:
    """Prefill's logits and the per-head weights of every block (the tracker's and the lens's data)."""
    n, vocabulary = len(TOKENS), np.shape(weights["wte"])[0]
    found = caller.probe(
        "toy_gpt", "workbench_forward", "toy_gpt", send(weights), AsTorch(np.asarray(TOKENS)), call=FORWARD
    )
    logits, calls = found.parts(FORWARD, 2)
    logits = logits.array(FORWARD, (n, vocabulary))
    layers: list = []
    noted: list[Found] = [logits]
    blocks = len(weights["blocks"])
    if calls.ok:
        recorded = calls.value if isinstance(calls.value, list) else []
        if len(recorded) != blocks or [c[0] for c in recorded] != list(range(blocks)):
            noted.append(
                calls.failed(
                    _(NOT_CALLED).format(
                        calls=counted(CALLS, len(recorded)).format(count=len(recorded)),
                        blocks=counted(BLOCKS, blocks).format(count=blocks),
                    )
                )
            )
        else:
            layers, more = head_weights(caller, weights, recorded)
            noted += more
    else:
        noted.append(calls)
    return {
        "logits": numbers(logits.value) if logits.ok else None,
        "layers": layers,
        "problems": problems(noted),
        "warnings": warnings(noted),
    }


def decode(caller: Caller, weights: dict[str, Any]) -> dict[str, Any]:
    """Every decode step's logits and what every head's cache holds after it."""
    n_heads, d_head = _heads(weights)
    vocabulary = np.shape(weights["wte"])[0]
    found = caller.probe("toy_gpt", "workbench_cache_steps", "toy_gpt", send(weights), list(TOKENS), call=STEPS)
    steps: list[dict[str, Any]] = []
    noted: list[Found] = [found]
    if found.ok and isinstance(found.value, list) and len(found.value) == len(TOKENS):
        for t, item in enumerate(found.value):
            logits, held = Found(item, step="toy_gpt").parts(STEPS, 2)
            logits = logits.array(f"{STEPS}, t = {t}", (vocabulary,))
            noted.append(logits)
            steps.append({"logits": numbers(logits.value) if logits.ok else None, "cache": _cache(held, t, d_head)})
            if not logits.ok:
                break
    elif found.ok:
        noted.append(found.failed(counted(NOT_A_LIST, len(TOKENS)).format(call=STEPS, count=len(TOKENS))))
    problems_met = problems(noted) + [problem for step in steps for problem in step["cache"]["problems"]]
    return {"steps": steps, "heads": n_heads, "problems": problems_met, "warnings": warnings(noted)}


def _cache(held: Found, t: int, d_head: int) -> dict[str, Any]:
    """One step's cache contents: ``lengths[layer][head]``, ``keys`` and ``values`` (rows of width ``d_head``)."""
    if not held.ok or not isinstance(held.value, list):
        return {"lengths": None, "keys": None, "values": None, "problems": problems([held])}
    lengths, keys, values = [], [], []
    trouble: list[Found] = []
    for layer in held.value:
        lengths.append([head[0] if isinstance(head[0], int) else None for head in layer])
        rows = [[_rows(head[i], t, d_head, trouble) for head in layer] for i in (1, 2)]
        keys.append(rows[0])
        values.append(rows[1])
    return {"lengths": lengths, "keys": keys, "values": values, "problems": problems(trouble)}


def _rows(value: Any, t: int, d_head: int, trouble: list[Found]) -> Any:
    """Cached keys or values as rows of width ``d_head`` (leading axes of size 1 dropped), or None."""
    if (
        not isinstance(value, np.ndarray)
        or value.dtype.kind not in "biuf"
        or value.ndim == 0
        or value.shape[-1] != d_head
    ):
        shape = list(np.shape(value)) if isinstance(value, np.ndarray) else type(value).__name__
        trouble.append(Found(problem=_(CACHE_ROWS).format(step=t, shape=shape, width=d_head), step="kv_cache"))
        return None
    return numbers(value.reshape(-1, d_head).astype(float))


def generation(caller: Caller, weights: dict[str, Any]) -> dict[str, Any]:
    """Greedy ``generate`` with and without the cache: the tokens of each run.

    Each run goes through the probe the grader uses (``toy_gpt_generate``): the model function its flag rules out
    (``gpt_forward`` with the cache, ``gpt_step`` without it) raises if it is reached, so a run that took the
    other path shows as a problem naming the function it called, not as a count kept in the student's process.
    """
    runs: dict[str, Any] = {}
    found_all: list[Found] = []
    for name, use_cache in (("cache", True), ("no_cache", False)):
        call = f"generate(weights, {list(PROMPT)}, {N_NEW}, use_cache={use_cache})"
        found = caller.probe(
            "toy_gpt", "toy_gpt_generate", "toy_gpt", send(weights), list(PROMPT), N_NEW, use_cache, call=call
        )
        found_all.append(found)
        if found.ok:
            runs[name] = {"tokens": _token_ids(found.value)}
    return {"prompt": list(PROMPT), "runs": runs, "problems": problems(found_all), "warnings": []}


def _token_ids(result: Any) -> list[int] | None:
    """The token ids of what ``generate`` returned (``(tokens, logits)``), or None when they are not ids."""
    tokens = result[0] if isinstance(result, (tuple, list)) and result else None
    if isinstance(tokens, (list, tuple)) and all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        return [int(t) for t in tokens]
    if isinstance(tokens, np.ndarray) and tokens.dtype.kind in "iu" and tokens.ndim == 1:
        return [int(t) for t in tokens]
    return None


def views(caller: Caller) -> dict[str, Any]:
    """Everything the toy GPT's views need."""
    weights = model()
    n_heads, d_head = _heads(weights)
    return {
        "tokens": list(TOKENS),
        "sizes": {
            "blocks": len(weights["blocks"]),
            "heads": n_heads,
            "d_model": n_heads * d_head,
            "d_head": d_head,
            "vocabulary": int(np.shape(weights["wte"])[0]),
        },
        "forward": forward(caller, weights),
        "decode": decode(caller, weights),
        "generate": generation(caller, weights),
    }
