"""Behaviour snapshot: what the kit's commands produce, normalised so that two trees can be diffed.

Proof for a pure restructure (moving modules between packages): run this on the tree before and after, from each
checkout's root with that checkout's own venv, then ``diff -r BEFORE AFTER``. It drives the kit through its
commands only (``python -m autograder`` and ``attnlab`` next to ``sys.executable``), never by importing its
modules, whose paths are what changes.

    cd KIT_ROOT && VENV/bin/python PATH/TO/bench/behaviour.py OUT_DIR

OUT_DIR receives:

- ``grade/NAME.json``: ``python -m autograder grade --json`` of the reference, the stubs and known wrong answers
  (one step's module of the reference changed, as in the kit's tests), and one of them with ``--lang tr``;
- ``release/``: ``attnlab release``'s files with their sha256 (``files.json``); ``gradescope/``: the zip's;
  for each wheel or zip, ``NAME.files.json`` (member -> sha256, nested archives as ``outer!inner``) and
  ``NAME.content.json`` (the member count and sorted member hashes, no paths: a pure move changes only the
  modules whose import lines changed);
- ``nbgrader/``: the files of ``attnlab nbgrader-course`` with their sha256, its wheel's members as above;
- ``batch/grades.csv``: ``attnlab grade-batch -j 2`` over all those hand-ins, every column but times, by student.

Deterministic on one tree (run twice, ``diff -r`` empty) through a fixed course secret (``ATTNLAB_SECRET``),
each hand-in's student id its folder's name, ``ATTNLAB_LANG=en``, ``PYTHONHASHSEED=0``, no ``PYTHONPATH`` or
``ATTNLAB_KIT`` (the kit is the current directory). Normalised out, because it changes from run to run or from
checkout to checkout:

- every JSON key and CSV column naming a time (``execution_time``, ``*_time``, ``*seconds``...): wall times;
- the scratch folder, the kit root and the venv, written ``<HAND_IN>``, ``<KIT>``, ``<VENV>`` in texts and in the
  bytes of every hashed file;
- an archive's hash is of its members' names and hashes (``members:...``), not of its bytes: the wheels'
  zip entries carry their build time; the release manifest lists the wheel's byte hash, so that entry is
  blanked before the manifest is hashed;
- "off by up to X" becomes "off by up to <random inputs>": the timing grader checks timed calls on inputs drawn
  afresh each run (unseeded on purpose), so how far a wrong answer is off on them varies;
- the nbgrader course is written twice and a file that differs between the two (``private/secret``, random)
  gets the hash ``<differs run to run>``; ``nbgrader/differs_run_to_run.json`` lists them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

KIT = Path.cwd().resolve()
VENV = Path(sys.prefix).resolve()
ATTNLAB = str(Path(sys.executable).parent / "attnlab")
SOLUTIONS = KIT / "solutions" / "lab07_attention"
STUBS = KIT / "assignments" / "lab07_attention"
TIME_KEY = re.compile(r"(^|_)(time|times|seconds|duration|durations|elapsed|wall|started|finished)(_s)?$", re.I)
DIFFERS = "<differs run to run>"
MANIFEST = ".attnlab-manifest.json"  # {"files": {path: sha256}}: a wheel's sha256 changes with its build time
# the timing grader times student code on inputs drawn afresh each run (np.random.default_rng() unseeded, on
# purpose): how far a wrong answer's logits are off on them changes from run to run
RANDOM_GAP = re.compile(r"(off by up to )\d+(?:\.\d+)?(?:e[+-]?\d+)?")

# name -> (module, text of the reference, its wrong replacement): known mistakes from the kit's tests
WRONG = {
    "softmax_wrong_axis": (
        "softmax",
        "np.max(x, axis=axis, keepdims=True)",
        "np.max(x, axis=axis, keepdims=True)\n    axis = 0 if axis == -1 and x.ndim > 1 else axis",
    ),
    "missing_scale": ("scaling", "return scores(Q, K) / np.sqrt(d_k)", "return scores(Q, K)"),
    "mask_inverted": ("mask", "return j <= i + (n_k - n_q)", "return j > i + (n_k - n_q)"),
    "attend_before_append": (
        "kv_cache",
        "    cache.append(k_t, v_t)\n    K, V = cache.keys, cache.values",
        "    K, V = cache.keys, cache.values\n    cache.append(k_t, v_t)",
    ),
    "gpt_no_causal_mask": ("toy_gpt", "device=x.device).tril()", "device=x.device)"),
    "loglog_axes_swapped": ("timing", "np.polyfit(log_n, log_t, 1)", "np.polyfit(log_t, log_n, 1)"),
    "predicted_width_of_keys": ("predictions", '"output_shape": (4, 7, 5),', '"output_shape": (4, 7, 3),'),
}
TURKISH = "mask_inverted"


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATTNLAB_KIT")}
    env.update(ATTNLAB_SECRET="behaviour-snapshot-secret", ATTNLAB_LANG="en", PYTHONHASHSEED="0")
    return env


def run(*command: str, ok: tuple[int, ...] = (0,)) -> None:
    done = subprocess.run(command, cwd=KIT, env=environment(), capture_output=True, text=True, timeout=1800)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")


def placeholders(scratch: Path) -> list[tuple[str, str]]:
    """Machine-specific paths and their placeholders, longest first (one may hold another)."""
    pairs = {str(scratch): "<HAND_IN>", str(scratch.resolve()): "<HAND_IN>", str(KIT): "<KIT>", str(VENV): "<VENV>"}
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def scrub_text(text: str, scratch: Path) -> str:
    for path, name in placeholders(scratch):
        text = text.replace(path, name)
    return RANDOM_GAP.sub(r"\1<random inputs>", text)


def sha(data: bytes, scratch: Path) -> str:
    for path, name in placeholders(scratch):
        data = data.replace(path.encode(), name.encode())
    return hashlib.sha256(data).hexdigest()


def scrub(value: object, scratch: Path) -> object:
    """``value`` without keys naming a time, with machine paths replaced."""
    if isinstance(value, dict):
        return {k: scrub(v, scratch) for k, v in value.items() if not TIME_KEY.search(k)}
    if isinstance(value, list):
        return [scrub(v, scratch) for v in value]
    return scrub_text(value, scratch) if isinstance(value, str) else value


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def hand_ins(into: Path) -> dict[str, Path]:
    """The reference, the stubs and each wrong answer, each in ``into/NAME``."""
    ignore = shutil.ignore_patterns("__pycache__")
    folders = {"reference": SOLUTIONS, "stubs": STUBS}
    made = {name: Path(shutil.copytree(source, into / name, ignore=ignore)) for name, source in folders.items()}
    for name, (module, old, new) in WRONG.items():
        folder = Path(shutil.copytree(SOLUTIONS, into / name, ignore=ignore))
        path = folder / f"{module}.py"
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"{name}: {old!r} is not in {module}.py any more")
        path.write_text(text.replace(old, new), encoding="utf-8")
        made[name] = folder
    return made


def grades(out: Path, folders: dict[str, Path], scratch: Path) -> None:
    jobs = [(name, folder, "en") for name, folder in folders.items()] + [(f"{TURKISH}.tr", folders[TURKISH], "tr")]
    for name, folder, lang in jobs:
        result = scratch / "results" / f"{name}.json"
        result.parent.mkdir(exist_ok=True)
        command = ("grade", str(folder), "--json", str(result), "--student", folder.name, "--lang", lang)
        run(sys.executable, "-m", "autograder", *command, ok=(0, 1))  # 1: points lost
        write_json(out / "grade" / f"{name}.json", scrub(json.loads(result.read_text("utf-8")), scratch))


def members(archive: bytes, scratch: Path) -> dict[str, str]:
    """Every member of a zip (a wheel's or a zip's inside it as ``outer!inner``) with its sha256."""
    found: dict[str, str] = {}
    with zipfile.ZipFile(io.BytesIO(archive)) as opened:
        for info in opened.infolist():
            if info.is_dir():
                continue
            data = opened.read(info)
            found[info.filename] = digest(info.filename, data, scratch)
            if info.filename.endswith((".whl", ".zip")):
                found.update({f"{info.filename}!{k}": v for k, v in members(data, scratch).items()})
    return found


def record_archive(out: Path, name: str, data: bytes, scratch: Path) -> None:
    listed = members(data, scratch)
    write_json(out / f"{name}.files.json", listed)
    write_json(out / f"{name}.content.json", {"count": len(listed), "sha256": sorted(listed.values())})


def digest(name: str, data: bytes, scratch: Path) -> str:
    """A file's sha256; an archive's is of its members' names and hashes (zip entries carry their build time)."""
    if name.endswith((".whl", ".zip")):
        return "members:" + hashlib.sha256(json.dumps(members(data, scratch), sort_keys=True).encode()).hexdigest()
    if name == MANIFEST:
        manifest = json.loads(data)
        archives = [path for path in manifest["files"] if path.endswith((".whl", ".zip"))]
        manifest["files"].update(dict.fromkeys(archives, "<archive: its members are listed>"))
        data = json.dumps(manifest, sort_keys=True).encode()
    return sha(data, scratch)


