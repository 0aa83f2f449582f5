"""Every ``attnlab`` option is checked when it is parsed: one sentence, exit status 2, before any work.

The parser (:class:`Parser`) prints a parse error as the one line ``attnlab COMMAND: what is wrong`` (no usage
block, no traceback); an unknown option names the command and the nearest option it has. Each value is checked
by its ``type=`` here: numbers in their ranges (:func:`seconds`, :func:`whole`, :func:`seed`), folders and files
that exist and are of the right kind (:func:`folder`, :func:`secret`, :func:`kit`), places a file or folder can
be written (:func:`output_file`, :func:`output_folder`). A check reads, never writes: nothing is created or
removed by a refused command. The sentences are the student's too (``grade``, ``timing``, ``workbench``), so they
are in the catalogs; :func:`language_of` picks the language before the parser runs.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import NoReturn

from autograder.cli import common
from autograder.cli.common import EXIT_USAGE, output_problem
from autograder.i18n import N_, _

SECONDS = N_("takes seconds, a number above 0 and at most {most:g}, not {value}")
WHOLE = N_("takes a whole number from {least} to {most}, not {value}")
SEED = N_("takes a seed, a whole number from 0 to 2**64 - 1, not {value} (every report prints its seed)")
MISSING = N_("{path} does not exist")
NOT_A_FOLDER = N_("{path} is not a folder")
IS_A_FOLDER = N_("{path} is a folder, not a file")
UNREADABLE = N_("{path} cannot be read ({reason})")
EMPTY_SECRET = N_(
    "{path} is empty: a course secret is one line of text; make one with "
    "python3 -c 'import secrets; print(secrets.token_hex(32))' > {path}"
)
NO_HIDDEN = N_("{path} holds no hidden graders (test_<step>_hidden.py files)")
NO_REFERENCE = N_("{path} holds none of the reference's modules (softmax.py, scaling.py, ...)")
NOT_A_KIT = N_("{path} is not an instructor kit: it has no {solutions} and {hidden}")
NOT_OURS = N_(
    "cannot write {option} {path}: a file the kit did not write is there, and it is never replaced; "
    "give another path, or move the file away"
)
EMPTY = N_("takes a non-empty value")
ENV_NOT_A_KIT = N_("${variable}: {problem}; unset it, or point it at the kit's folder")
UNKNOWN = N_("unknown option {option} (did you mean {nearest}?)")
UNKNOWN_NO_MATCH = N_("unknown option {option} (attnlab {command} --help lists its options)")

MOST_SECONDS = 24 * 3600.0  # a day: any limit above it is a typo, not a course's wish
MOST_SEED = 2**64 - 1


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line ``PROG: message`` on stderr with exit status 2."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # argparse's "argument --timeout: ..." reads "--timeout: ..."
            message = message.removeprefix("argument ")
            option, _sep, rest = message.partition(": ")
            message = rest if option in rest else message  # the sentence names its option already
        print(f"{self.prog}: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, but an unknown ``--option`` of a command is refused first: before any value is checked, so
        that ``--steps softmax`` is the unknown option it is, not a folder named softmax."""
        if args is not None and self._subparsers is None:
            known = [name for action in self._actions for name in action.option_strings if name.startswith("--")]
            for token in args:
                if token == "--":
                    break
                name = token.partition("=")[0]
                if token.startswith("--") and not any(option.startswith(name) for option in known):
                    self.unknown([token])
        return super().parse_known_args(args, namespace)

    def unknown(self, extra: Sequence[str]) -> NoReturn:
        """Refuse the arguments ``extra`` this (command's) parser does not take, naming the nearest option."""
        option = next((item for item in extra if item.startswith("-")), None)
        if option is None:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        known = [name for action in self._actions for name in action.option_strings]
        nearest = difflib.get_close_matches(option.partition("=")[0], known, n=1, cutoff=0.6)
        command = self.prog.removeprefix("attnlab ")
        if nearest:
            self.error(_(UNKNOWN).format(option=option, nearest=nearest[0]))
        self.error(_(UNKNOWN_NO_MATCH).format(option=option, command=command))


