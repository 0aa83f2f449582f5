"""The one registry of lab steps: ids, titles, points, handout anchors.

Everything else reads points and anchors from here: the graders' markers are
checked against these totals when grading starts, the report computes its
totals from them, and stub messages name the step and its handout section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

LAB = "lab07_attention"
HANDOUT = "handouts/lab07_attention.md"
QUESTIONS = (
    Path(__file__).parents[1] / "data" / "predictions.toml"
)  # predict-first questions; instructors may add their own


PREDICTION_HIDDEN_SHARE = 0.5  # of each question's points: the instructor's check against the reference


def _prediction_points() -> float:
    """The predictions step is worth the sum of its questions' points (the data file decides).

    Each question's points are split: the public check (the prediction agrees with what the student's own code
    computes) carries ``1 - PREDICTION_HIDDEN_SHARE`` of them, the hidden check (it agrees with the reference)
    the rest.
    """
    with QUESTIONS.open("rb") as file:
        return float(sum(q["points"] for q in tomllib.load(file)["question"]))


@dataclass(frozen=True)
class Step:
    """One lab step: the module a student writes and what it is worth."""

    id: str  # also the module name (softmax -> softmax.py) and the handout anchor
    title: str
    points: float  # public + hidden
    hidden_points: float  # of which only the instructor's graders award
    functions: tuple[str, ...]
    torch: bool = False  # the step's modules use PyTorch (the reference's too)
    measures_time: bool = False  # its checks time student code: graded on a CPU no other step's work shares
    grader_torch: bool | None = None  # its checks use torch (on autograder.judge.oracle; None: as ``torch``)
    child_torch: bool | None = None  # its sandbox children may load torch modules (None: as ``torch``)

    @property
    def grader_uses_torch(self) -> bool:
        """Whether this step's checks compute with torch (its reference, hidden checks or diagnoses): in the oracle's
        child of the torch fork server in the namespaces layer, in the grader elsewhere
        (:mod:`autograder.judge.oracle`)."""
        return self.torch if self.grader_torch is None else self.grader_torch

    @property
    def child_uses_torch(self) -> bool:
        """Whether this step's sandbox children may load torch (they fork from the fork server that has it)."""
        return self.torch if self.child_torch is None else self.child_torch

    @property
    def uses_torch(self) -> bool:
        """Whether anything of this step needs torch: its modules, its sandbox children or its checks."""
        return self.torch or self.child_uses_torch or self.grader_uses_torch

    @property
    def public_points(self) -> float:
        return self.points - self.hidden_points

    @property
    def module(self) -> str:
        return self.id

    @property
    def anchor(self) -> str:
        return self.id

    @property
    def handout(self) -> str:
        return f"{HANDOUT}#{self.anchor}"


def handout_file(lang: str = "en") -> str:
    """The handout in language ``lang``: ``handouts/lab07_attention.md``, ``handouts/lab07_attention.tr.md``."""
    return HANDOUT if lang == "en" else HANDOUT.removesuffix(".md") + f".{lang}.md"


def handout_link(step: Step, lang: str = "en") -> str:
    """The section of ``step`` in the handout of language ``lang`` (the same anchors in every language)."""
    return f"{handout_file(lang)}#{step.anchor}"


STEPS: tuple[Step, ...] = (
    Step("softmax", "Softmax", 10, 3, ("softmax",)),
    Step("scaling", "Scaled dot-product attention", 20, 5, ("project", "scores", "scaled_scores", "attention")),
    Step("mask", "Causal mask", 14, 4, ("causal_mask", "apply_mask", "prefix_change")),
    Step("positions", "Positions", 14, 4, ("sinusoidal_encoding", "rope", "alibi_slopes", "alibi_bias")),
    Step("equivariance", "Permutation equivariance", 8, 2, ("restored_outputs", "permutation_gap")),
    Step("moe_router", "Mixture-of-experts router", 12, 3, ("route", "moe_layer", "expert_load", "moe_params")),
    Step(
        "kv_cache", "KV cache", 14, 4, ("KVCache", "decode_step", "incremental_attention", "kv_cache_bytes"), torch=True
    ),
    Step("reference_check", "Check against PyTorch", 6, 2, ("compare_with_torch",), torch=True),
    Step(
        "block",
        "Multi-head attention and the block",
        14,
        4,
        ("multi_head", "layer_norm", "rms_norm", "feed_forward", "block"),
    ),
    Step(
        "gradients",
        "Gradients of one head",
        10,
        3,
        ("attention_backward", "central_difference"),
        grader_torch=True,  # the hidden checks compare with torch autograd (on the oracle)
    ),
    Step(
        "costs",
        "The chapter's arithmetic",
        10,
        2,
        ("block_params", "gpt2_small_params", "score_matrix_bytes", "attention_flop_share", "crossover_length"),
    ),
    Step(
        "toy_gpt",
        "A toy GPT from your own pieces",
        14,
        4,
        ("layer_norm", "gelu", "causal_self_attention", "mlp", "gpt_forward", "new_cache", "gpt_step", "generate"),
        torch=True,
    ),
    Step(
        "timing",
        "Timing attention",
        12,
        0,
        ("time_attention", "loglog_slope", "time_decoding", "peak_memory"),
        torch=True,
        measures_time=True,
        grader_torch=False,  # the report is data, the measurements run in the sandbox
    ),
    Step(
        "predictions",
        "Predict first, then check",
        _prediction_points(),
        _prediction_points() * PREDICTION_HIDDEN_SHARE,
        ("PREDICTIONS",),
        child_torch=True,  # a question may be checked by running any of the student's modules (kv_cache is torch)
    ),
)
BY_ID = {step.id: step for step in STEPS}
MODULES = tuple(step.module for step in STEPS)
# The checks whose points depend on the device a report was measured on (check name -> points, the graders'
# marks): *for review* where the grader lacks that device. nbgrader scores them in a manually graded cell of their
# own (nbgrader_course.review); tests/test_step_timing.py holds these to the graders.
REVIEW_CHECKS: dict[str, dict[str, float]] = {
    "timing": {
        "test_attention_slopes": 1.0,
        "test_causal_and_naive_over_sdpa": 0.5,
        "test_memory": 0.5,
        "test_decoding_latency": 1.0,
    },
}


def review_points(step_id: str) -> float:
    """The points of step ``step_id`` that may wait for review (0 for a step without device-specific checks)."""
    return sum(REVIEW_CHECKS.get(step_id, {}).values())


def step(step_id: str) -> Step:
    """The registered step ``step_id``; ``KeyError`` names the known ones."""
    try:
        return BY_ID[step_id]
    except KeyError:
        raise KeyError(f"no lab step {step_id!r}; known steps: {', '.join(BY_ID)}") from None


def modules_present(folder: Path) -> tuple[str, ...]:
    """The registered step modules that exist in ``folder``."""
    return tuple(m for m in MODULES if (Path(folder) / f"{m}.py").is_file())


def total_points(*, public_only: bool = False) -> float:
    return sum(s.public_points if public_only else s.points for s in STEPS)
