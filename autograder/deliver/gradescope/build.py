"""``attnlab gradescope OUT.zip``: the Gradescope autograder zip.

::

    setup.sh                          installs torch's CPU build, the course lock, the wheel
    run_autograder                    grades one submission (autograder.deliver.gradescope.runner)
    requirements.txt                  the course lock (requirements/lock.txt)
    attnlab-<version>-py3-none-any.whl  the public engine (the students' wheel)
    attnlab.json                      the course secret, the deadline, sandbox limits, the steps
    kit/solutions/lab07_attention/    the reference (hidden checks compare with it)
    kit/hidden/lab07_attention/       the hidden graders

Without a secret given (``--secret-file``, ``$ATTNLAB_SECRET``) the course secret is the file ``course.secret``
beside the zip: made once (mode 600, a random secret) and read by every later build, so a rebuilt zip draws the
same hidden inputs for a resubmission as the zip it replaces.

The zip is the instructor's (mode 600: it holds the course secret): Gradescope
keeps it from students, and on the grading machine the runner closes its folder
to the unprivileged user that student code runs as. The wheel inside is scanned like the student bundle's.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks, versions
from autograder.base.kit import Kit
from autograder.deliver.gradescope import runner, scripts
from autograder.deliver.release import leaks, readme, wheel
from autograder.grading import serialize
from autograder.handin import submission

TORCH_CPU_INDEX = versions.TORCH_CPU_INDEX
EXECUTABLE, FILE = 0o100755, 0o100644
SECRET_FILE = "course.secret"  # beside the zip: the course secret a build without one made, and every rebuild reads
TORCH_PIN = re.compile(r"^torch==(?P<version>[^\s;]+)", re.MULTILINE)


class ZipError(Exception):
    """The zip cannot be built as asked; the message says why."""


@dataclass(frozen=True)
class ZipOptions:
    """What goes into the zip besides the kit: the course secret, the grading limits, the steps graded."""

    out: Path
    kit: Kit
    secret: str | None = None  # None: a new random secret (printed nowhere; the zip keeps it)
    deadline_s: float = 900.0
    call_timeout_s: float | None = None
    steps: tuple[str, ...] | None = None
    wheel: Path | None = None  # a public wheel built already (else one is built)
    language: str | None = None  # the feedback's language for the whole course (None: English)


def course_secret(out: Path, given: str | None) -> tuple[str, Path | None]:
    """The course secret of the zip at ``out``, and the file that keeps it (None when ``given`` is used).

    ``given`` (a secret file's or ``$ATTNLAB_SECRET``'s) wins; else the ``course.secret`` beside the zip, made
    here once with a new random secret (mode 600, never replaced) and reused by every rebuild.
    """
    if given:
        return given, None
    kept = Path(out).resolve().parent / SECRET_FILE
    if kept.is_symlink() or (kept.exists() and not kept.is_file()):
        raise ZipError(f"{kept} is not a regular file; move it away or pass --secret-file")
    if kept.exists():
        try:
            secret = kept.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise ZipError(f"the course secret {kept} cannot be read ({error})") from None
        if not secret:
            raise ZipError(f"the course secret {kept} is empty; remove it to make a new one, or pass --secret-file")
        return secret, kept
    secret = secrets.token_hex(32)
    fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(secret + "\n")
    return secret, kept


def torch_pin(lock_text: str) -> str:
    """The torch release the lock pins, without its build label (``2.13.0+cpu`` -> ``2.13.0``: setup.sh takes it
    from PyTorch's CPU index); ZipError when it pins none."""
    match = TORCH_PIN.search(lock_text)
    if match is None:
        raise ZipError("the course lock pins no torch release (torch==...); regenerate it (requirements/compile.sh)")
    return match.group("version").partition("+")[0]


def build(options: ZipOptions) -> Path:
    """Write the autograder zip to ``options.out``; its path."""
    kit = options.kit
    for needed in (kit.solutions, kit.hidden, kit.lock):
        if not needed.exists():
            raise ZipError(f"the kit at {kit.root} has no {needed.relative_to(kit.root)}")
    lock = kit.lock.read_text(encoding="utf-8")
    settings = runner.Settings(
        secret=options.secret or secrets.token_hex(32),
        deadline_s=options.deadline_s,
        limits={"call_timeout_s": options.call_timeout_s} if options.call_timeout_s else {},
        steps=options.steps,
        language=options.language,
    )
    out = Path(options.out).resolve()
    with tempfile.TemporaryDirectory(prefix="attnlab-gradescope-") as work:
        built = options.wheel or wheel.build(kit, Path(work), readme.text(wheel.file_name(), inside_lab=False))
        problems = leaks.scan_bytes(built.name, built.read_bytes(), leaks.Secrets.of(kit))
        if problems:
            raise leaks.ReleaseLeak(problems)
        partial = out.with_name(f".{out.name}.partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            _add(archive, "setup.sh", scripts.setup(built.name, torch_pin(lock), TORCH_CPU_INDEX), EXECUTABLE)
            _add(archive, "run_autograder", scripts.run_autograder(), EXECUTABLE)
            _add(archive, "requirements.txt", lock)
            _add(archive, built.name, built.read_bytes())
            _add(archive, runner.SETTINGS, serialize.json_text(serialize.encode(settings)))
            for folder, paths in _kit_files(kit).items():
                for path in paths:
                    _add(archive, f"{runner.KIT}/{folder}/{tasks.LAB}/{path.name}", path.read_bytes())
        partial.chmod(0o600)  # the course secret and the hidden graders: the instructor's only
        partial.replace(out)
    return out


def _kit_files(kit: Kit) -> dict[str, list[Path]]:
    """The reference's modules and data files, and the hidden graders, by their folder in the kit."""
    reference = [kit.solutions / f"{module}.py" for module in tasks.modules_present(kit.solutions)]
    return {
        "solutions": reference + submission.data_files(kit.solutions),
        "hidden": sorted(kit.hidden.glob("*.py")),
    }


def _add(archive: zipfile.ZipFile, name: str, data: str | bytes, mode: int = FILE) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)
