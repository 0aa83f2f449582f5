"""The worked example's eight stages and the calibrator, each computed by the student's own functions.

Every stage calls the student's function on the chapter's inputs for that
stage, as the public checks do (``Q = X W^Q`` of *kedi sütü içti*, the two
heads, ``W^O``), so a mistake shows in the stage where it is made, not in every
later one. The chapter's printed values (:mod:`autograder.base.chapter`, public)
go beside them.

The calibrator changes one condition at a time and recomputes the head with
the student's ``attention`` for every combination, ahead of time: dividing by
``sqrt(d_k)`` or not, the temperature ``T``, the causal mask, and which token
stands in the verb's place. A temperature ``T`` is the student's attention on
``Q / T`` (the scores are divided by ``T``); *no scaling* is their attention on
``Q * sqrt(d_k)``, which cancels the division their code makes.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from autograder.base import chapter
from autograder.deliver.workbench.found import Caller, Found
from autograder.deliver.workbench.view import numbers, problems, view, warnings
from autograder.judge.cases.block import HEAD1, HEAD2, W_O, X
from autograder.judge.cases.core import CAUSAL3, K_CH, Q_CH, V_CH

N, D_K = Q_CH.shape  # 3 tokens, d_k = 2
STAGES = ("products", "sum", "scale", "mask", "softmax", "mixing", "concat", "projection")
TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)
VERB = 2  # the position whose token the calibrator replaces (içti)


def inputs() -> dict[str, Any]:
    """The chapter's inputs every stage starts from (public numbers)."""
    return numbers(
        {
            "X": X,
            "Q": Q_CH,
            "K": K_CH,
            "V": V_CH,
            "W_Q": HEAD1[0],
            "W_K": HEAD1[1],
            "W_V": HEAD1[2],
            "Q2": X @ HEAD2[0],
            "K2": X @ HEAD2[1],
            "V2": X @ HEAD2[2],
            "W_O": W_O,
            "sqrt_dk": math.sqrt(D_K),
        }
    )


def attention(caller: Caller, Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None, call: str):
    """The student's ``attention(Q, K, V, mask)``: ``(output, weights)`` as two :class:`Found`."""
    args = (Q, K, V) if mask is None else (Q, K, V, mask)
    output, weights = caller.call("scaling", "scaling.attention", *args, call=call).parts(call, 2)
    return output.array(call + " -> output", (len(Q), V.shape[-1])), weights.array(
        call + " -> weights", (len(Q), len(K))
    )


def stages(caller: Caller) -> dict[str, dict[str, Any]]:
    """The data of each stage, by stage id."""
    value = chapter.value
    QKV = "project(X, W_Q, W_K, W_V)"
    parts = caller.call("scaling", "scaling.project", X, *HEAD1, call=QKV).parts(QKV, 3)
    Q, K, V = (part.array(f"{QKV} -> {name}", (N, D_K)) for part, name in zip(parts, "QKV"))
    scores = caller.call("scaling", "scaling.scores", Q_CH, K_CH, call="scores(Q, K)").array("scores(Q, K)", (N, N))
    scaled = caller.call("scaling", "scaling.scaled_scores", Q_CH, K_CH, call="scaled_scores(Q, K)").array(
        "scaled_scores(Q, K)", (N, N)
    )
    mask = caller.call("mask", "mask.causal_mask", N, call="causal_mask(3)").mask("causal_mask(3)", (N, N))
    masked_call = "apply_mask(S, causal)"
    masked = caller.call("mask", "mask.apply_mask", value("T72-scaled"), CAUSAL3, call=masked_call).array(
        masked_call, (N, N), allow_neg_inf=True
    )
    _masked_out, masked_weights = attention(caller, Q_CH, K_CH, V_CH, CAUSAL3, "attention(Q, K, V, causal)")
    softmaxed = caller.call("softmax", "softmax.softmax", value("T72-scaled"), call="softmax(S)").array(
        "softmax(S)", (N, N)
    )
    output, weights = attention(caller, Q_CH, K_CH, V_CH, None, "attention(Q, K, V)")
    output2, weights2 = attention(caller, X @ HEAD2[0], X @ HEAD2[1], X @ HEAD2[2], None, "attention(Q2, K2, V2)")
    concat_call = "multi_head(X, [head 1, head 2], I)"
    concat = caller.call("block", "block.multi_head", X, [HEAD1, HEAD2], np.eye(4), call=concat_call).array(
        concat_call, (N, 4)
    )
    project_call = "multi_head(X, [head 1, head 2], W_O)"
    projected = caller.call("block", "block.multi_head", X, [HEAD1, HEAD2], W_O, call=project_call).array(
        project_call, (N, 4)
    )
    return {
        "products": view({"Q": Q, "K": K, "V": V}, {"Q": value("T72-Q"), "K": value("T72-K"), "V": value("T72-V")}),
        "sum": view({"scores": scores}, {"scores": value("T72-QKT")}),
        "scale": view({"scaled": scaled, "scores": scores}, {"scaled": value("T72-scaled")}),
        "mask": view(
            {"mask": mask, "masked": masked, "weights": masked_weights},
            {"scaled": value("T72-scaled")},
        ),
        "softmax": view({"weights": softmaxed}, {"weights": value("T72-A"), "rowsum": value("T72-rowsum")}),
        "mixing": view({"output": output, "weights": weights}, {"output": value("T72-AV"), "weights": value("T72-A")}),
        "concat": view(
            {"concat": concat, "weights2": weights2, "output2": output2},
            {"concat": value("T732-concat"), "weights2": value("T731-A2")},
        ),
        "projection": view({"projected": projected, "concat": concat}, {"projected": value("T732-WO")}),
    }


def sentence(token: int) -> np.ndarray:
    """The worked example's ``X`` with the verb's row replaced by token ``token``'s embedding."""
    X_alt = np.array(X, dtype=float)
    X_alt[VERB] = X[token]
    return X_alt


def calibrator(caller: Caller) -> dict[str, Any]:
    """The head under every combination of conditions, keyed ``"<token>|<scale>|<mask>|<T>"``.

    Computed until the first call that gives no usable value: the others would meet the same problem.
    """
    results: dict[str, Any] = {}
    met: list[Found] = []
    noted: list[Found] = []
    for token, scale, masked, temperature in itertools.product(range(N), (True, False), (False, True), TEMPERATURES):
        X_alt = sentence(token)
        Q, K, V = X_alt @ HEAD1[0], X_alt @ HEAD1[1], X_alt @ HEAD1[2]
        factor = (1.0 if scale else math.sqrt(D_K)) / temperature
        call = "attention(Q / T, K, V" + (", causal)" if masked else ")")
        output, weights = attention(caller, Q * factor, K, V, CAUSAL3 if masked else None, call)
        if not (output.ok and weights.ok):
            met = [output, weights]
            break
        noted += [output, weights]
        key = f"{token}|{int(scale)}|{int(masked)}|{temperature:g}"
        results[key] = {"weights": numbers(weights.value), "output": numbers(output.value)}
    return {
        "results": results,
        "temperatures": list(TEMPERATURES),
        "problems": problems(met),
        "warnings": warnings(noted),
    }
