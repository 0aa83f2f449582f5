"""grade-batch flags hand-ins alike for review (a copied timing report, scaled, rounded, reformatted or reordered; a
copied unusual prediction set, rewritten), in the class summary and in each affected student's row, and flags no
honest ones: a class of honest reports measured on one machine stays unflagged with a margin."""

from __future__ import annotations

import copy
import csv
import gzip
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from autograder.deliver.batch import alike_answers, alike_times, records, similarity, summary
from autograder.deliver.batch import run as batch
from autograder.deliver.batch.job import Result
from tests import kit
from tests.test_batch import options

LAB = "lab07_attention"
REPORT = kit.SOLUTIONS / "reports" / "timing.json"
ANSWERS = kit.SOLUTIONS / "predictions.py"
HONEST = Path(__file__).parent / "data" / "honest_timing.json.gz"  # 6 runs of `attnlab timing` on one machine
MARGIN = 5.0  # an honest pair's spread is at least this many times the flagging threshold


def _options(root: Path, out: Path, **how: object) -> batch.BatchOptions:
    """The batch of ``root`` into ``out``, softmax only (``how``: the Dask scheduler, for one)."""
    return options(root, out, secret="similarity-test", steps=("softmax",), **how)


def _map_times(value: Any, change: Callable[[float], float]) -> Any:
    """A report's JSON with ``change`` applied to every non-integer number (its raw times and what is made of
    them)."""
    if isinstance(value, float) and not value.is_integer():
        return change(value)
    if isinstance(value, dict):
        return {k: _map_times(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_times(v, change) for v in value]
    return value


def _jitter(value: Any, rng: random.Random, size: float = 0.1) -> Any:
    """Each raw time a little different, by up to ``size`` (0.1: another honest measurement)."""
    return _map_times(value, lambda t: t * rng.uniform(1 - size, 1 + size))


def _with_lists(document: dict[str, Any], lists: dict[str, list[float]]) -> dict[str, Any]:
    """``document`` with the lists at ``lists``' paths (``a/b/0``) replaced."""
    document = copy.deepcopy(document)
    for path, times in lists.items():
        *parents, last = path.split("/")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = times
    return document


def _reference_report() -> dict[str, Any]:
    return json.loads(REPORT.read_text(encoding="utf-8"))


def _honest_class() -> list[dict[str, Any]]:
    """Seven honest reports of the reference from one machine: the kit's own and six more, measured."""
    stored = json.loads(gzip.decompress(HONEST.read_bytes()))["reports"]
    reference = _reference_report()
    return [reference, *(_with_lists(reference, lists) for lists in stored)]


def _hand_in(root: Path, student: str, report: dict[str, Any] | None = None, answers: dict[str, str] | None = None,
             text: Callable[[dict[str, Any]], str] = json.dumps) -> Path:  # fmt: skip
    """A hand-in of the reference with ``report`` as its timing report (None: the reference's byte for byte) and
    the reference's predictions with ``answers`` written in place of some."""
    lab = root / student / LAB
    shutil.copytree(kit.SOLUTIONS, lab, ignore=shutil.ignore_patterns("__pycache__"))
    if report is not None:
        (lab / "reports" / "timing.json").write_text(text(report), encoding="utf-8")
    source = ANSWERS.read_text(encoding="utf-8")
    for question_id, literal in (answers or {}).items():
        line = next(line for line in source.splitlines() if line.strip().startswith(f'"{question_id}":'))
        source = source.replace(line, f'    "{question_id}": {literal},  # ANSWER')
    (lab / "predictions.py").write_text(source, encoding="utf-8")
    return lab.parent


# two wrong answers no catalogued mistake explains (the catalogued ones are common among honest students)
UNUSUAL = {"kv_cache_gb": "3.9", "output_shape": "(7, 4, 5)"}
COMMON = {"kv_cache_gb": "5.37", "output_shape": "(4, 7, 3)"}  # catalogued mistakes: fp32, K Q^T


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return similarity.reference_answers(kit.SOLUTIONS)


def test_a_class_of_honest_reports_from_one_machine_is_never_flagged() -> None:
    """The false-flag rate on a class of honest reports from one machine is 0, with a margin: the 7 measured
    reports, and 30 more made from them (each raw time drawn from one of the 7 at random, every student's machine
    faster or slower, every list drifting by up to 5 %)."""
    measured = _honest_class()
    rng = random.Random(20261204)
    lists = [{path: times for path, times, _ in alike_times.raw_lists(report)} for report in measured]
    made = []
    for _ in range(30):
        machine = rng.uniform(0.7, 1.4)
        drawn = {}
        for path, times in lists[0].items():
            drift = machine * rng.uniform(0.95, 1.05)
            drawn[path] = [rng.choice(lists)[path][i] * drift for i in range(len(times))]
        made.append(_with_lists(measured[0], drawn))
    for name, reports in (("measured", measured), ("measured and made", measured + made)):
        timings = [alike_times.timings(report) for report in reports]
        pairs = list(itertools.combinations(timings, 2))
        flagged = sum(bool(alike_times.alike(a, b)) for a, b in pairs)
        closest = min(spread for a, b in pairs for spread, _count in alike_times.spreads(a, b).values())
        print(f"{name}: {len(reports)} honest reports, {flagged} of {len(pairs)} pairs flagged, closest spread "
              f"{closest:.4f} ({closest / alike_times.SPREAD:.1f} x the threshold {alike_times.SPREAD})")  # fmt: skip
        assert flagged == 0, name
        assert closest >= MARGIN * alike_times.SPREAD, (name, closest)


def _shuffled_repeats(report: dict[str, Any]) -> dict[str, Any]:
    """The attention sweep's repeats at each size in another order (the order of repeats means nothing)."""
    report = copy.deepcopy(report)
    rng = random.Random(3)
    for series in report["attention"]["series"].values():
        for repeats in series["seconds"]:
            rng.shuffle(repeats)
    return report


def _decoding_only(report: dict[str, Any]) -> dict[str, Any]:
    """The decoder's latencies copied into a report of one's own (another honest measurement elsewhere)."""
    own = _jitter(_reference_report(), random.Random(11))
    own["decoding"] = copy.deepcopy(report["decoding"])
    return own


PERTURBED: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "byte for byte": lambda r: r,
    "every time x 1.000347": lambda r: _map_times(r, lambda t: t * 1.000347),
    "every time x 0.93": lambda r: _map_times(r, lambda t: t * 0.93),
    "rounded to 4 digits": lambda r: _map_times(r, lambda t: float(f"{t:.4g}")),
    "jittered by 0.2 %": lambda r: _jitter(r, random.Random(5), 0.002),
    "repeats reordered": _shuffled_repeats,
    "the decoder's section only": _decoding_only,
    "each series its own factor": lambda r: _with_lists(
        r, {p: [t * (1 + 0.01 * i) for t in times] for i, (p, times, _) in enumerate(alike_times.raw_lists(r))}
    ),
}


