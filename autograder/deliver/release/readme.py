"""The student's README: where the work goes, and the three commands (install the tested torch, the wheel; grade).

One text for the student bundle (``attnlab release``: the README at the
bundle's top, the lab folder below it) and the nbgrader release (the README
and the wheel inside the lab folder).
"""

from __future__ import annotations

from autograder.base import tasks, versions
from autograder.base.kit import STUDENT_COMMANDS

TEXT = """# Lab 7: Transformers and attention (your kit)

Your work goes into the lab folder `{lab}/`{where}: one module per step
(`softmax.py`, `scaling.py`, ...), each a stub whose functions raise
`NotImplementedError` naming the step and the handout's section. The handout
is `{prefix}{handout}`, with its translations beside it
(`{prefix}{translation}`, by language code) and an HTML page of each for a browser
(`{prefix}{html}`, ...).

## Set up, then grade

With Python 3.10 or newer (a virtual environment is a good idea:
`python3 -m venv .venv && . .venv/bin/activate`), {cwd}:

```sh
{torch_command}
python3 -m pip install {wheel}
attnlab grade
```

The first command installs PyTorch {torch}, the release this lab is tested
with, as its CPU build (no GPU is needed), from PyTorch's CPU index only: if
that index cannot be reached it stops with an error rather than fetch another
build. To use another torch (a CUDA build for your GPU, or one you have
already), install it instead of running the first command; `attnlab doctor`
says whether the torch you have is the tested release. The second installs the
lab's grader, which brings no torch of its own: without one, `attnlab grade`
stops before grading and prints the first command (no point is lost). The third grades every step of
your lab folder and prints one row per step, with a message for each check
that failed. Grade one step with `attnlab grade --step softmax`. The timing
step needs `attnlab timing` first (it writes `{prefix}reports/`). Your code
runs in a separate, limited process: an exception, an endless loop or a crash
costs only the checks that needed that call, and grading never changes your
files.

The grader's commands: {commands} (`attnlab doctor`: how your code is
isolated while it is graded, and whether your torch is the tested release).

## Handing in on Gradescope

If your course grades on Gradescope, upload the lab folder's files: the step
modules (`*.py`), `toy_gpt_weights.npz` and the timing report
`reports/timing.json` (keep it in its `reports/` folder, or put `timing.json`
beside the modules); a zip of the whole `{lab}/` folder works as well. A
notebook instead: its `%%writefile softmax.py` cells are your modules, and one
more cell that starts with the line `%%writefile reports/timing.json` followed
by that file's contents carries the timing report. Only regular files count: a
symbolic link is not followed.

These are the public checks. Your instructor also runs hidden checks, on fresh
inputs with the same properties, worth the points the handout's table puts in
parentheses.
"""


def text(wheel: str, *, inside_lab: bool) -> str:
    """The README for the wheel file ``wheel``: at the bundle's top (``inside_lab`` False) or inside the lab folder."""
    lab = tasks.LAB
    handout = tasks.HANDOUT
    return TEXT.format(
        lab=lab,
        prefix="" if inside_lab else f"{lab}/",
        where=" (this folder)" if inside_lab else " of this bundle",
        handout=handout,
        translation=handout.removesuffix(".md") + ".<language>.md",
        html=handout.removesuffix(".md") + ".html",
        cwd="in this folder" if inside_lab else f"in this folder (the one that holds `{lab}/`)",
        commands=", ".join(f"`attnlab {name}`" for name in STUDENT_COMMANDS),
        torch=versions.TESTED_TORCH,
        torch_command=versions.install_command(),
        wheel=wheel,
    )
