"""The lab notebook (``assignments/lab07_attention/lab07_attention.ipynb``), built from this readable source.

The notebook is nbgrader's *source* version: one locked grade cell per lab
step (its points are the registry's, less a review cell's), a short introduction per step linking
the handout, cells that show the timing plots, manually graded answer
cells for the chapter's explanation questions, with model answers that
nbgrader strips at release, and after the timing grade cell a manually graded
task cell worth the device-specific points (:mod:`autograder.deliver.nbgrader_course.review`;
the grade cell is worth the rest of the step).

A grade cell never imports the student's modules: it calls
:func:`autograder.deliver.nbgrader_course.cells.grade`, which runs the sandboxed
grader on the notebook's folder in a separate process. The released cell
grades the public checks; inside ``### BEGIN HIDDEN TESTS`` the cell names the
instructor's private folder (hidden graders, reference, course secret), so the
autograded cell grades everything.

Regenerate the committed notebook with ``python -m autograder.deliver.nbgrader_course.notebook``;
a kit test fails when it differs from :func:`build`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import nbformat

from autograder import i18n
from autograder.base import tasks
from autograder.base.kit import Kit
from autograder.deliver.nbgrader_course import review
from autograder.i18n import N_, Nn_, _, counted

NOTEBOOK = f"{tasks.LAB}.ipynb"
REPO_PATH = Kit.source_tree().assignments / NOTEBOOK  # the committed notebook
PRIVATE_PLACEHOLDER = "PRIVATE-FOLDER: attnlab nbgrader-course writes the course's private folder here"
GRADE_ID = "grade_{step}"  # the grade cell of a step; nbgrader_course.preprocessors reads steps back from it
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


@dataclass(frozen=True)
class Question:
    """A manually graded explanation question, asked after the step it belongs to."""

    id: str
    after: str  # the step id
    points: float
    prompt: str
    model_answer: str  # for the graders; nbgrader replaces it by "YOUR ANSWER HERE" at release


# What each step is for, in two or three sentences; the handout has the rest.
INTROS: dict[str, str] = {
    "softmax": N_(
        "Turn each row of scores into weights that are positive and sum to 1, "
        "without overflowing on large scores (subtract the row's maximum first)."
    ),
    "scaling": N_(
        "One attention head from its equation, softmax(QK^T / sqrt(d_k)) V, reproducing the chapter's "
        "worked example exactly: projections, raw scores, scaled scores and the head itself, with "
        "clear errors for bad shapes."
    ),
    "mask": N_(
        "Stop a decoder from looking ahead: the causal mask, masking with -inf before the softmax, "
        "and a behavioural proof that appending a token leaves the earlier outputs unchanged."
    ),
    "positions": N_(
        "The chapter's three ways to give attention a sense of order: sinusoidal vectors added to the tokens, "
        "RoPE rotations of queries and keys, and ALiBi's distance penalty on the scores."
    ),
    "equivariance": N_(
        "Measure that unmasked attention without positions does not see word order, "
        "then break that symmetry with a position signal, and with the causal mask alone."
    ),
    "moe_router": N_(
        "The router of a mixture-of-experts layer (top-k experts, gates renormalised over the chosen k), "
        "the layer itself, and the arithmetic of total versus active parameters."
    ),
    "kv_cache": N_(
        "Generate one token at a time, reusing the keys and values of earlier tokens instead of "
        "recomputing them "
        "(PyTorch from here on), and compute what the cache costs in memory."
    ),
    "reference_check": N_(
        "Compare your attention with PyTorch's scaled_dot_product_attention on random inputs, "
        "with the same mask and scale, and report the largest difference and the kernel that ran."
    ),
    "block": N_(
        "The rest of one transformer block: several heads and their output projection, "
        "LayerNorm and RMSNorm, the feed-forward network, and the chapter's worked block."
    ),
    "gradients": N_("The backward pass of one unmasked head by hand, checked against central differences."),
    "costs": N_(
        "The chapter's rules of thumb for parameters, memory and FLOPs, as functions, "
        "so that every number in its tables is something you can recompute."
    ),
    "toy_gpt": N_(
        "Assemble a small GPT-2 style decoder from your own pieces (LayerNorm with gain and bias, "
        "GELU, causal multi-head attention, tied embeddings) "
        "and run the kit's toy model on it; then generate greedily with and without your KV cache "
        "and see the same tokens come out."
    ),
    "timing": N_(
        "Measure how one head's time grows with the sequence length and fit the exponent on log-log axes, "
        "measure peak memory, and time generation with and without a KV cache. "
        "Run `attnlab timing` in this folder first: it writes `reports/timing.json` and the plots shown below."
    ),
    "predictions": N_(
        "Before you run each step, write in `predictions.py` what you expect it to give (which key "
        "a query favours, "
        "an output shape, the weights of a single token, the first row of a causal mask, a "
        "KV-cache size): every entry starts "
        "as `None`, and a plain literal is all you write. The public checks compare your predictions "
        "with the values your own code computes; when your instructor grades, the hidden half of the "
        "points compares them with the values the reference computes. A value is shown only once you "
        "have answered it."
    ),
}

QUESTIONS: tuple[Question, ...] = (
    Question(
        "causal_equivariance",
        "equivariance",
        2,
        N_(
            "Without any position signal, the causal mask alone makes the permutation gap large. "
            "Explain why, to someone who has not read the chapter."
        ),
        "Each output slot averages over the keys it may see, and the mask lets slot s see only slots 0..s: "
        "the first slot sees one token, the last sees all of them. After a shuffle, a word that moves to another "
        "slot averages over a different set of tokens, so its output changes; the mask ties what a token sees to "
        "its position, which leaks order into the head (why decoders without positional encoding, NoPE, still work).",
    ),
    Question(
        "resource_ran_out",
        "timing",
        2,
        N_(
            "What was the longest sequence your machine handled, and which resource ran out first there "
            "(time, memory for the score matrix, something else)? Support it with your numbers or plots."
        ),
        "Full marks for a length and a resource backed by the student's report: typically memory, since the naive "
        "head keeps the n x n float32 score matrix (4 n^2 bytes, 64 MiB at n = 4096) and its peak is about three "
        "times that; on a GPU, device memory (max_memory_reserved) runs out before time becomes prohibitive.",
    ),
    Question(
        "cpu_slope",
        "timing",
        2,
        N_("Why is the fitted slope of the naive head on a CPU not exactly 2?"),
        "The arithmetic is quadratic, but at small n fixed costs (Python, dispatch, allocation) dominate and pull "
        "the slope below 2, while at large n the temporaries (64 MiB at n = 4096) miss the allocator's reuse cache, "
        "so every call page-faults on fresh memory, a cost that grows faster than the arithmetic: about 2.4 to 2.8 "
        "for n >= 512. SDPA, which never keeps the whole matrix, stays near 2.",
    ),
)

HEADER = N_("""# Lab 7: Transformers and attention