def files(folder: Path, scratch: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): digest(path.name, path.read_bytes(), scratch)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def release(out: Path, scratch: Path) -> None:
    bundle = scratch / "bundle"
    run(ATTNLAB, "release", str(bundle))
    listed = files(bundle, scratch)
    write_json(out / "release" / "files.json", listed)
    for name in listed:
        if name.endswith((".whl", ".zip")):
            record_archive(out / "release", Path(name).name, (bundle / name).read_bytes(), scratch)


def gradescope(out: Path, scratch: Path) -> None:
    built = scratch / "gradescope" / "autograder.zip"
    built.parent.mkdir()
    run(ATTNLAB, "gradescope", str(built))
    record_archive(out / "gradescope", built.name, built.read_bytes(), scratch)


def nbgrader(out: Path, scratch: Path) -> None:
    runs = []
    for attempt in ("first", "second"):
        course = scratch / "nbgrader" / attempt / "course"
        course.parent.mkdir(parents=True)
        run(ATTNLAB, "nbgrader-course", str(course), "--course-id", "attn101")
        runs.append(files(course, course.parent))  # the attempt's folder is the scratch of its paths
    first, second = runs
    differ = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
    write_json(out / "nbgrader" / "files.json", {k: DIFFERS if k in differ else v for k, v in first.items()})
    write_json(out / "nbgrader" / "differs_run_to_run.json", differ)
    for name in (name for name in first if name.endswith((".whl", ".zip"))):
        path = scratch / "nbgrader" / "first" / "course" / name
        record_archive(out / "nbgrader", path.name, path.read_bytes(), path.parents[len(Path(name).parts)])


