"""Wrong ways to write the timing step, and what they give."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from autograder.judge.diagnose import Mistake

MISTAKES = {
    m.id: m
    for m in (
        Mistake(
            "loglog_axes_swapped",
            "the fit is of log n on log t (axes swapped); fit log t against log n, the time is what "
            "depends on the size",
        ),
        Mistake(
            "loglog_endpoints_only",
            "the slope uses only the first and the last point; fit every point by least squares, e.g. "
            "np.polyfit(log n, log t, 1)[0]",
        ),
        Mistake(
            "loglog_not_logarithmic",
            "the fit is of t against n without logarithms; the exponent k of t ~ n^k is the slope on log-log axes",
        ),
        Mistake(
            "loglog_mixed_bases",
            "log t and log n use different logarithms (np.log10 for one, np.log for the other); the "
            "slope is only the exponent when both use the same base",
        ),
        Mistake(
            "cache_unused",
            "the run with the cache takes as long as the run without it: time_decoding(use_cache=True) "
            "must call gpt_step (toy_gpt.py) with a cache from new_cache, one new token per step, "
            "instead of rerunning gpt_forward over the whole prefix",
        ),
    )
}


def loglog_slope_variants(ref, ns: ArrayLike, seconds: ArrayLike) -> dict[str, np.ndarray]:
    """What each mistake returns for ``loglog_slope(ns, seconds)``."""
    n, t = np.asarray(ns, dtype=float), np.asarray(seconds, dtype=float)
    return {
        "loglog_axes_swapped": np.asarray(np.polyfit(np.log(t), np.log(n), 1)[0]),
        "loglog_endpoints_only": np.asarray((np.log(t[-1]) - np.log(t[0])) / (np.log(n[-1]) - np.log(n[0]))),
        "loglog_not_logarithmic": np.asarray(np.polyfit(n, t, 1)[0]),
        "loglog_mixed_bases": np.asarray(np.polyfit(np.log(n), np.log10(t), 1)[0]),
    }
