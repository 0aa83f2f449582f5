"""Numbers derived from a timing report: fits, speed-ups, review flags, the summary.

The runner uses these to fill in the report, the plots to draw it, and the
graders to recompute what the report claims. Everything here is plain numpy
on validated data (:mod:`autograder.judge.timing.report`).
"""

from __future__ import annotations

import numpy as np

from autograder.i18n import N_, Nn_, _, counted
from autograder.judge.timing.calibration import GPU_NOT_CALIBRATED, windows_for
from autograder.judge.timing.report import Attention, Decoding, TimingReport

MiB = 2**20
FLAT_LOCAL_SLOPES = 0.01  # real local slopes differ by more than this between neighbouring sizes
MIN_DISTINCT_LATENCIES = 0.1  # share of distinct per-token latencies below which they look made up


def fit_slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float)), 1)[0])


def local_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The slope between each pair of neighbouring points on the log-log plot."""
    return np.diff(np.log(np.asarray(y, dtype=float))) / np.diff(np.log(np.asarray(x, dtype=float)))


def attention_slope(attention: Attention, name: str) -> float:
    """The fitted slope of series ``name``'s medians over the report's fit range."""
    mask = attention.in_fit
    return fit_slope(attention.ns[mask], attention.series[name].median[mask])


def blocks(
    positions: np.ndarray, seconds: np.ndarray, fit: tuple[int, int], block: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(centres, medians)`` of the ``block``-token blocks of the fit range: one spike cannot tilt a fit through
    them."""
    mask = (positions >= fit[0]) & (positions <= fit[1])
    t, s = np.asarray(positions, dtype=float)[mask], np.asarray(seconds, dtype=float)[mask]
    return t.reshape(-1, block).mean(axis=1), np.median(s.reshape(-1, block), axis=1)


def fastest_per_token(rounds: list[list[float]]) -> np.ndarray:
    """Each token's fastest time over repeated decoding runs: another process only ever adds time."""
    return np.min(np.asarray(rounds, dtype=float), axis=0)


def decoding_slope(decoding: Decoding, seconds: np.ndarray) -> float:
    """The fitted slope of per-token seconds against the token position: block medians over the fit range."""
    return fit_slope(*blocks(decoding.positions, seconds, decoding.fit, decoding.block))


def speedups(without_cache: np.ndarray, with_cache: np.ndarray, block: int) -> tuple[float, float]:
    """``(at the last token, total)``: the ratio of the medians of the last ``block`` tokens, and of the sums."""
    last = float(np.median(without_cache[-block:]) / np.median(with_cache[-block:]))
    return last, float(np.sum(without_cache) / np.sum(with_cache))


def naive_over_sdpa(attention: Attention) -> np.ndarray:
    """The naive head's median time over SDPA's, per n."""
    return attention.series["naive"].median / attention.series["sdpa"].median


SAME_REPEATS = N_("{name}: every repeat took exactly the same time at n = {ns}")
FLAT_SLOPES = N_("{name}: the slope between neighbouring sizes never changes ({slopes}); measured times wobble")
RATIO_FLAT = N_(
    "naive/SDPA does not grow with n over the fit range ({smallest} at the smallest n, {largest} at the largest); "
    "the naive head's n x n temporaries make it fall further behind"
)
REPEATED_LATENCIES = (
    N_("decoding without cache: per-token latencies repeat exactly ({distinct} for {tokens})"),
    N_("decoding with cache: per-token latencies repeat exactly ({distinct} for {tokens})"),
)
DISTINCT = Nn_("{count} distinct value", "{count} distinct values")
TOKENS = Nn_("{count} token", "{count} tokens")
THREADS = Nn_("{count} thread", "{count} threads")


