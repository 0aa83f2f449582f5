"""The handout's figures, drawn from the reference solution's own answers.

Every number in a figure comes from calling the reference (loaded with
:class:`autograder.base.reference.Reference`) on the chapter's inputs or on fixed,
seeded ones; nothing here re-implements the lab's math. The timing figure
plots the measurements committed in ``handouts/data/timing_sample.json``
(recorded once with the reference's own timing functions; see
:mod:`autograder.deliver.handout.sample`) and fits its slope with the reference's
``loglog_slope``.

The PNGs are reproducible: matplotlib's default style, the DejaVu fonts it
ships, a fixed size and dpi, and no metadata that changes between runs.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
from matplotlib import colors, patches, style, ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.base import chapter, tasks
from autograder.base.kit import Kit
from autograder.base.reference import Reference

DPI = 110
STYLE = {
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "font.size": 10,
    "axes.titlesize": 11,
    "svg.hashsalt": "attnlab",
}
ALLOWED, BLOCKED = "#3b6ea8", "#e9e9e9"
TIMING_SAMPLE = "timing_sample.json"

Drawer = Callable[[Reference, Kit], Figure]


def _annotate(
    ax, values: np.ndarray, fmt: str = "{:.4f}", dark_above: float | None = None, dark_below: float | None = None
) -> None:
    """Write each cell's value on a heatmap, white on the dark cells (above or below a cut)."""
    finite = values[np.isfinite(values)]
    if dark_above is None and dark_below is None:
        dark_above = float(finite.min() + finite.max()) / 2 if finite.size else 0.0
    for (i, j), v in np.ndenumerate(values):
        text = "−∞" if np.isneginf(v) else fmt.format(v + 0.0)  # + 0.0: no "-0.0"
        dark = np.isfinite(v) and (
            (dark_above is not None and v > dark_above) or (dark_below is not None and v < dark_below)
        )
        ax.text(j, i, text, ha="center", va="center", fontsize=9, color="white" if dark else "black")


def _token_axes(
    ax,
    rows: list[str],
    cols: list[str],
    row_label: str = "query (looking token)",
    col_label: str = "key (looked-at token)",
) -> None:
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(col_label)
    ax.set_ylabel(row_label)
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")


def worked_example(ref: Reference, kit: Kit) -> Figure:
    """The worked example's scaled scores and attention weights, with their values."""
    tokens = chapter.tokens()
    Q, K, V = ref.scaling.project(chapter.inputs("X"), chapter.inputs("WQ"), chapter.inputs("WK"), chapter.inputs("WV"))
    S = ref.scaling.scaled_scores(Q, K)
    _, A = ref.scaling.attention(Q, K, V)
    fig = Figure(figsize=(9.0, 3.9), layout="constrained")
    for ax, values, title, cmap in zip(
        fig.subplots(1, 2),
        (S, A),
        (r"scaled scores $QK^\top/\sqrt{d_k}$", r"weights $A$ = softmax over each row"),
        ("Oranges", "Blues"),
    ):
        ax.imshow(values, cmap=cmap, vmin=min(0.0, values.min()), vmax=values.max())
        _annotate(ax, values)
        _token_axes(ax, tokens, tokens)
        ax.set_title(title, pad=10)
    fig.suptitle("kedi sütü içti: each row belongs to one query and (after the softmax) sums to 1")
    return fig


