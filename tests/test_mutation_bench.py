"""bench/mutation.py decides equivalence by running code and kills by grading (cosmic-ray itself is not needed here)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

from tests import kit

spec = importlib.util.spec_from_file_location("mutation_bench", kit.ROOT / "bench" / "mutation.py")
mutation = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mutation  # its dataclasses look their module up by name
spec.loader.exec_module(mutation)


def test_equivalent_mutant_is_left_out_and_a_changed_one_is_graded() -> None:
    source = mutation.reference_source("softmax")
    shift = "x - np.max(x, axis=axis, keepdims=True)"
    made = [
        ("equivalent", 0, source.replace(shift, "x - np.max(x, axis=axis, keepdims=True) * 1.0"), 0),
        ("no_max_shift", 0, source.replace(shift, "x"), 0),
        ("sum_over_everything", 0, source.replace("np.sum(e, axis=axis, keepdims=True)", "np.sum(e)"), 0),
    ]
    assert all(mutated != source for _, _, mutated, _ in made)
    report = mutation.evaluate("softmax", made, np.random.default_rng(0))
    changed = {m.operator: m.changed for m in report.mutants}
    assert changed == {"equivalent": False, "no_max_shift": True, "sum_over_everything": True}
    assert all(m.killed for m in report.changing) and not report.survivors
