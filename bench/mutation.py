"""Mutation testing of the graders: every mutant of the reference that changes an output must lose points.

    python bench/mutation.py [--steps softmax,scaling] [--operators REGEX] [--limit N] [--json PATH]

Mutants come from cosmic-ray (``pip install cosmic-ray``; its operators and
its ``mutate_code``), one step's module of ``solutions/lab07_attention/`` at a
time. The kit's own grader is the test: a mutant is *killed* when grading it
(public and hidden checks of its step) loses points.

Which mutants change behaviour is decided by running code, not by reading it:
the original and the mutated module are called on the reference's public
inputs (the step's cases in :mod:`autograder.judge.cases`), on the same calls with
every float array drawn afresh (random inputs), and on the few calls of
``EXTRA_CALLS`` (error paths, callables, the cache object). A mutant whose
every result, raised exception included, equals the original's to 1e-9 is
equivalent and left out; only the others are graded. Per step it prints:
mutants made, behaviour-changing, killed, and the survivors with their diff.

A benchmark, not a test (a full run grades hundreds of mutants per step);
``tests/test_mutation_bench.py`` runs it on one step with a handful of mutants.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import json
import re
import shutil
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.base import threads  # noqa: E402

threads.one_thread()  # its grades run here: one BLAS thread, as `attnlab grade`'s (before NumPy loads)

import numpy as np  # noqa: E402

from autograder.base import tasks  # noqa: E402
from autograder.base.reference import Reference  # noqa: E402
from autograder.grading import engine  # noqa: E402
from autograder.judge import cases  # noqa: E402

SOLUTIONS = ROOT / "solutions" / tasks.LAB
HIDDEN = ROOT / "hidden" / tasks.LAB
SEED = 20261201
# What the probe calls with a function that needs a callable or an object, or on an error path.
Call = tuple[str, tuple, dict]


def _affine_experts(n: int, d: int, rng: np.random.Generator) -> list[Callable[[np.ndarray], np.ndarray]]:
    weights = rng.normal(size=(n, d, d))
    return [lambda rows, W=W: np.asarray(rows) @ W for W in weights]


def _kv_calls(rng: np.random.Generator) -> list[Call]:
    import torch

    X, W_Q, W_K, W_V = (torch.from_numpy(rng.normal(size=s)) for s in ((2, 5, 4), (4, 3), (4, 3), (4, 2)))
    return [
        ("incremental_attention", (X, W_Q, W_K, W_V), {}),
        ("incremental_attention", (X[0], W_Q, W_K, W_V), {}),
        ("kv_cache_bytes", (32, 8, 128, 4096), {}),
        ("kv_cache_bytes", (80, 8, 128, 32768), {"bytes_per_value": 1, "batch": 3}),
        ("@cache", (torch.from_numpy(rng.normal(size=(2, 3, 4))), torch.from_numpy(rng.normal(size=(2, 1, 4)))), {}),
    ]


def extra_calls(step: str, rng: np.random.Generator) -> list[Call]:
    """Calls beyond the public cases: error paths and the functions whose inputs cannot be stored in a case."""
    f = rng.normal
    calls: dict[str, list[Call]] = {
        "scaling": [
            ("attention", (np.ones(3), np.ones((2, 3)), np.ones((2, 3))), {}),
            ("attention", (np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), {}),
            ("attention", (np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 4))), {}),
            ("attention", (np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 5))), {}),
            ("attention", (np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 4))), {}),
            ("attention", (np.zeros((0, 2, 3)), np.zeros((0, 2, 3)), np.zeros((0, 2, 3))), {}),
            ("attention", (f(size=(3, 4)) * 300, f(size=(5, 4)) * 300, f(size=(5, 2))), {}),
        ],
        "mask": [
            ("causal_mask", (1,), {}),
            ("causal_mask", (0, 3), {}),
            ("prefix_change", (f(size=(4, 3)), f(size=(3, 2)), f(size=(3, 2)), f(size=(3, 2)), f(size=3)), {}),
            (
                "prefix_change",
                (f(size=(4, 3)), f(size=(3, 2)), f(size=(3, 2)), f(size=(3, 2)), f(size=3)),
                {"causal": False},
            ),
            ("prefix_change", (np.zeros((0, 3)), f(size=(3, 2)), f(size=(3, 2)), f(size=(3, 2)), f(size=3)), {}),
        ],
        "positions": [
            ("rope", (f(size=(3, 5)), np.arange(3)), {}),
            ("alibi_slopes", (1,), {}),
            ("alibi_bias", (1, 0.5), {}),
        ],
        "moe_router": [
            ("route", (np.zeros((4, 3)), f(size=(3, 5)), 3), {}),
            ("moe_layer", (f(size=(6, 3)), f(size=(3, 4)), _affine_experts(4, 3, rng), 2), {}),
            ("moe_layer", (f(size=(6, 3)), f(size=(3, 4)), _affine_experts(4, 3, rng), 1), {}),
            ("expert_load", (rng.integers(0, 5, size=(7, 2)), 6), {}),
        ],
        "gradients": [
            (
                "central_difference",
                (lambda x: float(np.sum(np.sin(x) * np.arange(x.size).reshape(x.shape))), f(size=(2, 3))),
                {},
            ),
            ("central_difference", (lambda x: float(np.sum(x**3)), f(size=4)), {"h": 1e-3}),
            ("attention_backward", (f(size=(3, 4)), f(size=(5, 4)), f(size=(5, 2)), f(size=(3, 2))), {}),
        ],
        "reference_check": [
            ("compare_with_torch", (f(size=(3, 4)), f(size=(5, 4)), f(size=(5, 2))), {}),
            (
                "compare_with_torch",
                (f(size=(2, 3, 4)), f(size=(2, 3, 4)), f(size=(2, 3, 6)), np.tril(np.ones((3, 3), bool))),
                {},
            ),
            ("torch_attention", (f(size=(3, 4)), f(size=(5, 4)), f(size=(5, 2)), rng.random((3, 5)) < 0.7), {}),
        ],
        "block": [
            ("layer_norm", (np.ones((2, 4)),), {}),
            ("rms_norm", (np.zeros((2, 4)),), {}),
            ("layer_norm", (f(size=(2, 4)),), {"eps": 0.5}),
            ("rms_norm", (f(size=(2, 4)),), {"eps": 0.5}),
        ],
    }
    if step == "kv_cache":
        return _kv_calls(rng)
    return calls.get(step, [])


def _redrawn(value: Any, rng: np.random.Generator) -> Any:
    """``value`` with every float array drawn afresh (same shape and spread); ints, bools and scalars kept."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        spread = float(np.nanstd(value[np.isfinite(value)])) if np.isfinite(value).any() else 1.0
        fresh = rng.normal(scale=spread or 1.0, size=value.shape)
        return np.where(np.isfinite(value), fresh, value).astype(value.dtype)
    if isinstance(value, (tuple, list)):
        return type(value)(_redrawn(v, rng) for v in value)
    return value