def batch(out: Path, folders: dict[str, Path], scratch: Path) -> None:
    graded = scratch / "graded"
    table = graded / "grades.csv"
    submitted = folders["reference"].parent
    run(ATTNLAB, "grade-batch", str(submitted), "-j", "2", "--csv", str(table), "--out", str(graded / "out"),
        "--no-progress")  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(table.read_text("utf-8"))))
    keep = [column for column in rows[0] if not TIME_KEY.search(column.replace(" ", "_"))]
    key = keep[0]  # the student column
    text = io.StringIO()
    writer = csv.DictWriter(text, keep, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(sorted(rows, key=lambda row: row[key]))
    (out / "batch").mkdir(parents=True)
    (out / "batch" / "grades.csv").write_text(scrub_text(text.getvalue(), scratch), encoding="utf-8")


def main() -> int:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = Path(sys.argv[1]).resolve()
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty")
    found = subprocess.run(
        [sys.executable, "-c", "import autograder; print(autograder.__file__)"],
        env=environment(), capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if not Path(found).resolve().is_relative_to(KIT):
        raise SystemExit(f"{sys.executable} imports the kit from {found}, not from {KIT}: use this checkout's venv")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="behaviour-") as temporary:
        scratch = Path(temporary)
        folders = hand_ins(scratch / "hand_ins")
        grades(out, folders, scratch)
        release(out, scratch)
        gradescope(out, scratch)
        nbgrader(out, scratch)
        batch(out, folders, scratch)
    print(f"snapshot of {KIT} in {out} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