def masks(ref: Reference, kit: Kit) -> Figure:
    """Which query may look at which key in the three transformer families."""
    n = 5
    source, target = ["kedi", "sütü", "içti"], ["<s>", "the", "cat"]
    causal = ref.mask.causal_mask(n)
    bidirectional = np.ones((n, n), dtype=bool)
    encoder_decoder = np.block(
        [
            [np.ones((3, 3), dtype=bool), np.zeros((3, 3), dtype=bool)],  # the encoder never sees the target
            [np.ones((3, 3), dtype=bool), ref.mask.causal_mask(3)],  # cross-attention | causal self-attention
        ]
    )
    fig = Figure(figsize=(10.5, 4.0), layout="constrained")
    axes = fig.subplots(1, 3)
    cmap = colors.ListedColormap([BLOCKED, ALLOWED])
    positions = [f"t{i}" for i in range(n)]
    panels = (
        (bidirectional, "encoder-only (BERT)\nevery token sees every token", positions, positions),
        (causal, "decoder-only (GPT)\nthe past and itself: causal_mask(5)", positions, positions),
        (encoder_decoder, "encoder-decoder (T5)\nsource in full, target causal", source + target, source + target),
    )
    for ax, (allowed, title, rows, cols) in zip(axes, panels):
        ax.imshow(allowed, cmap=cmap, vmin=0, vmax=1)
        _token_axes(ax, rows, cols, "query", "key")
        ax.set_xticks(np.arange(-0.5, len(cols)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        ax.set_title(title, fontsize=10, pad=10)
    axes[2].axhline(2.5, color="black", linewidth=1)
    axes[2].axvline(2.5, color="black", linewidth=1)
    fig.suptitle("blue: may attend (True in the mask); grey: score set to −∞ before the softmax")
    return fig


def sinusoidal(ref: Reference, kit: Kit) -> Figure:
    """The sinusoidal encoding as a picture, and a few of its dimensions as waves."""
    n_positions, d_model = 100, 64
    PE = ref.positions.sinusoidal_encoding(n_positions, d_model)
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(1.3, 1))
    image = left.imshow(PE.T, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    left.set_xlabel("position p")
    left.set_ylabel("dimension (0 at the top)")
    left.set_title(f"PE for {n_positions} positions, d_model = {d_model}")
    fig.colorbar(image, ax=left, shrink=0.8)
    for dim in (4, 12, 20, 40):
        right.plot(np.arange(n_positions), PE[:, dim], label=f"dimension {dim}")
    right.set_xlabel("position p")
    right.set_title("fast dimensions first, slow ones later")
    right.legend(loc="lower left", fontsize=8)
    return fig


def alibi(ref: Reference, kit: Kit) -> Figure:
    """ALiBi's bias for one head, and how the penalty grows with distance for eight heads."""
    bias = ref.positions.alibi_bias(6, 0.5)
    slopes = ref.positions.alibi_slopes(8)
    n = 64
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    shown = np.where(np.isfinite(bias), bias, np.nan)
    left.imshow(shown, cmap="Purples_r", vmin=-2.5, vmax=0.0)
    _annotate(left, bias, "{:.1f}", dark_below=-1.2)
    _token_axes(left, [str(i) for i in range(6)], [str(j) for j in range(6)], "query position i", "key position j")
    left.set_title("alibi_bias(6, 0.5): −m (i − j), −∞ above the diagonal", pad=10)
    for slope in slopes:
        row = ref.positions.alibi_bias(n, float(slope))[-1]  # the last query: distances n-1 .. 0
        right.plot(np.arange(n)[::-1], row, label=f"m = 1/{round(1 / slope)}")
    right.set_xlabel("distance i − j to the key")
    right.set_ylabel("bias added to the scaled score")
    right.set_title("alibi_slopes(8): each head its own range")
    right.legend(fontsize=7, ncol=2, loc="lower left")
    return fig


def moe_routing(ref: Reference, kit: Kit) -> Figure:
    """Six tokens routed top-2 over eight experts, and the load each expert receives."""
    rng = np.random.default_rng(7)
    n_tokens, d_model, n_experts, k = 6, 16, 8, 2
    x, W_r = rng.normal(size=(n_tokens, d_model)), rng.normal(size=(d_model, n_experts))
    indices, gates = ref.moe_router.route(x, W_r, k)
    load = ref.moe_router.expert_load(indices, n_experts)
    chosen = np.full((n_tokens, n_experts), np.nan)  # gates scattered into a tokens x experts grid
    for t in range(n_tokens):
        chosen[t, indices[t]] = gates[t]
    fig = Figure(figsize=(10.5, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(1.3, 1))
    left.imshow(chosen, cmap="Blues", vmin=0, vmax=1)
    for (t, e), g in np.ndenumerate(chosen):
        if np.isfinite(g):
            left.text(e, t, f"{g:.2f}", ha="center", va="center", fontsize=9, color="white" if g > 0.5 else "black")
    _token_axes(left, [f"token {t + 1}" for t in range(n_tokens)], [str(e + 1) for e in range(n_experts)], "", "expert")
    left.set_xticks(np.arange(-0.5, n_experts), minor=True)
    left.set_yticks(np.arange(-0.5, n_tokens), minor=True)
    left.grid(which="minor", color="#cccccc", linewidth=0.8)
    left.tick_params(which="minor", length=0)
    left.set_title(
        "route(x, W_r, k=2): each token's two gates (they sum to 1);\nblank experts are never called for that token",
        fontsize=10,
    )
    right.bar(np.arange(1, n_experts + 1), load, color=ALLOWED)
    right.axhline(1 / n_experts, color="black", linestyle="--", linewidth=1, label="balanced: 1/8")
    right.set_xticks(np.arange(1, n_experts + 1))
    right.set_xlabel("expert")
    right.set_ylabel("share of (token, slot) pairs")
    right.set_title("expert_load(indices, 8)")
    right.legend(fontsize=8)
    return fig


def kv_cache(ref: Reference, kit: Kit) -> Figure:
    """Prefill and decode with a cache; the work per token with and without it; the cache's size."""
    prompt, total = 5, 8
    computed = np.zeros((total, total))  # 0: never computed, 1: prefill, 2: decode
    computed[:prompt, :prompt] = np.where(ref.mask.causal_mask(prompt), 1, 0)
    for t in range(prompt, total):  # one new query against every cached key, causal_mask(1, t + 1)
        computed[t, : t + 1] = np.where(ref.mask.causal_mask(1, t + 1)[0], 2, 0)
    fig = Figure(figsize=(10.5, 7.6), layout="constrained")
    panels = fig.subplot_mosaic([["grid", "work"], ["grid", "size"]], width_ratios=(1.1, 1))
    grid, work, size = panels["grid"], panels["work"], panels["size"]
    grid.imshow(computed, cmap=colors.ListedColormap(["white", "#f0a35e", ALLOWED]), vmin=0, vmax=2)
    labels = [f"{i}" for i in range(total)]
    _token_axes(grid, labels, labels, "query position", "key position (cached K, V)")
    grid.set_xticks(np.arange(-0.5, total), minor=True)
    grid.set_yticks(np.arange(-0.5, total), minor=True)
    grid.grid(which="minor", color="#bbbbbb", linewidth=0.8)
    grid.tick_params(which="minor", length=0)
    grid.axhline(prompt - 0.5, color="black", linewidth=1.2)
    grid.legend(
        handles=[
            patches.Patch(color="#f0a35e", label="prefill: the prompt at once, causal_mask(5)"),
            patches.Patch(color=ALLOWED, label="decode: one new row, causal_mask(1, n_k)"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.02),
        fontsize=8,
        frameon=False,
    )
    grid.set_title("scores computed for a 5-token prompt + 3 new tokens", fontsize=10)

    steps = np.arange(1, 257)
    with_cache = [ref.mask.causal_mask(1, int(t)).sum() for t in steps]  # one query row
    without_cache = [ref.mask.causal_mask(int(t)).sum() for t in steps]  # the whole prefix again
    work.plot(steps, without_cache, label="without cache: causal_mask(t) recomputed", color="#c0504d")
    work.plot(steps, with_cache, label="with cache: causal_mask(1, t)", color=ALLOWED)
    work.set_yscale("log")
    work.set_xlabel("token t being generated")
    work.set_ylabel("attention scores computed for that token")
    work.set_title("work per generated token (one head, one layer)")
    work.legend(fontsize=8)

    contexts = np.array([1_000, 4_096, 16_384, 32_768, 65_536, 100_000])
    for n_kv, name in ((32, "MHA, 32 KV heads"), (8, "GQA, 8 KV heads"), (1, "MQA, 1 KV head")):
        gigabytes = [ref.kv_cache.kv_cache_bytes(32, n_kv, 128, int(n)) / 1e9 for n in contexts]
        size.plot(contexts / 1000, gigabytes, marker="o", markersize=3, label=name)
    size.set_xlabel("context (thousands of tokens)")
    size.set_ylabel("GB (1e9 bytes), fp16")
    size.set_title("kv_cache_bytes(32 layers, h_kv, 128, n)")
    size.legend(fontsize=8)
    return fig


def timing_sample(kit: Kit) -> dict | None:
    """The committed sample measurements, if any."""
    path = kit.data / TIMING_SAMPLE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def loglog(ref: Reference, kit: Kit) -> Figure:
    """A sample log-log plot of attention's time against n with its fitted slope, and decoding latency."""
    sample = timing_sample(kit)
    if sample is None:
        raise FileNotFoundError(
            f"no sample timings at {kit.data / TIMING_SAMPLE} "
            "(run: python -m autograder.deliver.handout --sample-timing)"
        )
    fig = Figure(figsize=(10.5, 4.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    ns = np.asarray(sample["attention"]["n"], dtype=float)
    fit_from = sample["attention"]["fit_from"]
    for kind, colour in (("naive", "#c0504d"), ("sdpa", ALLOWED)):
        seconds = np.asarray(sample["attention"]["seconds"][kind], dtype=float)
        fit = ns >= fit_from
        slope = ref.timing.loglog_slope(ns[fit], seconds[fit])
        intercept = np.mean(np.log(seconds[fit]) - slope * np.log(ns[fit]))
        left.loglog(ns, seconds * 1e3, "o", color=colour, label=f"{kind}: fitted slope {slope:.2f} (n ≥ {fit_from})")
        left.loglog(ns[fit], np.exp(intercept) * ns[fit] ** slope * 1e3, "-", color=colour, linewidth=1)
    naive = np.asarray(sample["attention"]["seconds"]["naive"], dtype=float)[fit]
    left.loglog(
        ns[fit], naive[0] * (ns[fit] / ns[fit][0]) ** 2 * 1e3 / 3, ":", color="gray", label="slope 2, for comparison"
    )
    left.set_xticks(ns, [f"{int(n)}" for n in ns])
    left.xaxis.set_minor_formatter(ticker.NullFormatter())
    left.set_xlabel("sequence length n")
    left.set_ylabel("milliseconds per forward pass (median)")
    left.set_title(f"time_attention(n, d={sample['attention']['d']}): one head")
    left.legend(fontsize=8)
    for use_cache, colour in ((False, "#c0504d"), (True, ALLOWED)):
        per_token = np.asarray(sample["decoding"]["with_cache" if use_cache else "without_cache"], dtype=float)
        tokens = np.arange(1, len(per_token) + 1)
        right.plot(
            tokens,
            per_token * 1e3,
            ".",
            markersize=2,
            color=colour,
            label="with KV cache" if use_cache else "without cache",
        )
    right.set_yscale("log")
    right.set_xlabel("generated token")
    right.set_ylabel("milliseconds for that token")
    right.set_title(f"time_decoding({len(per_token)} tokens): per-token latency")
    right.legend(fontsize=8)
    fig.suptitle(f"sample measurements: {sample['machine']}", fontsize=10)
    return fig


FIGURES: dict[str, Drawer] = {
    "worked_example": worked_example,
    "masks": masks,
    "sinusoidal": sinusoidal,
    "alibi": alibi,
    "moe_routing": moe_routing,
    "kv_cache": kv_cache,
    "loglog": loglog,
}


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes with no run-dependent metadata."""
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, facecolor="white")
    return buffer.getvalue()


def reference(kit: Kit) -> Reference:
    return Reference(kit.solutions, tasks.modules_present(kit.solutions))


def render(kit: Kit, names: list[str] | None = None) -> dict[str, bytes]:
    """Each figure's file name and PNG bytes."""
    ref = reference(kit)
    out = {}
    with style.context("default"), matplotlib.rc_context(STYLE):
        for name in names or list(FIGURES):
            out[f"{name}.png"] = png_bytes(FIGURES[name](ref, kit))
    return out


def write(kit: Kit) -> list[Path]:
    """Regenerate the figures under ``handouts/figures``; the files that changed."""
    kit.figures.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, data in render(kit).items():
        path = kit.figures / name
        if not path.is_file() or not same_image(path.read_bytes(), data):
            path.write_bytes(data)
            changed.append(path)
    return changed


def pixels(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def same_image(a: bytes, b: bytes, level: int = 16, share: float = 0.002) -> bool:
    """Identical bytes, or the same size with at most ``share`` of pixels differing by more than ``level``."""
    if a == b:
        return True
    pa, pb = pixels(a), pixels(b)
    if pa.shape != pb.shape:
        return False
    return float(np.mean(np.abs(pa - pb).max(axis=-1) > level)) <= share


def stale(kit: Kit) -> list[str]:
    """The committed figures that are missing or differ from a fresh rendering."""
    fresh = render(kit)
    return [
        name
        for name, data in fresh.items()
        if not (kit.figures / name).is_file() or not same_image((kit.figures / name).read_bytes(), data)
    ]