def probe_calls(step: str, rng: np.random.Generator) -> list[Call | cases.Case]:
    """The public cases of the step's module, each again with fresh random arrays, and the extra calls.

    A case runs as the snapshot runs it (:meth:`Case.run`, which knows how to hand its step its inputs: torch
    tensors, the kit's weights); only its answer is compared, not its wrong answers.
    """
    module = tasks.step(step).module
    public = [case for m in cases.case_modules().values() for case in m.CASES if case.module == module]
    redrawn = [dataclasses.replace(case, args=_redrawn(case.args, rng)) for _ in range(2) for case in public]
    return public + redrawn + extra_calls(step, rng)


class ProbeTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise ProbeTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _plain(value: Any) -> Any:
    """A returned value as nested lists of numpy arrays (tensors converted), for comparison."""
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float, np.generic, np.ndarray)) and not isinstance(value, bool):
        return np.asarray(value)
    return value


def _call(ref: Reference, module_name: str, call: Call | cases.Case) -> Any:
    if isinstance(call, cases.Case):
        return _plain(_answer(call, ref))
    module = ref.load(module_name)
    name, args, kwargs = call
    if name == "@cache":  # the KVCache class: two appends, then len, keys, values
        cache = module.KVCache()
        states = []
        for k in args:
            cache.append(k, k[..., :2] * 2)
            keys, values = cache.keys, cache.values
            states.append(
                [
                    len(cache),
                    _plain(keys() if callable(keys) else keys),
                    _plain(values() if callable(values) else values),
                ]
            )
        return states
    return _plain(getattr(module, name)(*args, **kwargs))