def language_of(argv: Sequence[str]) -> str | None:
    """The ``--lang`` value of a command line (before it is parsed: the parser's errors speak it), else None."""
    for index, item in enumerate(argv):
        if item == "--lang" and index + 1 < len(argv):
            return argv[index + 1]
        if item.startswith("--lang="):
            return item.partition("=")[2]
    return None


def language_of_command_line(argv: Sequence[str]) -> AbstractContextManager[None]:
    """While parsing, the language of ``argv``'s ``--lang`` (else ``$ATTNLAB_LANG``, the locale); the one before
    comes back afterwards (each command chooses its own). An unknown language is the parser's to refuse, in
    English."""
    from autograder import i18n

    return i18n.using(i18n.choose_or_source(language_of(argv)))


def environment_problem() -> str | None:
    """Why the environment cannot be used as it is set (``$ATTNLAB_KIT`` naming no kit), in one sentence; else None.

    A kit named by the environment that is not there would otherwise grade the public checks only, silently.
    """
    from autograder.base.kit import ENV_KIT

    named = os.environ.get(ENV_KIT)
    if not named:
        return None
    try:
        kit(named)
    except argparse.ArgumentTypeError as error:
        return _(ENV_NOT_A_KIT).format(variable=ENV_KIT, problem=error)
    return None


def environment_secret() -> str | None:
    """``$ATTNLAB_SECRET`` stripped; None when it is unset or blank (a blank secret is no secret: the report then
    notes the kit's public default, as without one)."""
    return os.environ.get("ATTNLAB_SECRET", "").strip() or None


def _named(check: Callable[[str], object], name: str) -> Callable[[str], object]:
    check.__name__ = name  # argparse names the type in a message it writes itself
    return check


def seconds(most: float = MOST_SECONDS) -> Callable[[str], float]:
    """A number of seconds above 0 and at most ``most`` (a time limit)."""

    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= most):
            raise argparse.ArgumentTypeError(_(SECONDS).format(most=most, value=text))
        return value

    return _named(check, "seconds")


def whole(least: int, most: int) -> Callable[[str], int]:
    """A whole number from ``least`` to ``most``."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(_(WHOLE).format(least=least, most=most, value=text))
        return value

    return _named(check, "whole number")


def seed(text: str) -> int:
    """A hidden-input seed: a whole number from 0 to 2**64 - 1."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MOST_SEED:
        raise argparse.ArgumentTypeError(_(SEED).format(value=text))
    return value


def non_empty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(_(EMPTY))
    return text


def folder(text: str) -> Path:
    """A folder that exists."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(_(MISSING).format(path=path))
    if not path.is_dir():
        raise argparse.ArgumentTypeError(_(NOT_A_FOLDER).format(path=path))
    return path


def hidden_graders(text: str) -> Path:
    """A folder that holds hidden graders (``test_<step>_hidden.py``)."""
    path = folder(text)
    if not any(path.glob("test_*_hidden.py")):
        raise argparse.ArgumentTypeError(_(NO_HIDDEN).format(path=path))
    return path


def reference(text: str) -> Path:
    """A folder that holds the reference's modules."""
    from autograder.base import tasks

    path = folder(text)
    if not tasks.modules_present(path):
        raise argparse.ArgumentTypeError(_(NO_REFERENCE).format(path=path))
    return path


