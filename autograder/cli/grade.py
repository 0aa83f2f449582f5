"""``attnlab grade [FOLDER]``: grade a submission folder and print the per-step table."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from autograder import i18n
from autograder.base import tasks, versions
from autograder.base.files import write_atomically
from autograder.base.kit import Kit
from autograder.cli import common, options
from autograder.cli.common import EXIT_INTERNAL, EXIT_OK, STUDENT, internal_error, usage_error
from autograder.cli.early import DEFAULT_FOLDERS, default_folder  # noqa: F401 (re-exported)
from autograder.grading import engine
from autograder.i18n import N_, _
from autograder.report import render, render_terminal
from autograder.sandbox.client import Limits
from autograder.sandbox.isolation import Level

NAME, AUDIENCE = "grade", STUDENT
HELP = "grade a submission folder and print the per-step table"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        nargs="?",
        type=options.folder,
        help=f"the submission folder (default: this folder if it holds the lab's files, else ./{tasks.LAB} "
        f"or ./assignments/{tasks.LAB})",
    )
    student = common.student_install()  # a student's install lists only the options a student uses (all still work)

    def shown(text: str) -> str:
        return argparse.SUPPRESS if student else text

    parser.add_argument(
        "--json", metavar="PATH", type=options.output_file("--json", "results.json"),
        help="also write a Gradescope results.json to PATH",
    )  # fmt: skip
    parser.add_argument(
        "--public-only", action="store_true", help=shown("grade as a student's release would: public checks only")
    )
    parser.add_argument(
        "--hidden", metavar="DIR", type=options.hidden_graders,
        help=shown("folder of the hidden graders (default: the kit's hidden/lab07_attention)"),
    )  # fmt: skip
    parser.add_argument(
        "--reference", metavar="DIR", type=options.reference,
        help=shown("folder of the reference solution (default: the kit's solutions/lab07_attention)"),
    )  # fmt: skip
    parser.add_argument(
        "--secret-file", metavar="PATH", type=options.secret,
        help=shown("file holding the course secret (default: $ATTNLAB_SECRET)"),
    )  # fmt: skip
    parser.add_argument(
        "--student", metavar="ID", type=options.non_empty,
        help=shown("the submission's identity for the hidden seed (default: the folder's name)"),
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=options.seed, help=shown("hidden-input seed to reproduce a report (printed in every report)")
    )
    parser.add_argument("--step", action="append", choices=list(tasks.BY_ID), help="grade only this step (repeatable)")
    parser.add_argument(
        "--timeout", type=options.seconds(), help="seconds a single call into student code may take (default: 10)"
    )
    parser.add_argument(
        "--isolation",
        choices=[level.label for level in Level],
        help=shown("refuse to grade with weaker isolation of student code than this (see `attnlab doctor`)"),
    )
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help=f"language of the feedback (default: ${i18n.ENV_LANG}, else the locale, else en)",
    )
    parser.add_argument(
        "--html", metavar="PATH", type=options.output_file("--html", "report.html"),
        help="also write a self-contained HTML report with heatmaps of failed checks",
    )  # fmt: skip
    detail = parser.add_mutually_exclusive_group()
    detail.add_argument("--verbose", action="store_true", help="print every check, passed ones included")
    detail.add_argument("--quiet", action="store_true", help="print the per-step table only")


NOT_A_FOLDER = N_("{folder} is not a folder (give the folder that holds softmax.py, scaling.py, ...)")
NO_LAB_FILES = N_("{folder} holds none of the lab's files ({examples}, ...): give your lab folder")
GRADERS_FAILED = N_("the graders failed: {error}")
NOT_GRADED = N_("not graded: {error}")
WROTE = N_("Wrote {path}")
NOT_WRITTEN = N_("graded, but {path} could not be written: {error}")


def _secret(args: argparse.Namespace) -> tuple[str, bool]:
    """The course secret and whether it is the kit's public default."""
    if args.secret_file:  # read and checked (not empty) when the option was parsed
        return args.secret_file, False
    if options.environment_secret():
        return options.environment_secret(), False
    return engine.DEFAULT_SECRET, True