def _trailing_zeros(report: dict[str, Any]) -> str:
    """The report's JSON with a zero added to every number's decimals (``0.00123`` -> ``0.001230``)."""
    return re.sub(r"(\d\.\d+)(?=[eE,\]\s}])", r"\g<1>0", json.dumps(report, indent=1))


FORMATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "compact": lambda r: json.dumps(r, separators=(",", ":")),
    "indented, keys sorted": lambda r: json.dumps(r, indent=3, sort_keys=True),
    "trailing zeros": _trailing_zeros,
}


@pytest.mark.parametrize("perturbation", list(PERTURBED))
def test_a_copied_report_is_flagged_however_it_is_perturbed(tmp_path: Path, perturbation: str) -> None:
    original = _jitter(_reference_report(), random.Random(1))
    changed = PERTURBED[perturbation](copy.deepcopy(original))
    written = list(FORMATS.values())[list(PERTURBED).index(perturbation) % len(FORMATS)]
    folders = {
        "ann": _hand_in(tmp_path, "ann", original),
        "bo": _hand_in(tmp_path, "bo", changed, text=written),
        "cy": _hand_in(tmp_path, "cy", _jitter(_reference_report(), random.Random(2))),  # honest
    }
    flags = similarity.compare([similarity.read(s, f) for s, f in folders.items()])
    assert [(f.kind, f.students) for f in flags] == [("timing", ("ann", "bo"))], perturbation


@pytest.mark.parametrize("form", list(FORMATS))
def test_a_report_written_in_another_form_is_the_same_report(tmp_path: Path, form: str) -> None:
    report = _jitter(_reference_report(), random.Random(4))
    a = similarity.read("a", _hand_in(tmp_path, "a", report))
    b = similarity.read("b", _hand_in(tmp_path, "b", report, text=FORMATS[form]))
    assert set(alike_times.alike(a.times, b.times)) == {"attention", "decoding"}
    assert all(spread < 1e-4 for spread, _ in alike_times.spreads(a.times, b.times).values())


REWRITTEN: dict[str, Callable[[str], str]] = {
    "a trailing zero on each number": lambda v: v.replace("3.9", "3.90").replace("5)", "5.0)").replace("7,", "7.0,"),
    "other spacing and brackets": lambda v: v.replace("(", "[").replace(")", "]").replace(", ", ","),
    "as written": lambda v: v,
}