def review_flags(report: TimingReport) -> list[str]:
    """Signs that the numbers were not measured: each is a reason for a person to look, not a verdict.

    In the active language (the timing grader's review check shows them).
    """
    flags = []
    attention = report.attention
    flat = {}
    for name, series in attention.series.items():
        same = [
            int(n) for n, times in zip(attention.ns, series.seconds) if len(times) >= 3 and max(times) == min(times)
        ]
        if same:
            flags.append(_(SAME_REPEATS).format(name=name, ns=", ".join(map(str, same[:6]))))
        mask = attention.in_fit
        if np.count_nonzero(mask) >= 3:
            steps = local_slopes(attention.ns[mask], series.median[mask])
            if np.ptp(steps) < FLAT_LOCAL_SLOPES:
                flat[name] = steps
    # One kernel can scale cleanly on a quiet machine (SDPA measured local slopes 2.001, 1.992, 1.997 on
    # an idle CI run); every series at once that clean is what typed-in numbers look like.
    if flat and len(flat) == len(attention.series):
        for name, steps in flat.items():
            flags.append(_(FLAT_SLOPES).format(name=name, slopes=", ".join(f"{s:.3f}" for s in steps)))
    ratio = naive_over_sdpa(attention)[attention.in_fit]
    if ratio[-1] <= ratio[0]:
        flags.append(_(RATIO_FLAT).format(smallest=f"{ratio[0]:.2f}", largest=f"{ratio[-1]:.2f}"))
    for sentence, run in zip(REPEATED_LATENCIES, (report.decoding.without_cache, report.decoding.with_cache)):
        if len(np.unique(run.seconds)) < MIN_DISTINCT_LATENCIES * len(run.seconds):
            distinct, tokens = len(np.unique(run.seconds)), len(run.seconds)
            flags.append(
                _(sentence).format(
                    distinct=counted(DISTINCT, distinct).format(count=distinct),
                    tokens=counted(TOKENS, tokens).format(count=tokens),
                )
            )
    return flags


DEVICE_LINE = N_("device: {device} ({name}), torch {torch}, {dtype}, {threads}, SDPA backend {backend}; {sweep} sweep")
ATTENTION_LINE = N_(
    "attention, slope of log t on log n over n = {low}..{high}: naive {naive}, SDPA {sdpa}, causal naive {causal}; "
    "naive/SDPA at n = {n}: {ratio}x"
)
DECODING_LINE = Nn_(
    "decoding {tokens} token: per-token slope {without} without cache, {with_cache} with; speed-up at token "
    "{tokens}: {last}x, total {total}x; tokens identical: {same}",
    "decoding {tokens} tokens: per-token slope {without} without cache, {with_cache} with; speed-up at token "
    "{tokens}: {last}x, total {total}x; tokens identical: {same}",
)
MEMORY_LINE = N_(
    "peak memory at n = {n}: naive {naive} MiB, SDPA {sdpa} MiB (one float32 score matrix: {score} MiB); measured "
    "with {method}"
)
YES, NO = N_("yes"), N_("NO")
NOTE_LINE, REVIEW_LINE = N_("note: {note}"), N_("review: {flag}")


def summary(report: TimingReport) -> list[str]:
    """A few lines that say what the report found (printed by ``attnlab timing`` and the GPU bench)."""
    env, attention, decoding, memory = report.environment, report.attention, report.decoding, report.memory
    series = attention.series
    last_n = int(attention.ns[-1])
    same = decoding.without_cache.tokens == decoding.with_cache.tokens
    big = int(np.argmax(memory.ns))
    lines = [
        _(DEVICE_LINE).format(
            device=env.device,
            name=env.device_name,
            torch=env.torch,
            dtype=env.dtype,
            threads=counted(THREADS, env.threads).format(count=env.threads),
            backend=env.sdpa_backend,
            sweep=report.sweep,
        ),
        _(ATTENTION_LINE).format(
            low=attention.fit[0],
            high=attention.fit[1],
            naive=f"{series['naive'].slope:.2f}",
            sdpa=f"{series['sdpa'].slope:.2f}",
            causal=f"{series['causal_naive'].slope:.2f}",
            n=last_n,
            ratio=f"{naive_over_sdpa(attention)[-1]:.1f}",
        ),
        counted(DECODING_LINE, decoding.n_tokens).format(
            tokens=decoding.n_tokens,
            without=f"{decoding.without_cache.slope:.2f}",
            with_cache=f"{decoding.with_cache.slope:.2f}",
            last=f"{decoding.speedup_last:.1f}",
            total=f"{decoding.speedup_total:.1f}",
            same=_(YES) if same else _(NO),
        ),
        _(MEMORY_LINE).format(
            n=int(memory.ns[big]),
            naive=f"{memory.allocated['naive'][big] / MiB:.1f}",
            sdpa=f"{memory.allocated['sdpa'][big] / MiB:.1f}",
            score=f"{memory.score_bytes[big] / MiB:.1f}",
            method=memory.method,
        ),
    ]
    if not windows_for(env.device).calibrated:
        lines.append(_(NOTE_LINE).format(note=_(GPU_NOT_CALIBRATED)))
    lines.extend(_(REVIEW_LINE).format(flag=flag) for flag in review_flags(report))
    return lines
