"""``attnlab workbench [FOLDER]``: write an offline page to explore the student's own attention, stage by stage.

A folder that holds none of the lab's files is a usage error (exit status 2,
one sentence), as for ``attnlab grade``: there is nothing of the student's to
show. Anything the student's code does (raise, hang, crash, return NaN, not be
written yet) is shown in the page, in the view it affects; the page is always
written and the exit status is 0.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import i18n
from autograder.base import tasks, versions
from autograder.cli import options
from autograder.cli.common import EXIT_OK, STUDENT, internal_error, usage_error
from autograder.cli.grade import NO_LAB_FILES, NOT_A_FOLDER, default_folder
from autograder.i18n import N_, _
from autograder.sandbox.client import Limits

NAME, AUDIENCE = "workbench", STUDENT
HELP = (
    "write an offline page to explore your own attention: the worked example stage by stage, the toy GPT, predictions"
)
DEFAULT_OUT = Path("workbench.html")
RUNNING = N_("Running your functions in the sandbox for the workbench (about 10 s)...")
WROTE = N_("Wrote {path}: open it in your browser (it works offline).")
NOT_WRITTEN = N_("the workbench could not be written: {error}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        nargs="?",
        type=options.folder,
        help=f"your lab folder (default: this folder if it holds the lab's files, else ./{tasks.LAB})",
    )
    parser.add_argument(
        "--out", metavar="PATH", default=str(DEFAULT_OUT), type=options.output_file("--out", DEFAULT_OUT.name),
        help=f"where to write the page (default: {DEFAULT_OUT})",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=options.seconds(), help="seconds a single call into your code may take (default: 10)"
    )
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help=f"language of the page (default: ${i18n.ENV_LANG}, else the locale, else en)",
    )


def run(args: argparse.Namespace) -> int:
    from autograder.deliver.workbench import build  # its imports (matplotlib's colormaps) only when the command runs

    try:
        i18n.activate(i18n.choose(args.lang))
    except ValueError as error:
        return usage_error(NAME, str(error))
    folder = Path(args.folder) if args.folder else default_folder(Path.cwd())
    if not folder.is_dir():
        return usage_error(NAME, _(NOT_A_FOLDER).format(folder=folder))
    if not tasks.modules_present(folder):
        examples = ", ".join(f"{m}.py" for m in tasks.MODULES[:3])
        return usage_error(NAME, _(NO_LAB_FILES).format(folder=folder, examples=examples))
    missing = versions.torch_missing(("kv_cache", "toy_gpt"))
    if missing:  # its toy GPT and KV cache views run torch: the machine's set-up, never shown as the student's
        return internal_error(NAME, missing)
    limits = Limits(call_timeout_s=args.timeout) if args.timeout else Limits()
    print(_(RUNNING), flush=True)
    try:
        build.write(build.Options(folder, limits), Path(args.out))
    except OSError as error:  # --out names a place that cannot be written
        return usage_error(NAME, _(NOT_WRITTEN).format(error=error))
    print(_(WROTE).format(path=args.out))
    return EXIT_OK
