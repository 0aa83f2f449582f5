"""The student's README: where the work goes, and the two commands (install the wheel; grade).

One text for the student bundle (``attnlab release``: the README at the
bundle's top, the lab folder below it) and the nbgrader release (the README
and the wheel inside the lab folder).
"""

from __future__ import annotations

from autograder import tasks

TORCH_CPU = "https://download.pytorch.org/whl/cpu"

TEXT = """# Lab 7: Transformers and attention (your kit)

Your work goes into the lab folder `{lab}/`{where}: one module per step
(`softmax.py`, `scaling.py`, ...), each a stub whose functions raise
`NotImplementedError` naming the step and the handout's section. The handout
is `{prefix}{handout}` (and `{prefix}{html}`, the same page for a browser).

## Two commands

With Python 3.10 or newer (a virtual environment is a good idea:
`python3 -m venv .venv && . .venv/bin/activate`), {cwd}:

```sh
python3 -m pip install --extra-index-url {torch} {wheel}
attnlab grade
```

The first installs the lab's grader (with PyTorch's CPU build; on a machine
with a CUDA GPU, install your own torch first). The second grades every step
of your lab folder and prints one row per step, with a message for each check
that failed. Grade one step with `attnlab grade --step softmax`. The timing
step needs `attnlab timing` first (it writes `{prefix}reports/`). Your code
runs in a separate, limited process: an exception, an endless loop or a crash
costs only the checks that needed that call, and grading never changes your
files.

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
        html=handout.removesuffix(".md") + ".html",
        cwd="in this folder" if inside_lab else f"in this folder (the one that holds `{lab}/`)",
        torch=TORCH_CPU,
        wheel=wheel,
    )