def run(args: argparse.Namespace) -> int:
    try:
        i18n.activate(i18n.choose(args.lang))
    except ValueError as error:  # $ATTNLAB_LANG names a language the kit does not ship
        return usage_error(NAME, str(error))
    folder = Path(args.folder) if args.folder else default_folder(Path.cwd())
    if not folder.is_dir():
        return usage_error(NAME, _(NOT_A_FOLDER).format(folder=folder))
    if not tasks.modules_present(folder):
        examples = ", ".join(f"{m}.py" for m in tasks.MODULES[:3])
        return usage_error(NAME, _(NO_LAB_FILES).format(folder=folder, examples=examples))
    missing = versions.torch_missing(args.step or tasks.BY_ID)
    if missing:  # the machine's set-up, not the student's code: no grading, no point lost (exit status 3)
        return internal_error(NAME, missing)
    kit = Kit.find()
    hidden = None if args.public_only else Path(args.hidden) if args.hidden else (kit.hidden if kit else None)
    reference = Path(args.reference) if args.reference else (kit.solutions if kit else None)
    secret, default_secret = _secret(args)
    identity = args.student or folder.resolve().name
    seed = args.seed if args.seed is not None else engine.seed_for(secret, identity)
    limits = Limits(call_timeout_s=args.timeout) if args.timeout else Limits()
    options = engine.GradeOptions(
        submission=folder,
        hidden=hidden,
        reference=reference,
        seed=seed,
        public_only=hidden is None,
        steps=tuple(args.step) if args.step else None,
        limits=limits,
        isolation=args.isolation,
    )
    try:
        report = engine.grade(options)
    except engine.IsolationRefused as error:
        return usage_error(NAME, _(NOT_GRADED).format(error=error))
    except engine.HandInRefused as error:  # past one of the intake's limits: one sentence, exit status 2
        from autograder.judge import messages

        return usage_error(NAME, messages.hand_in_refused(error))
    except engine.GradingError as error:
        return internal_error(NAME, _(GRADERS_FAILED).format(error=error))
    if hidden is not None and default_secret and args.seed is None:
        report = engine.with_note(report, _(engine.NOTE_DEFAULT_SECRET))
    untested = versions.torch_warning(versions.installed_torch())
    if untested:  # an untested torch: said in the report, so a check that fails for it is not taken for the student's
        report = engine.with_note(report, untested)
    detail = (
        render_terminal.QUIET if args.quiet else render_terminal.VERBOSE if args.verbose else render_terminal.NORMAL
    )
    print(render.table(report, detail, lang=args.lang))
    outputs = []  # after grading: every sandbox process has ended
    if args.json:
        outputs.append((Path(args.json), render.gradescope_json(report)))
    if args.html:
        from autograder.report import render_html  # matplotlib: loaded only when a page is asked for

        page = render_html.page(report, handout=handout_href(folder, kit, Path(args.html)))
        outputs.append((Path(args.html), page))
    for path, content in outputs:
        try:
            write_atomically(path, content, make_folder=False)
        except OSError as error:  # the folder went away or filled up while grading ran
            return usage_error(NAME, _(NOT_WRITTEN).format(path=path, error=error.strerror or error))
        print(_(WROTE).format(path=path))
    return EXIT_INTERNAL if report.internal_errors else EXIT_OK


def handout_href(folder: Path, kit: Kit | None, page: Path) -> str | None:
    """The handout's HTML page (in the active language) as a link from the report written at ``page``: the lab
    folder's copy (a bundle or an nbgrader release), else the kit's built page; None when neither exists."""
    from autograder.report import render_html

    lang = i18n.language()
    candidates = [folder / render_html.handout_page(lang)] + ([kit.html_for(lang)] if kit else [])
    found = next((path.resolve() for path in candidates if path.is_file()), None)
    if found is None:
        return None
    try:
        return Path(os.path.relpath(found, page.resolve().parent)).as_posix()
    except ValueError:  # another drive (Windows): an absolute link
        return found.as_uri()
