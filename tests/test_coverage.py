"""Every chapter value that belongs to a lab step is asserted by at least one grader.

The graders name each value they check with a literal ``chapter.value("ID")``;
this test reads the repository's copy of the catalog and the grader sources.
Entries of a step's sections that no grader checks must be listed in
``LEFT_OUT`` with the reason.
"""

from __future__ import annotations

import re

from autograder.base import chapter
from tests import kit

# Catalog id prefixes and the step that owns their values.
OWNERS = {
    "T712-llama": "costs",
    "T712-gqa": "costs",
    "T712-d-over-dk": "costs",
    "T712": "scaling",
    "T72-": "scaling",
    "T731": "block",
    "T732-scoretensor": "costs",
    "T732-rank": "costs",
    "T732": "block",
    "T733": "block",
    "T735": "block",
    "T736-ffn": "costs",
    "T736-11008": "costs",
    "T736-31pct": "costs",
    "T736-dff16": "costs",
    "T736": "block",
    "T737": "costs",
    "T739": "block",
    "T7310": "costs",
    "T741": "equivariance",
    "T742-PE-d4": "positions",
    "T742": "equivariance",
    "T743": "positions",
    "T744": "positions",
    "T745": "positions",
    "T746": "positions",
    "T761": "costs",
    "T762": "costs",
    "T764": "kv_cache",
    "T765": "kv_cache",
    "T77-": "moe_router",
    "T713-ex3": "kv_cache",
    "T713-ex4b": "block",
    "T713-ex5": "block",
    "T713-ex6": "costs",
    "T713-ex9": "kv_cache",
    "T713-ex10": "costs",
    "ACT-": "scaling",
    "RU-perm": "equivariance",
    "RU-terms": "gradients",
    "RU-L": "gradients",
    "RU-d": "gradients",
    "RU-gradcheck": "gradients",
    "RU-single": "gradients",
    "RU-": "scaling",
}

# Entries of a step's sections that no grader asserts, and why.
LEFT_OUT = {
    "T72-exp-icti": "an intermediate of the softmax (exp of the scaled row); no contract function returns it, "
    "T72-A covers it",
    "T72-sumexp": "an intermediate of the softmax (the row's normaliser); no contract function returns it, "
    "T72-A covers it",
    "T72-sqrt2": "sqrt(2) itself; scaled_scores' check (T72-scaled) depends on it",
    "T72-pct70": "a rounded reading of T72-A's diagonal ('about 70%'), checked through T72-A",
    "T72-pct-icti": "T72-A-icti as rounded percentages, checked through T72-A-icti",
    "T72-AV-kedi2": "T72-AV rounded to 2 decimals, checked through T72-AV",
    "T72-rowsum": "rows of T72-A sum to 1; the softmax checks assert row sums",
    "T712-normsq": "the diagonal of T712-XXT, checked through T712-XXT",
    "T712-pct-self": "T712-noproj-icti's third entry as a percentage, checked through T712-noproj-icti",
    "T712-pct-args": "1 - T72-A-icti's third entry as a percentage, checked through T72-A-icti",
    "T712-asym": "two entries of T72-QKT and their ratio, checked through T72-QKT",
    "T712-dk1-det": "the determinant of T712-dk1-A, checked through T712-dk1-A",
    "ACT-dk": "768 / 12 = 64: architecture arithmetic of the activity text, not a function of the lab",
    "ACT-scores": "1024^2 scores per head: arithmetic of the activity text, not a function of the lab",
    "ACT-shapes": "the activity model's output shapes (1024, 64) / (1024, 768); the shape checks use smaller sizes",
    "ACT-maskrows": "illustrative rows in the activity text, not computed from anything",
    "T712-d-over-dk": "d / d_k = 4096 / 128, a ratio of two inputs; no costs function returns a per-score cost",
    "T732-rank": "d / h = 4096 / 32: the per-head rank bound is the head width, an input of qk_params; no "
    "function returns a rank",
    "T745-rope-max": "the maximum of the printed RoPE spread column (5e-13); graded as the property (spread "
    "below 1e-10), since the noise level depends on libm and summation order",
    "T745-additive-consistency": "consistency of the printed additive-PE table; its embeddings and projections are "
    "unstated, so no lab function reproduces it",
    "T764-14GB": "7e9 parameters x 2 bytes: weights arithmetic; costs.weight_memory_gb is graded on "
    "exercise 10's values instead",
    "T764-140": "70e9 parameters x 2 bytes: weights arithmetic; costs.weight_memory_gb is graded on "
    "exercise 10's values instead",
    "T764-180": "320 - 140 GB, a subtraction the text makes; exercise 9 (T713-ex9) grades the same budget "
    "through kv_cache_bytes",
    "T765-qwen": "a sum of layer counts from a model's configuration, not a function of the lab",
    "RU-scale": "1/sqrt(2) itself; checked through RU-scaled",
    "RU-rowsum": "rows of RU-A sum to 1, checked through RU-A",
    "RU-shapes": "the predicted shapes [4, 7, 5] etc.; the batch-shape check of scaling uses the same shapes",
}


def _graded_ids() -> set[str]:
    sources = [*(kit.ROOT / "autograder" / "grading" / "graders").rglob("test_*.py"), *kit.HIDDEN.glob("test_*.py")]
    found: set[str] = set()
    for path in sources:
        found.update(re.findall(r"""chapter\.value\(\s*["']([^"']+)["']""", path.read_text(encoding="utf-8")))
    return found


def _owner(entry: str) -> str | None:
    return next(
        (step for prefix, step in sorted(OWNERS.items(), key=lambda kv: -len(kv[0])) if entry.startswith(prefix)), None
    )


def test_every_step_value_is_graded() -> None:
    graded = _graded_ids()
    missing = [
        entry
        for entry, status in chapter.entries().items()
        if status in ("MATCH", "MISMATCH") and _owner(entry) and entry not in graded and entry not in LEFT_OUT
    ]
    assert missing == [], f"chapter values of lab steps that no grader asserts: {missing}"


def test_mismatches_are_graded_at_their_correct_value() -> None:
    mismatches = [e for e, s in chapter.entries().items() if s == "MISMATCH"]
    assert len(mismatches) == 4
    assert set(mismatches) <= _graded_ids()


def test_left_out_entries_exist_and_are_not_graded() -> None:
    entries, graded = chapter.entries(), _graded_ids()
    for entry in LEFT_OUT:
        assert entry in entries, f"{entry} is not in the catalog"
        assert entry not in graded, f"{entry} is graded; take it off LEFT_OUT"


def test_graded_ids_exist() -> None:
    assert _graded_ids() <= chapter.ids()
