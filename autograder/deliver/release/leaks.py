"""What must never leave the instructor's kit, and a scan of a release (folder, wheel or zip) for it.

The secrets are read from the kit itself: the reference modules, their
solution regions (``# BEGIN SOLUTION`` ... ``# END SOLUTION`` and ``# ANSWER``
lines), the hidden graders, and the notebook's hidden-test and model-answer
markers. A release leaks when it holds

- a file named like a reference module whose text is not that module's stub,
  or any file whose text is a reference module or a hidden grader;
- a hidden grader by name (``test_*_hidden.py``), or three consecutive lines of
  one that no public grader has (imports, fixtures and helpers they share are public);
- a solution region's code: in a student-facing text file (stub, notebook,
  handout, README) any of its lines; in the engine's modules, the region
  itself (its lines in a row, three or all of a shorter region) or any three
  solution lines in a row, from whichever regions. The engine's mistake models
  share single statements with the reference on purpose (input coercion, a
  mask's ``np.where``), so one or two such lines in the engine are not a leak;
  no region is exempt, not even one a public grader would like to compute the
  same way (it verifies the student's answer another way, or on the
  instructor's side);
- a marker (``# BEGIN SOLUTION``, ``BEGIN HIDDEN TESTS``, model answers);
- an expected answer of the predict-first step, in any file: a distinctive
  number in any of the forms :mod:`autograder.deliver.release.answers` lists, as text
  or as the bytes of a float (a snapshot's array).

Single solution lines shorter than :data:`MIN_LINE` characters (``else:``) are
not counted outside the lab's modules, which must equal their stubs exactly.

Wheels and zips inside the release are scanned member by member.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.base import tasks
from autograder.base.kit import PACKAGE, Kit
from autograder.deliver.release import answers as expected_answers
from autograder.deliver.release import stubs
from autograder.deliver.release.answers import Answer

MARKERS = (  # (an answer line is a solution line, below; the "# ANSWER" mark alone is not a leak)
    stubs.BEGIN,
    stubs.END,
    "BEGIN HIDDEN TESTS",
    "END HIDDEN TESTS",
    "Model answer (instructor)",
)
TEXT = (".py", ".ipynb", ".md", ".txt", ".json", ".html", ".js", ".css", ".toml", ".cfg", ".ini", ".sh", "")
ARCHIVES = (".whl", ".zip", ".npz")  # a snapshot (.npz) is a zip of .npy arrays
ARRAYS = (".npy",)
HIDDEN_NAME = re.compile(r"test_\w+_hidden\.py$")
PUBLIC_GRADERS = PACKAGE / "grading" / "graders" / tasks.LAB
MIN_LINE = 16  # a solution line shorter than this ("else:", "return out") is no one's secret
RUN = 3  # consecutive lines of a region (or a hidden grader) that make a copy
RUN_LINE = 12  # lines shorter than this ("try:", "yield", "finally:") are left out of the runs compared
MAX_SCANNED = 64 << 20


class ReleaseLeak(Exception):
    """A release holds what must not leave the kit; ``problems`` lists each, one line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} leak(s): " + "; ".join(problems[:5]))
        self.problems = problems


@dataclass(frozen=True)
class Secrets:
    """The kit's secrets, as the scan compares them."""

    stubs: dict[str, str]  # module file name -> its stub (what may be released under that name)
    references: dict[str, str]  # module file name -> the reference's text
    regions: dict[str, tuple[str, ...]]  # "<module>.<function>#<n>" -> the region's code lines (stripped)
    solution_lines: frozenset[str]  # every region's lines that are not also lines of the stubs
    hidden: dict[str, tuple[str, ...]]  # hidden grader file name -> its code lines no public grader has
    hidden_texts: frozenset[str]  # the hidden graders' texts
    answers: tuple[Answer, ...] = ()  # the predict-first step's distinctive expected answers

    @classmethod
    def of(cls, kit: Kit) -> Secrets:
        """The secrets of the instructor kit ``kit``."""
        return cls.read(kit.solutions, kit.hidden)

    @classmethod
    def read(cls, solutions: Path, hidden_graders: Path) -> Secrets:
        """The secrets of the reference folder ``solutions`` and the hidden graders' folder ``hidden_graders``."""
        references, stub_texts, regions, lines = {}, {}, {}, set()
        for module in tasks.MODULES:
            path = Path(solutions) / f"{module}.py"
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            references[path.name], stub_texts[path.name] = text, stubs.make_stub(text, module, path)
            regions |= _regions(module, text, path)
            lines.update(stubs.solution_lines(text, path))
        public = {line.strip() for stub in stub_texts.values() for line in stub.splitlines()}
        graders = {line for p in PUBLIC_GRADERS.glob("*.py") for line in _code(p.read_text("utf-8").splitlines())}
        hidden_texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(hidden_graders).glob("*.py"))}
        hidden = {
            name: tuple(
                line for line in _significant(_code(text.splitlines())) if line not in graders and not _is_import(line)
            )
            for name, text in hidden_texts.items()
        }
        return cls(
            stub_texts,
            references,
            regions,
            frozenset(lines - public),
            hidden,
            frozenset(hidden_texts.values()),
            expected_answers.expected(Path(solutions)),
        )