def _answer(case: cases.Case, ref: Reference) -> Any:
    """The case's answer from ``ref`` (its wrong answers are not needed here)."""
    without_mistakes = dataclasses.replace(case, variants=None) if case.variants is not None else case
    return without_mistakes.run(ref)[0]


def outcome(ref: Reference, module_name: str, call: Call | cases.Case) -> Any:
    """What one call gives: ``("value", plain value)`` or ``("raised", exception type name)``."""
    try:
        with time_limit(10), np.errstate(all="ignore"), contextlib.redirect_stdout(None):
            return ("value", _call(ref, module_name, call))
    except ProbeTimeout:
        return ("raised", "timeout")
    except Exception as error:  # the mutant's own failure is an outcome like any other
        return ("raised", type(error).__name__)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or (a.dtype.kind in "biuf") != (b.dtype.kind in "biuf"):
            return False
        if a.dtype.kind not in "biuf":
            return bool(np.array_equal(a, b))
        return bool(np.allclose(a.astype(float), b.astype(float), rtol=1e-9, atol=1e-12, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@dataclass
class Mutant:
    operator: str
    occurrence: int
    line: int
    diff: str
    changed: bool = False
    killed: bool | None = None
    earned: float | None = None


@dataclass
class StepReport:
    step: str
    mutants: list[Mutant] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changing(self) -> list[Mutant]:
        return [m for m in self.mutants if m.changed]

    @property
    def survivors(self) -> list[Mutant]:
        return [m for m in self.changing if not m.killed]


def mutants_of(source: str, operators: re.Pattern[str]) -> Iterator[tuple[str, int, str, int]]:
    """``(operator, occurrence, mutated source, line)`` for every cosmic-ray mutation of ``source``."""
    import cosmic_ray.plugins
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    tree = get_ast(source)
    for name in cosmic_ray.plugins.operator_names():
        if not operators.search(name):
            continue
        operator_class = cosmic_ray.plugins.get_operator(name)
        if operator_class.arguments():
            continue  # operators that need a configuration; the default set of cosmic-ray's init skips them too
        operator = operator_class()
        positions = [start for node in ast_nodes(tree) for start, _ in operator.mutation_positions(node)]
        for occurrence, start in enumerate(positions):
            mutated = mutate_code(source, operator, occurrence)
            if mutated is not None and mutated != source:
                yield name, occurrence, mutated, start[0]


def _diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return "\n".join(line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))


def grade_step(folder: Path, step: str) -> float:
    """Points the folder earns on ``step`` (public and hidden checks)."""
    report = engine.grade(
        engine.GradeOptions(
            submission=folder, hidden=HIDDEN, reference=SOLUTIONS, seed=SEED, steps=(step,), public_only=False
        )
    )
    return report.step(step).earned


def reference_source(step: str) -> str:
    return (SOLUTIONS / f"{tasks.step(step).module}.py").read_text(encoding="utf-8")


def run_step(step: str, operators: re.Pattern[str], limit: int | None, rng: np.random.Generator) -> StepReport:
    """Every cosmic-ray mutant of the step's module (or a sample of ``limit``), judged by :func:`evaluate`."""
    made = list(mutants_of(reference_source(step), operators))
    if limit is not None and len(made) > limit:
        made = [made[i] for i in sorted(rng.choice(len(made), size=limit, replace=False))]
    return evaluate(step, made, rng)


def evaluate(step: str, made: list[tuple[str, int, str, int]], rng: np.random.Generator) -> StepReport:
    """Probe each mutant ``(operator, occurrence, mutated source, line)`` for changed behaviour; grade those that do."""
    started = time.perf_counter()
    module_name = tasks.step(step).module
    report = StepReport(step)
    with tempfile.TemporaryDirectory(prefix=f"mutants-{step}-") as tmp:
        folder = Path(tmp) / "submission"
        shutil.copytree(SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
        path = folder / f"{module_name}.py"
        source = path.read_text(encoding="utf-8")
        calls = probe_calls(step, rng)
        original = Reference(SOLUTIONS, tasks.modules_present(SOLUTIONS))
        expected = [outcome(original, module_name, call) for call in calls]
        full = tasks.step(step).points
        for name, occurrence, mutated, line in made:
            mutant = Mutant(name, occurrence, line, _diff(source, mutated))
            report.mutants.append(mutant)
            path.write_text(mutated, encoding="utf-8")
            try:
                loaded = Reference(folder, tasks.modules_present(folder))
                loaded.load(module_name)
                mutant.changed = any(not same(outcome(loaded, module_name, c), e) for c, e in zip(calls, expected))
            except Exception:  # the mutated module does not even import
                mutant.changed = True
            if mutant.changed:
                mutant.earned = grade_step(folder, step)
                mutant.killed = mutant.earned < full
        path.write_text(source, encoding="utf-8")
    report.seconds = time.perf_counter() - started
    return report


def print_report(report: StepReport) -> None:
    changing, killed = report.changing, [m for m in report.changing if m.killed]
    share = f"{100 * len(killed) / len(changing):.1f}%" if changing else "n/a"
    print(
        f"{report.step}: {len(report.mutants)} mutants, {len(changing)} change behaviour, "
        f"{len(killed)} killed ({share}), {len(report.survivors)} survive  [{report.seconds:.0f} s]"
    )
    if report.step in NOTES:
        print(f"  note: {NOTES[report.step]}")
    for mutant in report.survivors:
        print(f"  survivor line {mutant.line} {mutant.operator} #{mutant.occurrence}: earned {mutant.earned:g}")
        for text in mutant.diff.splitlines():
            print(f"      {text.strip()}")


def main(argv: list[str] | None = None) -> int:
    warnings.simplefilter("ignore", SyntaxWarning)  # mutants such as `1 is k` compile with a warning
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default=",".join(s.id for s in tasks.STEPS if s.id in MUTATED_STEPS))
    parser.add_argument("--operators", default=r"^core/", help="regex on cosmic-ray operator names")
    parser.add_argument("--limit", type=int, default=None, help="at most this many mutants per step (a random sample)")
    parser.add_argument("--json", type=Path, default=None, help="write every mutant's outcome here")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(SEED)
    operators = re.compile(args.operators)
    reports = []
    for step in args.steps.split(","):
        report = run_step(step, operators, args.limit, rng)
        print_report(report)
        sys.stdout.flush()
        reports.append(report)
    if args.json:
        args.json.write_text(json.dumps([{"step": r.step, "mutants": [asdict(m) for m in r.mutants]} for r in reports]))
    return 0


# Reviewed survivors and scope, step by step: what the probe leaves out on purpose, and why.
NOTES = {
    "scaling": "a raised ValueError counts by its type; its wording is checked by keywords, numbers in it are free",
    "mask": "causal_mask with n_k < n_q is a precondition (the docstring's 'must be at least n_q'), not probed; "
    "causal_mask(0, n_k) is (a mutant made it raise, now a hidden check)",
    "positions": "odd widths of sinusoidal_encoding are outside the contract (pairs need an even d; the kit's own "
    "alternatives do not take them), not probed; odd ALiBi head counts are (a mutant changed them, now public)",
    "toy_gpt": "the 3 survivors are in the given helpers load_weights and as_tensors (kit code the stub ships "
    "unchanged; the graders load the weights with their own copy), so a change there costs a student nothing",
    "moe_router": "k outside 1..n_experts is a precondition, not probed; k = 1 and k = n_experts are "
    "(mutants made them raise, now hidden checks)",
}

# The steps whose modules are mutated. Not here: timing (graded on a measured report: a mutant changes wall
# times, not values) and predictions (data: answers, not code).
MUTATED_STEPS = tuple(s.id for s in tasks.STEPS if s.id not in ("timing", "predictions"))

if __name__ == "__main__":
    raise SystemExit(main())