You write the lab in the Python files of this folder (`softmax.py`, `scaling.py`, ..., `timing.py`);
this notebook grades them and holds your written answers. The handout,
[`{handout}`]({handout}), explains every step.

- Each **grade cell** runs the kit's grader on this folder in a separate, sandboxed process and
  prints what passed and what did not. Your code never runs inside this notebook's kernel, so
  restarting the kernel or importing your modules here changes nothing about the grade.
- Before the deadline the cells run the **public** checks; when your instructor grades, the same
  cells also run hidden checks on fresh inputs.
- Write your answers to the questions in the answer cells. You may add cells to experiment, but
  code cells you add are **not run** when the notebook is graded.""")

PLOTS_COMMENT = N_("Shows the plots that `attnlab timing` wrote into reports/ (nothing runs your code here).")
PLOTS_CELL = """# {comment}
from autograder.deliver.nbgrader_course.cells import show_timing_plots

show_timing_plots()"""
GRADE_COMMENT = Nn_(
    'Grades step "{title}" ({points} point): the kit\'s grader runs on this folder\n'
    "# in a separate, sandboxed process and prints its feedback; this cell's value is your score.",
    'Grades step "{title}" ({points} points): the kit\'s grader runs on this folder\n'
    "# in a separate, sandboxed process and prints its feedback; this cell's value is your score.",
)
PUBLIC_COMMENT, PRIVATE_COMMENT = (
    N_("the public checks"),
    N_("the instructor's folder: hidden checks, reference, course secret"),
)
STEP_INTRO = N_("Write {functions} in `{module}.py`. Handout: [section {number}, {title}]({handout}).")
QUESTION = Nn_(
    "**Question ({points} point, graded by hand).** {prompt}",
    "**Question ({points} points, graded by hand).** {prompt}",
)
MODEL_ANSWER = N_("**Model answer (instructor).** {answer}")


def grade_cell_source(step: tasks.Step, private: str) -> str:
    """The code of a step's grade cell (in the active language); ``private`` is the instructor's private folder."""
    lang = i18n.language()
    call = f'grade("{step.id}", private)' if lang == i18n.SOURCE else f'grade("{step.id}", private, lang="{lang}")'
    points = review.grade_cell_points(step)
    comment = counted(GRADE_COMMENT, points).format(title=_(step.title), points=f"{points:g}")
    return f'''# {comment}
from autograder.deliver.nbgrader_course.cells import grade

private = None  # {_(PUBLIC_COMMENT)}
{HIDDEN_BEGIN}
private = r"{private}"  # {_(PRIVATE_COMMENT)}
{HIDDEN_END}
{call}'''


def _locked(grade_id: str, *, points: float | None = None) -> dict:
    nbgrader = {
        "grade": points is not None,
        "grade_id": grade_id,
        "locked": True,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    if points is not None:
        nbgrader["points"] = points
    return {"deletable": False, "editable": False, "nbgrader": nbgrader}


def _task(grade_id: str, points: float) -> dict:
    """nbgrader's manually graded task cell (markdown, locked; nbgrader 0.9 takes a markdown cell that is graded
    but not a solution only as a task)."""
    nbgrader = {
        "grade": False,
        "grade_id": grade_id,
        "locked": True,
        "points": points,
        "schema_version": 3,
        "solution": False,
        "task": True,
    }
    return {"deletable": False, "editable": False, "nbgrader": nbgrader}


def _answer(grade_id: str, points: float) -> dict:
    return {
        "nbgrader": {
            "grade": True,
            "grade_id": grade_id,
            "locked": False,
            "points": points,
            "schema_version": 3,
            "solution": True,
            "task": False,
        }
    }


def _step_intro(number: int, step: tasks.Step) -> str:
    functions = ", ".join(f"`{name}`" for name in step.functions)
    title = _(step.title)
    more = _(STEP_INTRO).format(
        functions=functions,
        module=step.module,
        number=number,
        title=title,
        handout=tasks.handout_link(step, i18n.language()),
    )
    return f"## {number}. {title}\n\n{_(INTROS[step.id])}\n\n{more}"


def build(private: str = PRIVATE_PLACEHOLDER, lang: str = i18n.SOURCE) -> nbformat.NotebookNode:
    """The source notebook in language ``lang``; the course writer passes its private folder as ``private``."""
    if '"' in private or "\n" in private:
        raise ValueError(f"the private folder's path cannot hold quotes or newlines: {private!r}")
    with i18n.using(lang):
        return _build(private)


def _build(private: str) -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [md(_(HEADER).format(handout=tasks.handout_file(i18n.language())), id="intro", metadata=_locked("intro"))]
    for number, step in enumerate(tasks.STEPS, start=1):
        cells.append(md(_step_intro(number, step), id=f"{step.id}-intro", metadata=_locked(f"intro_{step.id}")))
        if step.id == "timing":
            plots = PLOTS_CELL.format(comment=_(PLOTS_COMMENT))
            cells.append(code(plots, id="timing-plots", metadata=_locked("timing_plots")))
        grade_id = GRADE_ID.format(step=step.id)
        cells.append(
            code(
                grade_cell_source(step, private),
                id=grade_id.replace("_", "-"),
                metadata=_locked(grade_id, points=review.grade_cell_points(step)),
            )
        )
        if review.has_review(step):
            review_id = review.GRADE_ID.format(step=step.id)
            cells.append(
                md(
                    review.before_grading(step),
                    id=review_id.replace("_", "-"),
                    metadata=_task(review_id, tasks.review_points(step.id)),
                )
            )
        for question in (q for q in QUESTIONS if q.after == step.id):
            prompt = counted(QUESTION, question.points).format(points=f"{question.points:g}", prompt=_(question.prompt))
            cells.append(md(prompt, id=f"{question.id}-question", metadata=_locked(f"question_{question.id}")))
            answer = _(MODEL_ANSWER).format(answer=question.model_answer)
            cells.append(
                md(
                    answer,
                    id=f"{question.id}-answer".replace("_", "-"),
                    metadata=_answer(f"answer_{question.id}", question.points),
                )
            )
    metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nbformat.v4.new_notebook(cells=cells, metadata=metadata)


def text(notebook: nbformat.NotebookNode) -> str:
    """The notebook as the file holds it."""
    return nbformat.writes(notebook) + "\n"


def steps_of(notebook: nbformat.NotebookNode) -> list[str]:
    """The step ids whose grade cells the notebook holds, in order."""
    prefix = GRADE_ID.format(step="")
    ids = [
        cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]
    return [
        grade_id.removeprefix(prefix)
        for grade_id in ids
        if grade_id.startswith(prefix) and grade_id.removeprefix(prefix) in tasks.BY_ID
    ]


def main() -> int:
    """Rewrite the committed notebook from :func:`build`."""
    content = text(build())
    if REPO_PATH.is_file() and REPO_PATH.read_text(encoding="utf-8") == content:
        print(f"{REPO_PATH} is up to date")
        return 0
    REPO_PATH.write_text(content, encoding="utf-8")
    print(f"wrote {REPO_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