def _regions(module: str, text: str, path: Path) -> dict[str, tuple[str, ...]]:
    lines, found = text.splitlines(), {}
    for number, region in enumerate(stubs.find_regions(text, path)):
        code = tuple(_significant(_code(lines[region.begin : region.end - 1])))
        if code:
            found[f"{module}.{region.task}#{number}"] = code
    return found


def _significant(lines: list[str]) -> list[str]:
    """The lines a run is made of: those of at least :data:`RUN_LINE` characters."""
    return [line for line in lines if len(line) >= RUN_LINE]


def _is_import(line: str) -> bool:
    return line.startswith(("import ", "from ")) and " import " in f" {line}"


def _code(lines: list[str]) -> list[str]:
    """The code lines (stripped; blanks, comments and lone brackets left out), as regions are compared."""
    return [s for s in (line.strip() for line in lines) if any(c.isalnum() for c in s) and not s.startswith("#")]


def scan_text(name: str, text: str, secrets: Secrets, *, engine: bool = False) -> list[str]:
    """The leaks of one text file called ``name`` (a path inside the release); ``engine``: one of the engine's
    modules (only whole regions count there, not single shared statements)."""
    found = []
    base = name.rsplit("/", 1)[-1]
    if base in secrets.stubs and text != secrets.stubs[base] and not engine:
        found.append(f"{name}: is not the stub of {base}")
    if text in secrets.references.values():
        found.append(f"{name}: is a reference module")
    if HIDDEN_NAME.search(base) or text in secrets.hidden_texts:
        found.append(f"{name}: is a hidden grader")
    found.extend(f"{name}: holds {marker!r}" for marker in MARKERS if marker in text)
    for answer in secrets.answers:
        form = answer.in_text(text)
        if form is not None:
            found.append(f"{name}: holds the expected answer of prediction {answer.question!r} ({form})")
    code = _code(text.splitlines())
    runs = _significant(code)
    for hidden_name, hidden_lines in secrets.hidden.items():
        if _has_run(runs, list(hidden_lines), RUN):
            found.append(f"{name}: holds {RUN} lines in a row of the hidden grader {hidden_name}")
    if engine:
        copied = [key for key, region in secrets.regions.items() if _has_run(runs, list(region), min(RUN, len(region)))]
        found.extend(f"{name}: holds the solution region of {key.split('#')[0]}" for key in copied[:3])
        run = _solution_run(runs, secrets.solution_lines)
        if run and not copied:
            found.append(f"{name}: holds {RUN} solution lines in a row, from {run[0]!r}")
    else:
        lines = sorted({line for line in code if line in secrets.solution_lines and len(line) >= MIN_LINE})
        found.extend(f"{name}: holds the solution line {line!r}" for line in lines[:3])
    return found


def _solution_run(code: list[str], solution_lines: frozenset[str]) -> list[str]:
    """The first :data:`RUN` consecutive lines of ``code`` that are all solution lines (of any regions), if any."""
    for start in range(len(code) - RUN + 1):
        window = code[start : start + RUN]
        if all(line in solution_lines for line in window):
            return window
    return []


def _has_run(code: list[str], pattern: list[str], length: int) -> bool:
    """Whether ``length`` consecutive lines of ``pattern`` appear consecutively in ``code``."""
    if length <= 0 or len(pattern) < length:
        return False
    windows = {tuple(pattern[i : i + length]) for i in range(len(pattern) - length + 1)}
    return any(tuple(code[i : i + length]) in windows for i in range(len(code) - length + 1))


def scan_bytes(name: str, data: bytes, secrets: Secrets, *, engine: bool = False) -> list[str]:
    """The leaks of one file's bytes: archives member by member, text files by :func:`scan_text`, other files
    for the bytes of an expected answer."""
    suffix = Path(name).suffix.lower()
    if suffix in ARCHIVES:
        return scan_archive(name, data, secrets)
    if len(data) > MAX_SCANNED:
        return []
    if suffix not in TEXT:
        return [
            f"{name}: holds the expected answer of prediction {answer.question!r} (as a float)"
            for answer in secrets.answers
            if answer.in_bytes(data, array=suffix in ARRAYS)
        ]
    return scan_text(name, data.decode("utf-8", errors="replace"), secrets, engine=engine)


def scan_archive(name: str, data: bytes, secrets: Secrets) -> list[str]:
    """The leaks of a wheel, zip or ``.npz``: the engine's modules (``autograder/``) as engine code, the rest as
    text (or, for binary members, for the bytes of an expected answer)."""
    found = []
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return [f"{name}: not a readable archive"]
    with archive:
        for member in archive.infolist():
            if member.is_dir() or member.file_size > MAX_SCANNED:
                continue
            inner = f"{name}!{member.filename}"
            engine = member.filename.startswith("autograder/")
            found.extend(scan_bytes(inner, archive.read(member), secrets, engine=engine))
    return found


def scan_folder(folder: Path, secrets: Secrets) -> list[str]:
    """The leaks of every file under ``folder`` (archives inside it too)."""
    folder = Path(folder)
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        found.extend(scan_bytes(path.relative_to(folder).as_posix(), path.read_bytes(), secrets))
    return found
