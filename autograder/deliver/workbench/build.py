"""Run the student's functions for every view, then write the page: ``attnlab workbench``'s engine.

:func:`collect` returns everything the page needs as one JSON-able dict (the
data tests read it without a browser); :func:`write` renders it
(:mod:`autograder.deliver.workbench.page`) and writes the file whole or not at all.
The NumPy steps run in one sandbox, the toy GPT (torch) in a second; they
share one record of functions that hung, so a function that hangs costs one
timeout, not one per view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.base.files import write_atomically
from autograder.deliver.workbench import experiments, page, toy, worked
from autograder.deliver.workbench.found import Caller
from autograder.i18n import language
from autograder.sandbox.client import Hangs, Limits, Sandbox, prestart
from autograder.sandbox.isolation import Level, choose


@dataclass(frozen=True)
class Options:
    """The submission folder and the sandbox's limits."""

    submission: Path
    limits: Limits = field(default_factory=Limits)
    isolation: Level | None = None  # None: the strongest layer this machine gives


def _status(view: dict[str, Any]) -> str:
    """``ok``, ``todo`` (only work not written yet stands in the way) or ``problem`` (an error, or a warning such
    as NaN entries)."""
    found = view.get("problems", [])
    if not found:
        return "problem" if view.get("warnings") else "ok"
    return "todo" if all(p["todo"] for p in found) else "problem"


def collect(options: Options) -> dict[str, Any]:
    """Every view's data, computed by the submission's own functions in the sandbox."""
    level = options.isolation if options.isolation is not None else choose()
    prestart(torch=True, level=level)  # the toy GPT's child needs torch; its fork server starts loading it now
    hangs = Hangs()
    with Sandbox(options.submission, options.limits, hangs, level, label="workbench") as sandbox:
        caller = Caller(sandbox)
        stages = worked.stages(caller)
        calibrator = worked.calibrator(caller)
        with Sandbox(options.submission, options.limits, hangs, level, label="workbench-torch") as torch_sandbox:
            gpt = toy.views(Caller(torch_sandbox))
        tried = experiments.experiments(caller, gpt["decode"])
    views = {f"stage:{name}": stages[name] for name in worked.STAGES}
    views |= {"calibrator": calibrator, "tracker": gpt["forward"], "decode": gpt["decode"]}
    views["generate"] = gpt["generate"]
    return {
        "meta": {
            "folder": Path(options.submission).resolve().name,
            "isolation": level.label,
            "version": __version__,
            "lang": language(),
            "status": {name: _status(view) for name, view in views.items()},
        },
        "inputs": worked.inputs(),
        "stages": stages,
        "calibrator": calibrator,
        "gpt": gpt,
        "experiments": tried,
    }


def write(options: Options, out: Path) -> dict[str, Any]:
    """Collect the data and write the page to ``out`` (atomically); the data."""
    data = collect(options)
    write_atomically(Path(out), page.render(data))
    return data
