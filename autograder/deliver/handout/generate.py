"""Fill the handout's generated blocks from the registry, the stubs, the graders and the catalog.

Block kinds (see :mod:`autograder.deliver.handout.blocks`):

- ``steps:table``: the registry's steps with their modules and points.
- ``contract:<step>``: the stub's signatures and docstrings.
- ``values:<step>``: the chapter values that step's graders check.
- ``mistakes:<step>``: the known mistakes the diagnosis can name.
- ``checks:<step>``: the public checks with their points, and the command to run them.
- ``errata:chapter``: the chapter's printed slips and their correct values.
- ``windows:timing``: the sweeps of ``attnlab timing`` and the ranges its report is held to.
- ``figure:<name>``: a figure and its numbered caption (:mod:`autograder.deliver.handout.captions`).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from autograder import i18n
from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.deliver.handout import blocks, captions, checks, contract, values
from autograder.i18n import N_, Nn_, _


def _points(value: float) -> str:
    return f"{value:g}"


STEPS_HEAD = N_("| # | step | file | functions | points (of which hidden) |")
TOTAL = N_("total")


def steps_table() -> str:
    rows = [_(STEPS_HEAD), "|---|---|---|---|---|"]
    for number, step in enumerate(tasks.STEPS, start=1):
        functions = ", ".join(f"`{f}`" for f in step.functions)
        rows.append(
            f"| {number} | [{_(step.title)}](#{step.anchor}) | `{step.module}.py` | {functions} | "
            f"{_points(step.points)} ({_points(step.hidden_points)}) |"
        )
    rows.append(
        f"| | **{_(TOTAL)}** | | | **{_points(tasks.total_points())}** "
        f"({_points(tasks.total_points() - tasks.total_points(public_only=True))}) |"
    )
    return "\n".join(rows)


ANSWER_STEPS = ("predictions",)  # steps whose known mistakes would give the answers away
ANSWERS_HIDDEN = N_(
    "*The wrong answers the grader recognises are named in its feedback once you have "
    "answered; listing them here would give the answers away.*"
)
NO_MISTAKES = N_(
    "*No known mistakes are listed for this step yet; a failed check still says what was expected and what came back.*"
)
MISTAKES_INTRO = N_(
    "A failed check whose answer matches one of these known wrong answers names it after *Likely mistake:*"
)
RUN_STEP = N_(
    "Run `attnlab grade --step {step}` (or `attnlab grade path/to/your/folder --step {step}`). "
    "This step is worth {points}:"
)
HIDDEN_MORE = Nn_(
    "- {points} more point from hidden checks your instructor runs: the same properties on fresh random inputs.",
    "- {points} more points from hidden checks your instructor runs: the same properties on fresh random inputs.",
)
HIDDEN_MORE_REFERENCE = Nn_(  # the predictions step: its hidden check compares with the reference, not properties
    "- {points} more point from a hidden check your instructor runs: your predictions compared with the values "
    "the reference computes (the public checks compare them with what your own code computes).",
    "- {points} more points from a hidden check your instructor runs: your predictions compared with the values "
    "the reference computes (the public checks compare them with what your own code computes).",
)
HIDDEN_LINES = {"predictions": HIDDEN_MORE_REFERENCE}  # steps whose hidden checks are not the same properties again
NOT_WRITTEN = N_("- (the public checks of this step are not written yet)")


def mistakes_markdown(step: tasks.Step) -> str:
    """The step's known mistakes, as the feedback names them."""
    if step.id in ANSWER_STEPS:
        return _(ANSWERS_HIDDEN)
    try:
        module = importlib.import_module(f"autograder.judge.diagnose.{step.module}")
    except ModuleNotFoundError:
        module = None
    found = list(getattr(module, "MISTAKES", {}).values())
    if not found:
        return _(NO_MISTAKES)
    lines = [_(MISTAKES_INTRO), ""]
    lines += [f"- {_(m.text)} (`{m.id}`)" for m in found]
    return "\n".join(lines)


def _worth(points: float) -> str:
    return i18n.ngettext("{points} point", "{points} points", points).format(points=_points(points))


def checks_markdown(step: tasks.Step, found: list[checks.Check]) -> str:
    """The public checks of ``step`` and how to run them."""
    lines = [_(RUN_STEP).format(step=step.id, points=_worth(step.points)), ""]
    lines += [f"- {c.title}" + (f" ({_worth(c.points)})" if c.points else "") for c in found]
    if step.hidden_points:
        hidden = HIDDEN_LINES.get(step.id, HIDDEN_MORE)
        lines.append(i18n.counted(hidden, step.hidden_points).format(points=_points(step.hidden_points)))
    if not found:
        lines.append(_(NOT_WRITTEN))
    return "\n".join(lines)


WINDOW_LABELS = {
    "naive_slope": N_("log-log slope of the naive head"),
    "sdpa_slope": N_("log-log slope of SDPA"),
    "causal_slope": N_("log-log slope of the causal naive head"),
    "naive_over_sdpa_min": N_("naive / SDPA time at the largest n, at least"),
    "no_cache_slope": N_("per-token latency slope without a cache"),
    "cache_slope": N_("per-token latency slope with the cache"),
    "slope_gap_min": N_("slope without cache minus slope with it, at least"),
    "speedup_last_min": N_("speed-up of the cache at token 512, at least"),
    "speedup_total_min": N_("speed-up over the whole run, at least"),
}
NOT_GRADED, RANGE = N_("not graded"), N_("{low} to {high}")
WINDOWS_HEAD = (
    N_("sizes n of the sweep"),
    N_("slopes fitted over"),
    N_("repeats × rounds per size"),
    N_("runs of each decoding (a token's latency is its fastest)"),
)
NO_CALIBRATION = N_("*The timing calibration is not part of this kit yet.*")
ON_GPU = N_("On a GPU: {note}.")