@pytest.mark.parametrize("how", list(REWRITTEN))
def test_a_copied_prediction_set_is_flagged_however_it_is_written(tmp_path: Path, how: str, reference) -> None:
    rewritten = {q: REWRITTEN[how](v) for q, v in UNUSUAL.items()}
    hand_ins = [
        similarity.read("ann", _hand_in(tmp_path, "ann", answers=UNUSUAL)),
        similarity.read("bo", _hand_in(tmp_path, "bo", answers={**rewritten, "permuted_inputs": "'Swapped.'"})),
        similarity.read("cy", _hand_in(tmp_path, "cy", answers=COMMON)),
        similarity.read("di", _hand_in(tmp_path, "di", answers=COMMON)),  # the same two common mistakes: honest
    ]
    flags = [f for f in similarity.compare(hand_ins, reference) if f.kind == "predictions"]
    assert [f.students for f in flags] == [("ann", "bo")], how
    assert similarity.reasons(flags)["bo"] == ("review: prediction set alike to ann's (2 unusual entries in common)",)


def test_answers_are_compared_by_value() -> None:
    same = [("2.68", "2.680"), ("2.684354", "2.6843540"), ("(4, 7, 5)", "[4,7,5]"), ("'swapped'", "'Swapped.'")]
    assert all(alike_answers.canonical(a) == alike_answers.canonical(b) for a, b in same)
    assert alike_answers.canonical("2.68") != alike_answers.canonical("2.7")
    assert alike_answers.canonical("10**10**10") == "10**10**10"  # not a literal: compared as written, never run
    assert alike_answers.canonical("1" * 400) == alike_answers.canonical("1" * 400)  # past a float: no error


def test_what_cannot_be_read_takes_no_part(tmp_path: Path) -> None:
    """A report that is a folder, a link, not UTF-8, not JSON or nested past the parser; predictions that are not
    Python: that hand-in has no times or answers, the others are compared, nothing raises."""
    cases: dict[str, Callable[[Path], None]] = {
        "folder": lambda lab: (lab / "reports" / "timing.json").mkdir(),
        "link": lambda lab: (lab / "reports" / "timing.json").symlink_to(REPORT),
        "binary": lambda lab: (lab / "reports" / "timing.json").write_bytes(b"\xff\xfe" * 100),
        "deep": lambda lab: (lab / "reports" / "timing.json").write_text("[" * 100_000 + "]" * 100_000),
    }
    folders = {}
    for name, spoil in cases.items():
        folder = _hand_in(tmp_path, name, _reference_report())
        (folder / LAB / "reports" / "timing.json").unlink()
        spoil(folder / LAB)
        (folder / LAB / "predictions.py").write_text("PREDICTIONS = {" * 50_000, encoding="utf-8")
        folders[name] = folder
    hand_ins = [similarity.read(s, f) for s, f in folders.items()]
    assert all(not h.times and not h.answers for h in hand_ins)
    assert similarity.read("gone", tmp_path / "nowhere") == similarity.HandIn("gone")
    assert similarity.compare(hand_ins) == ()


def test_flags_reach_the_reasons_the_summary_and_the_csv(tmp_path: Path, reference) -> None:
    ann = _hand_in(tmp_path, "ann", _jitter(_reference_report(), random.Random(1)), UNUSUAL)
    shutil.copytree(ann, tmp_path / "bo")  # the whole folder, byte for byte
    eve = _hand_in(tmp_path, "eve", _map_times(json.loads((ann / LAB / "reports" / "timing.json").read_text()),
                                               lambda t: t * 1.000347))  # fmt: skip
    folders = {"ann": ann, "bo": tmp_path / "bo", "eve": eve}
    flags = similarity.compare([similarity.read(s, f) for s, f in folders.items()], reference)
    assert {(f.kind, f.students) for f in flags} == {("timing", ("ann", "bo", "eve")), ("predictions", ("ann", "bo"))}
    reasons = similarity.reasons(flags)
    assert reasons["eve"] == (
        "review: timing report alike to ann, bo's (raw times the same up to a common scale: attention, decoding)",
    )
    results = [Result(s, "d", reason="", review=reasons.get(s, ())) for s in folders]
    text = summary.table(summary.summarise(results, flags))
    assert "For review" in text and "- ann, bo, eve: timing reports alike" in text
    assert "- ann, bo: prediction sets alike" in text
    path = records.write_csv(tmp_path / "grades.csv", results, ("softmax",), 10.0)
    with path.open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert table["bo"]["review"].startswith("review: timing report") and table["bo"]["status"] == "failed"
    records.write(tmp_path / "out", results[0])
    assert records.read(tmp_path / "out", "ann").review == results[0].review


