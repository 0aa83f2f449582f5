"""The timing report's figures, as PNG files (matplotlib's Agg canvas; no display, no pyplot state).

- ``timing_attention.png``: log-log time against n for the naive head, SDPA and
  the causal naive head, each with its fitted line and slope;
- ``timing_decoding.png``: per-token latency with and without the KV cache;
- ``timing_memory.png``: peak memory against n next to one float32 score
  matrix (4 n^2 bytes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.judge.timing.analysis import MiB, blocks, naive_over_sdpa
from autograder.judge.timing.report import PLOTS, TimingReport

COLORS = {
    "naive": "tab:red",
    "sdpa": "tab:blue",
    "causal_naive": "tab:orange",
    "without_cache": "tab:red",
    "with_cache": "tab:blue",
}
LABELS = {"naive": "naive head", "sdpa": "SDPA", "causal_naive": "naive head, causal"}
DPI = 110


def _figure() -> tuple[Figure, object]:
    figure = Figure(figsize=(7.5, 5.0), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _subtitle(report: TimingReport) -> str:
    env = report.environment
    return f"{env.device}: {env.device_name[:40]}, torch {env.torch}, {env.dtype}, {env.threads} thread(s)"


def _log_axes(axes: object, ns: np.ndarray, xlabel: str, ylabel: str) -> None:
    """Log-log axes with the sizes themselves as x ticks."""
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xticks(ns, [str(int(n)) for n in ns])
    axes.minorticks_off()
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, which="major", alpha=0.4)


def _slope_line(x: np.ndarray, y: np.ndarray, slope: float) -> np.ndarray:
    """The line of ``slope`` on log-log axes through the geometric centre of the points ``(x, y)``, at ``x``."""
    centre_x, centre_y = np.exp(np.mean(np.log(x))), np.exp(np.mean(np.log(y)))
    return centre_y * (x / centre_x) ** slope


def attention_figure(report: TimingReport) -> Figure:
    """Median seconds against n on log-log axes, min-max bars, fitted lines labelled with their slopes."""
    figure, axes = _figure()
    attention = report.attention
    ns, fit = attention.ns, attention.in_fit
    for name, series in attention.series.items():
        color = COLORS[name]
        spread = np.vstack([series.median - series.minimum, series.maximum - series.median])
        axes.errorbar(
            ns,
            series.median,
            yerr=spread,
            fmt="o",
            color=color,
            capsize=3,
            label=f"{LABELS[name]}: slope {series.slope:.2f}",
        )
        x = ns[fit]
        line = _slope_line(x, series.median[fit], series.slope)  # the reported slope, drawn through the fitted points
        axes.plot(x, line, "-", color=color, linewidth=1.5)
        axes.annotate(
            f"slope {series.slope:.2f}",
            (x[-1], line[-1]),
            textcoords="offset points",
            xytext=(6, 0),
            color=color,
            fontsize=9,
            va="center",
        )
    axes.axvspan(
        attention.fit[0],
        attention.fit[1],
        color="0.92",
        zorder=0,
        label=f"fit range n = {attention.fit[0]}..{attention.fit[1]}",
    )
    _log_axes(
        axes,
        ns,
        "sequence length n (tokens)",
        f"seconds per forward pass (median of {attention.repeats * attention.rounds})",
    )
    axes.set_xlim(ns[0] / 1.3, ns[-1] * 2.2)
    ratio = naive_over_sdpa(attention)[-1]
    axes.set_title(
        f"One attention head, d = {attention.d}: naive/SDPA at n = {int(ns[-1])} is {ratio:.1f}x\n{_subtitle(report)}",
        fontsize=10,
    )
    axes.legend(fontsize=9, loc="upper left")
    return figure


def decoding_figure(report: TimingReport) -> Figure:
    """Per-token seconds against the token position, with and without the cache, log-log."""
    figure, axes = _figure()
    decoding = report.decoding
    t = decoding.positions
    for label, run, name in (
        ("without cache", decoding.without_cache, "without_cache"),
        ("with KV cache", decoding.with_cache, "with_cache"),
    ):
        color = COLORS[name]
        axes.plot(t, run.seconds, ".", color=color, markersize=2, alpha=0.3)
        centres, medians = blocks(t, run.seconds, decoding.fit, decoding.block)
        axes.plot(
            centres, medians, "o", color=color, markersize=4, label=f"{label}: medians of {decoding.block}-token blocks"
        )
        axes.plot(
            centres,
            _slope_line(centres, medians, run.slope),
            "-",
            color=color,
            linewidth=1.5,
            label=f"{label}: fitted slope {run.slope:.2f}",
        )
    axes.axvspan(
        decoding.fit[0],
        decoding.fit[1],
        color="0.94",
        zorder=0,
        label=f"fit range t = {decoding.fit[0]}..{decoding.fit[1]}",
    )
    ticks = 2 ** np.arange(0, int(np.log2(decoding.n_tokens)) + 1)
    _log_axes(axes, ticks, "token position t", "seconds for this token")
    same = "identical" if decoding.without_cache.tokens == decoding.with_cache.tokens else "DIFFERENT"
    axes.set_title(
        f"Greedy decoding, {decoding.n_layers} layers x {decoding.n_heads} heads, d_model {decoding.d_model}\n"
        f"KV cache: {decoding.speedup_last:.0f}x faster at token {decoding.n_tokens}, "
        f"{decoding.speedup_total:.1f}x in total, tokens {same}\n{_subtitle(report)}",
        fontsize=10,
    )
    axes.legend(fontsize=9, loc="upper left")
    return figure


def memory_figure(report: TimingReport) -> Figure:
    """Peak bytes against n next to one float32 score matrix, log-log."""
    figure, axes = _figure()
    memory = report.memory
    ns = memory.ns
    axes.plot(ns, memory.score_bytes / MiB, "--", color="0.3", label="one float32 score matrix, 4 n² bytes")
    for kind, label in (("naive", "naive head"), ("sdpa", "SDPA")):
        axes.plot(
            ns, np.maximum(memory.allocated[kind], 1) / MiB, "o-", color=COLORS[kind], label=f"{label}: peak allocated"
        )
        if memory.reserved[kind] is not None:
            axes.plot(
                ns,
                np.maximum(memory.reserved[kind], 1) / MiB,
                "x:",
                color=COLORS[kind],
                label=f"{label}: peak reserved",
            )
    _log_axes(axes, ns, "sequence length n (tokens)", "peak memory of one forward pass (MiB)")
    axes.set_title(f"Peak memory of one attention head, d = {report.attention.d}\n{_subtitle(report)}", fontsize=10)
    axes.legend(fontsize=9, loc="upper left")
    axes.text(
        0.99,
        0.02,
        f"measured with {memory.method[:80]}",
        transform=axes.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.35",
    )
    return figure


def draw(report: TimingReport, folder: Path) -> list[Path]:
    """Write the three PNGs into ``folder``; their paths."""
    written = []
    for key, make in (("attention", attention_figure), ("decoding", decoding_figure), ("memory", memory_figure)):
        path = Path(folder) / PLOTS[key]
        make(report).savefig(path, format="png")
        written.append(path)
    return written
