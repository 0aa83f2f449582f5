"""Cases of the timing step: ``loglog_slope`` on fixed numbers (the rest is graded from the report)."""

from __future__ import annotations

from autograder.judge.cases import Case
from autograder.judge.diagnose import timing as timing_mistakes

# t = n^2 exactly, and times measured for the naive head on the kit's CPU (n = 512..4096):
# there the least-squares slope (2.344) differs from the endpoints' (2.415) and from every other mistake.
EXACT = ([1, 2, 4], [1.0, 4.0, 16.0])
MEASURED = ([512, 1024, 2048, 4096], [1.27e-3, 9.35e-3, 3.046e-2, 1.9264e-1])

CASES: tuple[Case, ...] = (
    Case("loglog_slope_exact", "timing", "loglog_slope", EXACT, timing_mistakes.loglog_slope_variants),
    Case("loglog_slope_measured", "timing", "loglog_slope", MEASURED, timing_mistakes.loglog_slope_variants),
)