def readable_file(text: str) -> Path:
    """A regular file that exists and can be read."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(_(MISSING).format(path=path))
    if path.is_dir():
        raise argparse.ArgumentTypeError(_(IS_A_FOLDER).format(path=path))
    try:
        with path.open("rb") as file:
            file.read(1)
    except OSError as error:
        raise argparse.ArgumentTypeError(_(UNREADABLE).format(path=path, reason=error.strerror or error)) from None
    return path


def secret(text: str) -> str:
    """The course secret held in the file ``text`` (its first line, stripped); an empty file is refused."""
    path = readable_file(text)
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise argparse.ArgumentTypeError(_(UNREADABLE).format(path=path, reason=reason)) from None
    if not value:
        raise argparse.ArgumentTypeError(_(EMPTY_SECRET).format(path=path))
    return value


def kit(text: str) -> Path:
    """A folder that is an instructor kit (``solutions/<lab>`` and ``hidden/<lab>``), resolved."""
    from autograder.base.kit import Kit

    path = folder(text).resolve()
    found = Kit(path)
    if not found.is_kit():
        solutions, hidden = (p.relative_to(path).as_posix() + "/" for p in (found.solutions, found.hidden))
        raise argparse.ArgumentTypeError(_(NOT_A_KIT).format(path=text, solutions=solutions, hidden=hidden))
    return path


def written_by_kit(path: Path) -> bool:
    """Whether the existing file ``path`` is one the kit writes (so a later run may replace it): a page naming
    the kit as its generator, a results JSON, a gradebook CSV, an autograder zip, a screenshot or a PDF."""
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    if head.startswith((b"\x89PNG", b"%PDF", b"student_id,")):
        return True
    if head.startswith(b"PK"):
        import zipfile

        try:
            with zipfile.ZipFile(path) as archive:
                return "run_autograder" in archive.namelist()
        except (OSError, zipfile.BadZipFile):
            return False
    if head.lstrip().startswith(b"{"):
        import json

        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(found, dict) and "tests" in found and "score" in found
    from autograder.report.htmlpage import GENERATOR

    return f'<meta name="generator" content="{GENERATOR}">'.encode() in head


def add_kit_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--kit DIR`` option of the instructor commands (checked: a folder that is a kit)."""
    parser.add_argument("--kit", metavar="DIR", type=kit, help="the instructor kit (default: the one attnlab finds)")


def _made_by_command(path: Path, option: str, example: str) -> str | None:
    """Why ``path`` cannot be written by a command that makes its missing folders (the nearest folder that exists
    above it is not writable, or one above it is a file); None when it can. Nothing is made here."""
    existing = next(parent for parent in path.absolute().parents if parent.exists())
    if existing == path.absolute().parent or path.exists():
        return output_problem(path, option, example)
    if output_problem(existing / "_", option, example) is None:
        return None
    template = common.OUTPUT_NOT_A_FOLDER if not existing.is_dir() else common.OUTPUT_NOT_WRITABLE
    return _(template).format(option=option, path=path, folder=existing)


def output_file(option: str, example: str, make_folder: bool = False) -> Callable[[str], Path]:
    """A file that can be written (its folder exists and is writable, or, ``make_folder``, the nearest folder that
    exists above it; it is not a folder; a file there already is one the kit wrote, :func:`written_by_kit`); nothing
    is made."""

    def check(text: str) -> Path:
        path = Path(text)
        problem = _made_by_command(path, option, example) if make_folder else output_problem(path, option, example)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        if path.is_symlink() or (path.exists() and not written_by_kit(path)):
            raise argparse.ArgumentTypeError(_(NOT_OURS).format(option=option, path=path))
        return path

    return _named(check, "file")


def output_folder(option: str, make_folder: bool = False) -> Callable[[str], Path]:
    """A folder to write into: a folder, or absent with its parent (``make_folder``: the nearest folder above it
    that exists) writable; nothing is made."""

    def check(text: str) -> Path:
        path = Path(text)
        if path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(_(NOT_A_FOLDER).format(path=path))
        if not path.exists():
            problem = _made_by_command(path, option, "") if make_folder else output_problem(path, option, "")
            if problem:
                raise argparse.ArgumentTypeError(problem)
        return path

    return _named(check, "folder")