def test_a_review_flag_rewrites_the_result_and_not_the_students_page(tmp_path: Path, monkeypatch) -> None:
    """The review flags are the instructor's (the student's page never shows them): adding them rewrites the result
    file, and draws the page again only where it is missing."""
    from autograder.report import render_html

    out, result = tmp_path / "out", Result("ann", "d", reason="no lab files")
    records.write(out, result)
    page = records.result_path(out, "ann").with_suffix(".html")
    before = page.read_bytes()
    drawn = []
    monkeypatch.setattr(render_html, "failure_page", lambda *a: drawn.append(a) or "<p>again</p>")
    flagged = replace(result, review=("review: timing report alike to bo's",))
    records.write(out, flagged, page=False)
    assert records.read(out, "ann").review == flagged.review and page.read_bytes() == before and not drawn
    page.unlink()
    records.write(out, flagged, page=False)
    assert page.read_text(encoding="utf-8") == "<p>again</p>" and len(drawn) == 1
    records.write(out, flagged)  # a graded result's own write always draws its page
    assert len(drawn) == 2


def test_grade_batch_flags_the_copies_in_the_rows_and_the_summary(tmp_path: Path) -> None:
    root = tmp_path / "submissions"
    _hand_in(root, "ann", _jitter(_reference_report(), random.Random(1)), UNUSUAL)
    shutil.copytree(root / "ann", root / "bo")
    _hand_in(root, "cy", _jitter(_reference_report(), random.Random(3)))
    out = tmp_path / "out"
    done = batch.run(_options(root, out))
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert table["ann"]["review"] and table["bo"]["review"] and table["cy"]["review"] == ""
    assert table["ann"]["total"] == table["cy"]["total"] == "10"  # a review reason, not a zero
    assert {students for students, _what in done.class_summary.review} == {"ann, bo"}
    assert "For review" in (out / "graded" / "summary.md").read_text(encoding="utf-8")


FLAGGED = {
    "ann": ("review: timing report alike to bo's (raw times the same up to a common scale: attention, decoding)",),
    "bo": ("review: timing report alike to ann's (raw times the same up to a common scale: attention, decoding)",),
    "cy": ("review: prediction set alike to di's (2 unusual entries in common)",),
    "di": ("review: prediction set alike to cy's (2 unusual entries in common)",),
    "eve": (),
}


def _copies(root: Path) -> Path:
    """Five hand-ins in ``root``: ann and bo with one report (bo's rescaled), cy and di with the same unusual
    prediction set (di's rewritten), eve honest."""
    report = _jitter(_reference_report(), random.Random(1))
    _hand_in(root, "ann", report)
    _hand_in(root, "bo", _map_times(report, lambda t: t * 1.000347))
    _hand_in(root, "cy", _jitter(_reference_report(), random.Random(3)), UNUSUAL)
    rewritten = {q: REWRITTEN["a trailing zero on each number"](v) for q, v in UNUSUAL.items()}
    _hand_in(root, "di", _jitter(_reference_report(), random.Random(4)), rewritten)
    _hand_in(root, "eve", _jitter(_reference_report(), random.Random(5)))
    return root


def _assert_flagged(csv_path: Path, graded: Path) -> None:
    """Each student's review reasons in the CSV and in their result JSON, their score untouched."""
    with csv_path.open(newline="", encoding="utf-8") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(table) == set(FLAGGED)
    for student, reasons in FLAGGED.items():
        assert table[student]["review"] == "; ".join(reasons), (student, table[student])
        assert records.read(graded, student).review == reasons, student
        assert table[student]["total"] == "10", table[student]  # a review reason, never a changed score


@pytest.mark.slow
def test_grade_batch_on_a_dask_cluster_flags_the_copies(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    root = _copies(tmp_path / "submissions")
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as dask:
        batch.run(_options(root, out, dask=dask.scheduler_address))
    _assert_flagged(out / "grades.csv", out / "graded")


@pytest.mark.slow
def test_grade_batch_on_an_nbgrader_course_flags_the_copies(tmp_path: Path) -> None:
    """The nbgrader path: grade-batch on a course folder (its private folder's reference tells a wrong answer)."""
    from autograder.deliver.nbgrader_course import course as course_writer

    course = tmp_path / "course"
    course_writer.write_course(course_writer.CourseOptions(folder=course, kit=kit.ROOT))
    _copies(course / "submitted")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade-batch", str(course), "--csv", str(out / "grades.csv")]
    command += ["--step", "softmax", "-j", "2", "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=kit.ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    _assert_flagged(out / "grades.csv", out / "graded")
    assert "ann, bo: timing reports alike" in done.stdout
    assert "cy, di: prediction sets alike" in done.stdout
