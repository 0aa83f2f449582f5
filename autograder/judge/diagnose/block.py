"""Wrong ways to write multi-head attention, the norms, the feed-forward network and the block."""

from __future__ import annotations

import numpy as np

from autograder.judge.diagnose import AND, Mistake
from autograder.judge.diagnose.scaling import attention_variants
from autograder.judge.diagnose.search import edit, generate

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "concat_order_swapped",
            "the heads are concatenated in the wrong order; the table is [head 1 | head 2 | ...] in "
            "the order of `heads`",
        ),
        Mistake("multi_head_missing_wo", "the concatenated heads are returned without the output projection W_O"),
        Mistake("layernorm_no_eps", "LayerNorm leaves out eps; divide by sqrt(var + eps) with eps = 1e-5"),
        Mistake(
            "layernorm_sample_variance",
            "LayerNorm uses the sample variance (divide by d - 1); it uses the population variance (divide by d)",
        ),
        Mistake(
            "rmsnorm_subtracts_mean",
            "RMSNorm subtracts the mean (that is LayerNorm); it only divides x by sqrt(mean(x**2) + eps)",
        ),
        Mistake("rmsnorm_no_eps", "RMSNorm leaves out eps; divide by sqrt(mean(x**2) + eps)"),
        Mistake("ffn_no_relu", "the feed-forward network has no ReLU on x W1 + b1"),
        Mistake("ffn_raw_residual", "the feed-forward network reads the raw residual x; it reads LayerNorm(x)"),
        Mistake(
            "ffn_added_to_normalised",
            "the feed-forward output is added to LayerNorm(x); it is added to the un-normalised residual x",
        ),
        Mistake(
            "block_norm_before_attention",
            "the block normalises X before attention; the worked block has no LayerNorm there (x = X + MultiHead(X))",
        ),
        Mistake(
            "block_post_norm",
            "the block normalises after the residual add (post-norm, LayerNorm(x + sublayer(x))); the chapter's "
            "block normalises what goes into the feed-forward network and adds its output to the un-normalised "
            "residual: x + FFN(LayerNorm(x))",
        ),
        Mistake(
            "block_no_attention_residual",
            "the residual around attention is missing; x = X + MultiHead(X), not MultiHead(X)",
        ),
        Mistake(
            "layernorm_eps_outside_sqrt",
            "LayerNorm adds eps to the standard deviation, (x - mean) / (std + eps); it goes inside the root: "
            "(x - mean) / sqrt(var + eps)",
        ),
        Mistake("layernorm_not_centred", "LayerNorm does not subtract the row's mean before dividing"),
        Mistake(
            "norm_wrong_axis",
            "the norm's statistics are taken over the wrong axis; each row (token) is normalised over its own "
            "features, the last axis",
        ),
        Mistake(
            "rmsnorm_eps_outside_sqrt",
            "RMSNorm adds eps to the root mean square, x / (rms(x) + eps); it goes inside the root: "
            "x / sqrt(mean(x**2) + eps)",
        ),
        Mistake(
            "rmsnorm_uses_variance",
            "RMSNorm divides by sqrt(var(x) + eps), and the variance subtracts the mean; it divides by "
            "sqrt(mean(x**2) + eps)",
        ),
        Mistake(
            "rmsnorm_sum_not_mean",
            "RMSNorm divides by the square root of the sum of squares (the 2-norm), not of their mean",
        ),
    )
}


def norm_model(
    x: np.ndarray,
    eps: float = 1e-5,
    *,
    centre: bool = True,
    spread: str = "var",
    eps_at: str = "inside",
    axis: int = -1,
) -> np.ndarray:
    """LayerNorm (``centre``) and RMSNorm (not) with their choices as knobs (the defaults are LayerNorm's).

    ``spread``: the population ``"var"``, the ``"sample"`` variance, the ``"mean_square"`` or the
    ``"sum_square"`` of the (centred) rows; ``eps_at``: ``"inside"`` the root, ``"outside"`` (added to it) or
    ``"none"``; ``axis``: the axis of the statistics.
    """
    x = np.asarray(x, dtype=float)
    y = x - x.mean(axis=axis, keepdims=True) if centre else x
    spreads = {
        "var": lambda: x.var(axis=axis, keepdims=True),
        "sample": lambda: x.var(axis=axis, keepdims=True, ddof=1),
        "mean_square": lambda: np.mean(y**2, axis=axis, keepdims=True),
        "sum_square": lambda: np.sum(y**2, axis=axis, keepdims=True),
    }
    s = spreads[spread]()
    if eps_at == "outside":
        return y / (np.sqrt(s) + eps)
    return y / np.sqrt(s + (eps if eps_at == "inside" else 0.0))


