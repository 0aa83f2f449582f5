"""Fill the handout's generated blocks from the registry, the stubs, the graders and the catalog.

Block kinds (see :mod:`autograder.handout.blocks`):

- ``steps:table``: the registry's steps with their modules and points.
- ``contract:<step>``: the stub's signatures and docstrings.
- ``values:<step>``: the chapter values that step's graders check.
- ``mistakes:<step>``: the known mistakes the diagnosis can name.
- ``checks:<step>``: the public checks with their points, and the command to run them.
- ``errata:chapter``: the chapter's printed slips and their correct values.
- ``windows:timing``: the sweeps of ``attnlab timing`` and the ranges its report is held to.
"""

from __future__ import annotations

import importlib

from autograder import tasks
from autograder.handout import blocks, checks, contract, values
from autograder.kit import Kit


def _points(value: float) -> str:
    return f"{value:g}"


def steps_table() -> str:
    rows = ["| # | step | file | functions | points (of which hidden) |", "|---|---|---|---|---|"]
    for number, step in enumerate(tasks.STEPS, start=1):
        functions = ", ".join(f"`{f}`" for f in step.functions)
        rows.append(
            f"| {number} | [{step.title}](#{step.anchor}) | `{step.module}.py` | {functions} | "
            f"{_points(step.points)} ({_points(step.hidden_points)}) |"
        )
    rows.append(
        f"| | **total** | | | **{_points(tasks.total_points())}** "
        f"({_points(tasks.total_points() - tasks.total_points(public_only=True))}) |"
    )
    return "\n".join(rows)


ANSWER_STEPS = ("predictions",)  # steps whose known mistakes would give the answers away
ANSWERS_HIDDEN = (
    "*The wrong answers the grader recognises are named in its feedback once you have "
    "answered; listing them here would give the answers away.*"
)


def mistakes_markdown(step: tasks.Step) -> str:
    """The step's known mistakes, as the feedback names them."""
    if step.id in ANSWER_STEPS:
        return ANSWERS_HIDDEN
    try:
        module = importlib.import_module(f"autograder.diagnose.{step.module}")
    except ModuleNotFoundError:
        module = None
    found = list(getattr(module, "MISTAKES", {}).values())
    if not found:
        return (
            "*No known mistakes are listed for this step yet; a failed check still says what was "
            "expected and what came back.*"
        )
    lines = [
        "A failed check whose answer matches one of these known wrong answers names it after *Likely mistake:*",
        "",
    ]
    lines += [f"- {m.text} (`{m.id}`)" for m in found]
    return "\n".join(lines)


def checks_markdown(step: tasks.Step, found: list[checks.Check]) -> str:
    """The public checks of ``step`` and how to run them."""
    lines = [
        f"Run `attnlab grade --step {step.id}` (or `attnlab grade path/to/your/folder --step {step.id}`). "
        f"This step is worth {_points(step.points)} points:",
        "",
    ]
    lines += [
        f"- {c.title}" + (f" ({_points(c.points)} {'point' if c.points == 1 else 'points'})" if c.points else "")
        for c in found
    ]
    if step.hidden_points:
        lines.append(
            f"- {_points(step.hidden_points)} more points from hidden checks your instructor runs: "
            "the same properties on fresh random inputs."
        )
    if not found:
        lines.append("- (the public checks of this step are not written yet)")
    return "\n".join(lines)


WINDOW_LABELS = {
    "naive_slope": "log-log slope of the naive head",
    "sdpa_slope": "log-log slope of SDPA",
    "causal_slope": "log-log slope of the causal naive head",
    "naive_over_sdpa_min": "naive / SDPA time at the largest n, at least",
    "no_cache_slope": "per-token latency slope without a cache",
    "cache_slope": "per-token latency slope with the cache",
    "slope_gap_min": "slope without cache minus slope with it, at least",
    "speedup_last_min": "speed-up of the cache at token 512, at least",
    "speedup_total_min": "speed-up over the whole run, at least",
}


def _window(value: object) -> str:
    if value is None:
        return "not graded"
    if isinstance(value, tuple):
        return f"{value[0]:.1f} to {value[1]:.1f}"
    return f"{value:g}"


def timing_windows_markdown() -> str:
    """The sweeps ``attnlab timing`` runs and the ranges its report is held to, per device class."""
    try:
        calibration = importlib.import_module("autograder.timing.calibration")
    except ModuleNotFoundError:
        return "*The timing calibration is not part of this kit yet.*"
    cpu, gpu = calibration.sweep_for("cpu"), calibration.sweep_for("cuda")
    cpu_w, gpu_w = calibration.windows_for("cpu"), calibration.windows_for("cuda")
    sizes = lambda sweep: ", ".join(f"{n:,}" for n in sweep.ns)  # noqa: E731
    rows = [
        "| | CPU | GPU (CUDA) |",
        "|---|---|---|",
        f"| sizes n of the sweep | {sizes(cpu)} | {sizes(gpu)} |",
        f"| slopes fitted over | {cpu.fit[0]:,} ≤ n ≤ {cpu.fit[1]:,} | {gpu.fit[0]:,} ≤ n ≤ {gpu.fit[1]:,} |",
        f"| repeats × rounds per size | {cpu.repeats} × {cpu.rounds} | {gpu.repeats} × {gpu.rounds} |",
        f"| runs of each decoding (a token's latency is its fastest) | {cpu.decode_rounds} | {gpu.decode_rounds} |",
    ]
    for field, label in WINDOW_LABELS.items():
        if hasattr(cpu_w, field):
            rows.append(f"| {label} | {_window(getattr(cpu_w, field))} | {_window(getattr(gpu_w, field))} |")
    note = "" if gpu_w.calibrated else f"\n\nOn a GPU: {calibration.GPU_NOT_CALIBRATED}."
    return "\n".join(rows) + note


class Generator:
    """The body of every generated block, for one kit."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.checks = checks.checks_by_step(kit.public_graders)
        self.chapter_ids = checks.chapter_ids_by_step(kit.public_graders, kit.hidden)

    def body(self, kind: str, key: str) -> str:
        if kind == "steps" and key == "table":
            return steps_table()
        if kind == "errata" and key == "chapter":
            return values.errata_markdown()
        if kind == "windows" and key == "timing":
            return timing_windows_markdown()
        if key not in tasks.BY_ID:
            raise blocks.BlockError(f"block {kind}:{key}: {key!r} is not a registered step")
        step = tasks.step(key)
        if kind == "contract":
            return contract.contract_markdown(step, self.kit.assignments)
        if kind == "values":
            return values.values_markdown(self.chapter_ids.get(step.id, {}))
        if kind == "mistakes":
            return mistakes_markdown(step)
        if kind == "checks":
            return checks_markdown(step, self.checks.get(step.id, []))
        raise blocks.BlockError(f"unknown block kind {kind!r} (in {kind}:{key})")


def generated(kit: Kit) -> str:
    """The handout's markdown with every generated block filled afresh."""
    return blocks.fill(kit.handout.read_text(encoding="utf-8"), Generator(kit).body)


def write(kit: Kit) -> bool:
    """Regenerate the blocks in place; whether the file changed."""
    text = generated(kit)
    if text == kit.handout.read_text(encoding="utf-8"):
        return False
    kit.handout.write_text(text, encoding="utf-8")
    return True


def stale(kit: Kit) -> bool:
    """Whether the committed handout differs from what generation produces."""
    return generated(kit) != kit.handout.read_text(encoding="utf-8")