def _window(value: object) -> str:
    if value is None:
        return _(NOT_GRADED)
    if isinstance(value, tuple):
        return _(RANGE).format(low=_bound(value[0]), high=_bound(value[1]))
    return f"{value:g}"


def _bound(value: float) -> str:
    """A window's end as the calibration holds it, to two decimals at most (2.0, 1.48, -0.25)."""
    text = f"{value:.2f}"
    return text[:-1] if text.endswith("0") else text


def timing_windows_markdown() -> str:
    """The sweeps ``attnlab timing`` runs and the ranges its report is held to, per device class."""
    try:
        calibration = importlib.import_module("autograder.judge.timing.calibration")
    except ModuleNotFoundError:
        return _(NO_CALIBRATION)
    cpu, gpu = calibration.sweep_for("cpu"), calibration.sweep_for("cuda")
    cpu_w, gpu_w = calibration.windows_for("cpu"), calibration.windows_for("cuda")
    sizes = lambda sweep: ", ".join(f"{n:,}" for n in sweep.ns)  # noqa: E731
    rows = [
        "| | CPU | GPU (CUDA) |",
        "|---|---|---|",
        f"| {_(WINDOWS_HEAD[0])} | {sizes(cpu)} | {sizes(gpu)} |",
        f"| {_(WINDOWS_HEAD[1])} | {cpu.fit[0]:,} ≤ n ≤ {cpu.fit[1]:,} | {gpu.fit[0]:,} ≤ n ≤ {gpu.fit[1]:,} |",
        f"| {_(WINDOWS_HEAD[2])} | {cpu.repeats} × {cpu.rounds} | {gpu.repeats} × {gpu.rounds} |",
        f"| {_(WINDOWS_HEAD[3])} | {cpu.decode_rounds} | {gpu.decode_rounds} |",
    ]
    for field, label in WINDOW_LABELS.items():
        if hasattr(cpu_w, field):
            rows.append(f"| {_(label)} | {_window(getattr(cpu_w, field))} | {_window(getattr(gpu_w, field))} |")
    note = "" if gpu_w.calibrated else "\n\n" + _(ON_GPU).format(note=_(calibration.GPU_NOT_CALIBRATED))
    return "\n".join(rows) + note


class Generator:
    """The body of every generated block, for one kit, in the active language."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.checks = checks.checks_by_step(kit.public_graders, i18n.language())
        self.chapter_ids = checks.chapter_ids_by_step(kit.public_graders, kit.hidden)

    def body(self, kind: str, key: str) -> str:
        if kind == "steps" and key == "table":
            return steps_table()
        if kind == "errata" and key == "chapter":
            return values.errata_markdown()
        if kind == "windows" and key == "timing":
            return timing_windows_markdown()
        if kind == "figure":
            if key not in captions.CAPTIONS:
                raise blocks.BlockError(
                    f"block figure:{key}: no figure {key!r} (known: {', '.join(captions.CAPTIONS)})"
                )
            return captions.figure_markdown(key)
        if key not in tasks.BY_ID:
            raise blocks.BlockError(f"block {kind}:{key}: {key!r} is not a registered step")
        step = tasks.step(key)
        if kind == "contract":
            return contract.contract_markdown(step, self.kit.assignments)
        if kind == "values":
            return values.values_markdown(self.chapter_ids.get(step.id, {}), step.id)
        if kind == "mistakes":
            return mistakes_markdown(step)
        if kind == "checks":
            return checks_markdown(step, self.checks.get(step.id, []))
        raise blocks.BlockError(f"unknown block kind {kind!r} (in {kind}:{key})")


def generated(kit: Kit, lang: str = i18n.SOURCE) -> str:
    """The handout of language ``lang`` with every generated block filled afresh (in that language)."""
    with i18n.using(lang):
        return blocks.fill(kit.handout_for(lang).read_text(encoding="utf-8"), Generator(kit).body)


def languages(kit: Kit) -> tuple[str, ...]:
    """The shipped languages the kit has a handout's prose in (English always): each is generated and checked."""
    return tuple(lang for lang in i18n.LANGUAGES if kit.handout_for(lang).is_file())


def without_catalog(kit: Kit) -> list[Path]:
    """Handouts in a language the kit does not ship (no compiled catalog): their blocks could only be English."""
    english = kit.handout_for(i18n.SOURCE)
    found = sorted(english.parent.glob(english.name.removesuffix(".md") + ".*.md"))
    return [path for path in found if path.suffixes[-2].lstrip(".") not in i18n.LANGUAGES]


def write(kit: Kit) -> list[Path]:
    """Regenerate the blocks of every language's handout in place; the files that changed."""
    changed = []
    for lang in languages(kit):
        text = generated(kit, lang)
        if text != kit.handout_for(lang).read_text(encoding="utf-8"):
            kit.handout_for(lang).write_text(text, encoding="utf-8")
            changed.append(kit.handout_for(lang))
    return changed


def stale(kit: Kit) -> list[Path]:
    """The handouts whose committed text differs from what generation produces."""
    return [
        kit.handout_for(lang)
        for lang in languages(kit)
        if generated(kit, lang) != kit.handout_for(lang).read_text(encoding="utf-8")
    ]