LAYER_NORM_EDITS = (
    edit(MISTAKES["layernorm_sample_variance"], "spread", "sample"),
    edit(MISTAKES["layernorm_eps_outside_sqrt"], "eps_at", "outside"),
    edit(MISTAKES["layernorm_no_eps"], "eps_at", "none"),
    edit(MISTAKES["layernorm_not_centred"], "centre", False),
    edit(MISTAKES["norm_wrong_axis"], "axis", 0),
)
RMS_NORM_EDITS = (
    edit(MISTAKES["rmsnorm_uses_variance"], "spread", "var"),
    edit(MISTAKES["rmsnorm_sum_not_mean"], "spread", "sum_square"),
    edit(MISTAKES["rmsnorm_eps_outside_sqrt"], "eps_at", "outside"),
    edit(MISTAKES["rmsnorm_no_eps"], "eps_at", "none"),
    edit(MISTAKES["rmsnorm_subtracts_mean"], "centre", True),
    edit(MISTAKES["norm_wrong_axis"], "axis", 0),
)
EDITS = (*LAYER_NORM_EDITS, *RMS_NORM_EDITS)


def rms_model(x: np.ndarray, eps: float = 1e-5, **knobs) -> np.ndarray:
    """RMSNorm: :func:`norm_model` without centring, over the mean square (its defaults)."""
    return norm_model(x, eps, **{"centre": False, "spread": "mean_square", **knobs})


def multi_head_variants(ref, X, heads, W_O) -> dict[str, np.ndarray]:
    """What each mistake returns for ``multi_head(X, heads, W_O)``, a wrong head included."""
    X, W_O = np.asarray(X, dtype=float), np.asarray(W_O, dtype=float)
    out: dict[str, np.ndarray] = {}
    if len(heads) > 1:
        out["concat_order_swapped"] = ref.block.multi_head(X, list(heads)[::-1], W_O)
    widths = sum(np.shape(W_V)[-1] for _, _, W_V in heads)
    if widths == W_O.shape[-1]:
        out["multi_head_missing_wo"] = ref.block.multi_head(X, heads, np.eye(widths))
    # a mistake of the student's own attention (step 2) shows up here too: every head makes the same one
    per_head = [attention_variants(ref, *ref.scaling.project(X, *head)) for head in heads]
    for mistake in per_head[0]:
        if AND in mistake or not all(mistake in found for found in per_head):
            continue  # single mistakes only, and only those every head's shapes allow
        outputs = [found[mistake][0] for found in per_head]
        out[mistake] = np.concatenate(outputs, axis=-1) @ W_O
    return out


def layer_norm_variants(ref, x, eps: float = 1e-5) -> dict[str, np.ndarray]:
    """What each mistake returns for ``layer_norm(x, eps)``."""
    x = np.asarray(x, dtype=float)
    centred = x - x.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        known = {
            "layernorm_no_eps": centred / x.std(axis=-1, keepdims=True),
            "layernorm_sample_variance": centred / np.sqrt(x.var(axis=-1, keepdims=True, ddof=1) + eps),
        }
    return {**known, **generate(norm_model, LAYER_NORM_EDITS, (x, eps), known=known)}


def rms_norm_variants(ref, x, eps: float = 1e-5) -> dict[str, np.ndarray]:
    """What each mistake returns for ``rms_norm(x, eps)``."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        known = {
            "rmsnorm_subtracts_mean": ref.block.layer_norm(x, eps),
            "rmsnorm_no_eps": x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True)),
        }
    return {**known, **generate(rms_model, RMS_NORM_EDITS, (x, eps), known=known)}


def feed_forward_variants(ref, x, W1, b1, W2, b2) -> dict[str, np.ndarray]:
    """What each mistake returns for ``feed_forward(x, W1, b1, W2, b2)``."""
    x = np.asarray(x, dtype=float)
    return {"ffn_no_relu": (x @ np.asarray(W1, dtype=float) + b1) @ np.asarray(W2, dtype=float) + b2}


def block_variants(ref, X, heads, W_O, W1, b1, W2, b2) -> dict[str, np.ndarray]:
    """What each mistake returns for ``block(X, heads, W_O, W1, b1, W2, b2)``."""
    X = np.asarray(X, dtype=float)

    def ffn(inputs: np.ndarray) -> np.ndarray:
        return ref.block.feed_forward(inputs, W1, b1, W2, b2)

    def finish(x: np.ndarray, norm=ref.block.layer_norm) -> np.ndarray:
        return x + ffn(norm(x))

    x = X + ref.block.multi_head(X, heads, W_O)
    norm_mistakes = {
        m: (lambda r, m=m: layer_norm_variants(ref, r)[m]) for m in ("layernorm_no_eps", "layernorm_sample_variance")
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "ffn_raw_residual": x + ffn(x),
            "ffn_added_to_normalised": ref.block.layer_norm(x) + ffn(ref.block.layer_norm(x)),
            "block_norm_before_attention": finish(X + ref.block.multi_head(ref.block.layer_norm(X), heads, W_O)),
            "block_no_attention_residual": finish(ref.block.multi_head(X, heads, W_O)),
            "block_post_norm": ref.block.layer_norm(ref.block.layer_norm(x) + ffn(ref.block.layer_norm(x))),
            "block_post_norm+after_ffn": ref.block.layer_norm(x + ffn(x)),
            "ffn_no_relu": x + feed_forward_variants(ref, ref.block.layer_norm(x), W1, b1, W2, b2)["ffn_no_relu"],
            **{m: finish(x, norm) for m, norm in norm_mistakes.items()},
        }
        for mistake, wrong_heads in multi_head_variants(ref, X, heads, W_O).items():
            out.setdefault(mistake, finish(X + wrong_heads))
    return out
