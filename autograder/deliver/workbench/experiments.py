"""Predict, then test: the page's experiments, each answered by the student's own code.

The page asks for a prediction first, keeps it on the student's computer, and
only then shows what the student's functions computed, beside the chapter's
value where the chapter prints one. The answers are computed here, ahead of
time, through the sandbox (the page never runs student code):

- ``value_row``: which value row the verb *içti* mixes most (the worked example's weights);
- ``drop_scale``: the winning key's mean weight among 64 random keys at ``d_k = 64``, with and without the
  division by ``sqrt(d_k)`` (the chapter's experiment of section 7.2.3);
- ``mask_first_row``: the first token's weights under the causal mask;
- ``scores_1024``: how many scores one head computes for 1,024 tokens, and how many the causal mask keeps;
- ``cache_length``: how many keys each head's cache holds once the 12 tokens have been decoded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.base import chapter
from autograder.deliver.workbench.found import Caller, Found
from autograder.deliver.workbench.view import numbers, problems
from autograder.deliver.workbench.worked import VERB, attention
from autograder.judge.cases.core import CAUSAL3, K_CH, Q_CH, V_CH

TRIALS, D_K, KEYS = 256, 64, 64  # the chapter's 7.2.3: 64 random keys compete for one query
LONG = 1024  # tokens of the score-count experiment
SEED = 20261201  # public and fixed: these are illustrations, not checks
SAME = 1.25  # winner weights within this factor of each other count as "about the same"


def _experiment(name: str, kind: str, answer: Any, found: list[Found], **detail: Any) -> dict[str, Any]:
    """One experiment's data; a value with NaN entries answers nothing (its warning is the problem)."""
    found = [item.failed(item.warning) if item.ok and item.warning else item for item in found]
    usable = all(item.ok for item in found)
    return {
        "id": name,
        "kind": kind,
        "answer": numbers(answer) if usable else None,
        "detail": numbers(detail) if usable else {},
        "problems": problems(found),
    }


def value_row(caller: Caller) -> dict[str, Any]:
    _output, weights = attention(caller, Q_CH, K_CH, V_CH, None, "attention(Q, K, V)")
    row = weights.value[VERB] if weights.ok else None
    result = _experiment(
        "value_row", "choice", int(np.argmax(row)) if row is not None else None, [weights], weights=row
    )
    result["chapter"] = {"weights": numbers(chapter.value("T72-A")[VERB])}
    return result


def mask_first_row(caller: Caller) -> dict[str, Any]:
    _output, weights = attention(caller, Q_CH, K_CH, V_CH, CAUSAL3, "attention(Q, K, V, causal)")
    row = weights.value[0] if weights.ok else None
    exact = [bool(w == 0) for w in row[1:]] if row is not None else None
    return _experiment(
        "mask_first_row", "number", row[0] if row is not None else None, [weights], weights=row, exact_zeros=exact
    )


def drop_scale(caller: Caller) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    Q = rng.normal(size=(TRIALS, 1, D_K))  # one query per trial
    K = rng.normal(size=(TRIALS, KEYS, D_K))
    shape = (TRIALS, 1, KEYS)
    scaled = caller.call("scaling", "scaling.scaled_scores", Q, K, call="scaled_scores(Q, K)").array(
        "scaled_scores(Q, K)", shape
    )
    raw = caller.call("scaling", "scaling.scores", Q, K, call="scores(Q, K)").array("scores(Q, K)", shape)
    found = [scaled, raw]
    winners = {}
    for name, scores in (("scaled", scaled), ("unscaled", raw)):
        if scores.ok:
            weights = caller.call("softmax", "softmax.softmax", scores.value, call="softmax(scores)").array(
                "softmax(scores)", shape
            )
            found.append(weights)
            if weights.ok:
                winners[name] = float(np.mean(np.max(weights.value, axis=-1)))
    printed = chapter.value("T723-winner")[str(D_K)]
    answer = None
    if len(winners) == 2:  # the choices: clearly larger, about the same, clearly smaller
        ratio = winners["unscaled"] / winners["scaled"]
        answer = 0 if ratio > SAME else 2 if ratio < 1 / SAME else 1
    result = _experiment("drop_scale", "choice", answer, found, **winners, trials=TRIALS, d_k=D_K, keys=KEYS)
    result["chapter"] = {"scaled": printed["scaled"], "unscaled": printed["unscaled"]}
    return result


def scores_1024(caller: Caller) -> dict[str, Any]:
    rng = np.random.default_rng(SEED + 1)
    Q, K = rng.normal(size=(LONG, 8)), rng.normal(size=(LONG, 8))
    scores = caller.call("scaling", "scaling.scores", Q, K, call=f"scores(Q, K) with {LONG} tokens").array(
        f"scores(Q, K) with {LONG} tokens", (LONG, LONG)
    )
    mask = caller.call("mask", "mask.causal_mask", LONG, call=f"causal_mask({LONG})").mask(
        f"causal_mask({LONG})", (LONG, LONG)
    )
    count = int(scores.value.size) if scores.ok else None
    result = _experiment("scores_1024", "number", count, [scores], shape=[LONG, LONG])
    result["detail"]["allowed"] = int(mask.value.sum()) if mask.ok else None
    result["problems"] += problems([mask])
    result["chapter"] = {"millions": float(chapter.value("T732-scoretensor-1"))}
    return result


def cache_length(decode: dict[str, Any]) -> dict[str, Any]:
    steps = decode["steps"]
    last = steps[-1]["cache"]["lengths"] if steps else None
    answer = None
    if last and all(isinstance(n, int) for layer in last for n in layer):
        answer = last[0][0]  # every head's length is shown beside it
    return {
        "id": "cache_length",
        "kind": "number",
        "answer": answer,
        "detail": {"lengths": last, "steps": len(steps)},
        "problems": decode["problems"],
    }


def experiments(caller: Caller, decode: dict[str, Any]) -> list[dict[str, Any]]:
    """Every experiment's answer from the student's code (None where there is none, with the problems)."""
    return [value_row(caller), drop_scale(caller), mask_first_row(caller), scores_1024(caller), cache_length(decode)]
