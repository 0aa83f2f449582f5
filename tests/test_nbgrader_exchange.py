"""A course as a department runs it, with real nbgrader and its exchange, start to finish; no mocks.

``attnlab nbgrader-course`` writes the course (course id ``attn101``, the exchange inside it); then exactly what
the README's instructor section walks through: ``generate_assignment`` -> ``release_assignment`` -> two
students ``fetch_assignment`` and ``submit`` -> ``collect`` -> ``autograde`` -> formgrader (in a real browser) ->
``generate_feedback`` -> ``release_feedback`` -> students ``fetch_feedback`` -> ``export``, and ``attnlab
grade-batch`` on the collected course to compare with. Where the tests run as root the students are real
accounts of this machine (:mod:`tests.nbgrader_students`), so the exchange's and the course's permissions are
what is tested; elsewhere they are two homes.

- alice hands in four steps of the reference (the rest stubs) with the untouched notebook: her feedback is
  fetched through the exchange, with no hidden-input seed or private path in it;
- bob hands in the stubs and a notebook with every hostile shape of :mod:`tests.hostile_notebook`: formgrader's
  page of his submission and his feedback page, served by a Jupyter server and opened in chromium, run none of
  it and send no request to the Jupyter API (a page rendered from his notebook without sanitising does both, so
  the detectors are shown to work);
- carol (alice's steps, softmax with a mistake, no notebook), dave (alice's work, the notebook renamed) and erin
  (alice's work, the notebook cut short) hand in by e-mail, filed in ``submitted/`` by the instructor: nbgrader
  cannot autograde them (``autograde`` skips carol and fails on the other two), and the kit's export gives each
  row grade-batch's points with the reason.

Only four steps are written (the stubs of the rest fail at once) to keep the run short; every step is graded on
every path.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")
from nbgrader.api import Gradebook  # noqa: E402

from autograder.base import tasks  # noqa: E402
from autograder.deliver.nbgrader_course import cells, export, notebook  # noqa: E402
from autograder.deliver.nbgrader_course import course as course_writer  # noqa: E402
from autograder.deliver.warm import client  # noqa: E402
from autograder.deliver.warm import job as warm_job  # noqa: E402
from tests import hostile_notebook as hostile  # noqa: E402
from tests import kit  # noqa: E402
from tests import nbgrader_students as students  # noqa: E402

pytestmark = pytest.mark.slow
LAB, COURSE_ID = tasks.LAB, "attn101"
BY_HAND = {"carol": "no-notebook", "dave": "renamed", "erin": "broken"}  # hand-ins nbgrader cannot autograde
RENAMED = f"{LAB} (1).ipynb"
NBGRADER = [sys.executable, "-m", "nbgrader"]
ATTNLAB = [sys.executable, "-m", "autograder"]
TIMES = students.TIMES  # (command, seconds) of the term, the students' and the instructor's, printed by the first test
JUPYTER_SERVER = [
    sys.executable, "-m", "jupyter_server", "--ip=127.0.0.1", "--no-browser", "--allow-root",
    "--ServerApp.log_level=INFO",
]  # fmt: skip


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """One instructor's nbgrader command, run in the course folder."""
    started = time.monotonic()
    done = subprocess.run([*NBGRADER, *args], cwd=course, capture_output=True, text=True, timeout=900)
    TIMES.append((f"nbgrader {args[0]}", time.monotonic() - started))
    assert done.returncode == 0 or not check, (
        f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    )
    return done


REFERENCE_STEPS = ("softmax", "scaling", "mask", "costs")  # alice's and carol's written steps: the rest are stubs
NO_SHIFT = ("shifted = x - np.max(x, axis=axis, keepdims=True)", "shifted = x")  # carol's softmax: no max shift


def hand_in(work: str, folder: Path, student: students.Student | None = None) -> Path:
    """The lab folder ``folder`` (``student``'s fetched one, then theirs) with the work in it: ``written`` (the
    reference's modules of :data:`REFERENCE_STEPS`, the stubs elsewhere, the untouched notebook), ``hostile`` (the
    stubs, the hostile notebook) or ``no-notebook`` (as ``written`` with softmax's max shift left out, the notebook
    deleted), ``renamed`` and ``broken`` (as ``written``, the notebook renamed or cut short)."""
    if work in ("written", *BY_HAND.values()):
        for step in REFERENCE_STEPS:
            module = tasks.step(step).module
            shutil.copyfile(kit.SOLUTIONS / f"{module}.py", folder / f"{module}.py")
    if work == "no-notebook":
        softmax = folder / "softmax.py"
        text = softmax.read_text(encoding="utf-8")
        assert NO_SHIFT[0] in text, "the reference's softmax changed; update NO_SHIFT"
        softmax.write_text(text.replace(*NO_SHIFT), encoding="utf-8")
        (folder / notebook.NOTEBOOK).unlink()
    if work == "renamed":
        (folder / notebook.NOTEBOOK).rename(folder / RENAMED)
    if work == "broken":
        (folder / notebook.NOTEBOOK).write_text('{"cells": [', encoding="utf-8")
    if work == "hostile":
        book = nbformat.read(folder / notebook.NOTEBOOK, as_version=4)
        nbformat.write(hostile.make_hostile(book), folder / notebook.NOTEBOOK)
    if student is not None:
        students.give(student, folder)
    return folder


@pytest.fixture(scope="module")
def run() -> Iterator[dict]:
    """The whole term of one course (see the module), its logs and timings."""
    base = Path(tempfile.mkdtemp(prefix="attnlab-course-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    base.chmod(0o755)  # the students pass through to the exchange in the course
    try:
        yield _term(base)
    finally:
        client.stop(cells.HANDLER, base / "course" / "private")
        client.stop(warm_job.HANDLER)
        shutil.rmtree(base, ignore_errors=True)


def _term(base: Path) -> dict:
    course = base / "course"
    started = time.monotonic()
    writing = time.monotonic()
    course_writer.write_course(
        course_writer.CourseOptions(
            folder=course,
            kit=kit.ROOT,
            course_id=COURSE_ID,
            call_timeout_s=5.0,
            import_timeout_s=30.0,
            deadline_s=300.0,
        )
    )
    TIMES.append(("attnlab nbgrader-course", time.monotonic() - writing))
    alice, bob = students.accounts(base, ("alice", "bob"))
    config = (course / course_writer.STUDENTS_CONFIG).read_text(encoding="utf-8")
    for student in (alice, bob):
        (student.home / ".jupyter").mkdir()
        (student.home / ".jupyter" / "nbgrader_config.py").write_text(config, encoding="utf-8")
        students.give(student, student.home / ".jupyter")
    logs = [nbgrader(course, "generate_assignment", LAB), nbgrader(course, "release_assignment", LAB)]
    for student, work in ((alice, "written"), (bob, "hostile")):
        logs.append(students.nbgrader(student, "fetch_assignment", LAB))
        hand_in(work, student.home / LAB, student)
        logs.append(students.nbgrader(student, "submit", LAB))
    for name, work in BY_HAND.items():  # these came by e-mail: the instructor files them in submitted/
        folder = course / "submitted" / name / LAB
        shutil.copytree(course / "release" / LAB, folder)
        hand_in(work, folder)
    probes = students.can_read(
        bob,
        [
            course / "source" / LAB / "softmax.py",
            course / "private" / "secret",
            course / "private",
            course / "gradebook.db",
            course / course_writer.CONFIG,
            course,
            course / "exchange" / COURSE_ID / "inbound",
            alice.home / ".local" / "share" / "jupyter" / "nbgrader_cache",
        ],
    )
    logs.append(nbgrader(course, "collect", LAB))
    autograde = nbgrader(course, "autograde", LAB, check=False)  # exits 1: two notebooks it could not grade
    failed = set(re.findall(r"error processing assignment '\S+' for student '(\S+)'", autograde.stderr))
    assert autograde.returncode == 1 and failed == {"dave", "erin"}, autograde.stderr[-3000:]
    logs.append(autograde)
    logs += [nbgrader(course, "generate_feedback", LAB), nbgrader(course, "release_feedback", LAB)]
    for student in (alice, bob):
        logs.append(students.nbgrader(student, "fetch_feedback", LAB))
    logs.append(nbgrader(course, "export"))
    seconds = time.monotonic() - started
    batch = subprocess.run(
        [*ATTNLAB, "grade-batch", str(course), "--csv", str(base / "batch.csv"), "-j", "2", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert batch.returncode == 0, batch.stdout[-2000:] + batch.stderr[-4000:]
    return {
        "base": base,
        "course": course,
        "students": {"alice": alice, "bob": bob},
        "probes": probes,
        "log": "\n".join(done.stdout + done.stderr for done in logs),
        "export": read_csv(course / "grades.csv"),
        "batch": read_csv(base / "batch.csv"),
        "seconds": seconds,
    }


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_the_course_runs_through_the_exchange(run: dict) -> None:
    course, by_name = run["course"], run["students"]
    for name in ("alice", "bob"):
        student = by_name[name]
        assert (course / "submitted" / student.name / LAB / "timestamp.txt").is_file(), f"{student.name} not collected"
    for name in ("alice", "bob"):
        student = by_name[name]
        fetched = list((student.home / LAB / "feedback").glob(f"*/{LAB}.html"))
        page = course / "feedback" / student.name / LAB / f"{LAB}.html"
        assert [f.read_bytes() for f in fetched] == [page.read_bytes()], f"{name}'s feedback did not come through"
    for name in BY_HAND:
        assert not (course / "feedback" / name).exists(), "nbgrader has no feedback for a hand-in it did not grade"
    assert "are invalid, changing them" not in run["log"], "nbgrader found the exchange's modes wrong"
    assert "You don't" not in run["log"], "nbgrader found a folder of the exchange it may not use"
    print(f"\nthe course from writing to export took {run['seconds']:.1f} s:")
    print("\n".join(f"  {command}: {seconds:.1f} s" for command, seconds in TIMES))


def test_the_exported_csv_agrees_with_grade_batch_and_says_why_for_a_hand_in_without_a_notebook(run: dict) -> None:
    exported, batch, names = run["export"], run["batch"], run["students"]
    assert set(exported) == set(batch) == {*(s.name for s in names.values()), *BY_HAND}
    for student_id, row in exported.items():
        assert float(row["score"]) == pytest.approx(float(batch[student_id]["total"])), (student_id, row)
    written = sum(tasks.step(step).points for step in REFERENCE_STEPS)
    assert float(exported[names["alice"].name]["score"]) == written
    assert exported[names["alice"].name][export.NOTE] == "" and exported[names["bob"].name][export.NOTE] == ""
    whys = {
        "carol": export.NO_NOTEBOOK,
        "dave": export.RENAMED.format(names=RENAMED, expected=notebook.NOTEBOOK),
        "erin": f"{notebook.NOTEBOOK} cannot be read as a notebook",
    }
    for name, why in whys.items():
        assert why in exported[name][export.NOTE] and "grade-batch" in exported[name][export.NOTE], exported[name]
        assert float(exported[name]["score"]) > 0, "the kit's points, not nbgrader's silent 0"
    assert written - tasks.step("softmax").points < float(exported["carol"]["score"]) < written


def test_an_unanswered_question_scores_0_and_an_answered_one_waits_for_a_manual_grade(run: dict) -> None:
    """The sanitised notebook keeps an answer left as released byte for byte: nbgrader's checksum still tells it."""
    names = run["students"]
    with Gradebook(f"sqlite:///{run['course'] / 'gradebook.db'}", COURSE_ID) as gradebook:
        alice = gradebook.find_grade(hostile.FORM_ID, LAB, LAB, names["alice"].name)
        bob = gradebook.find_grade(hostile.FORM_ID, LAB, LAB, names["bob"].name)
        assert (alice.auto_score, alice.needs_manual_grade) == (0.0, False)
        assert bob.needs_manual_grade


def test_students_cannot_read_the_course_its_solutions_or_each_other(run: dict) -> None:
    bob = run["students"]["bob"]
    if bob.uid is None:
        pytest.skip("the students are not real accounts here (not root, or no bubblewrap): permissions untested")
    assert "read" not in run["probes"].values(), run["probes"]
    course = run["course"]
    for path in (course / "source", course / "private", course / "submitted", course / "autograded"):
        assert path.stat().st_mode & 0o077 == 0, f"{path} is open to others"
    assert all(p.stat().st_mode & 0o077 == 0 for p in (course / "source").rglob("*")), "a source file is open"
    assert "cheating attempt" not in run["log"], "collect found a submission owned by another account"


def test_what_students_see_holds_no_seed_or_private_path(run: dict) -> None:
    for student in run["students"].values():
        for page in (student.home / LAB / "feedback").rglob("*.html") if (student.home / LAB).is_dir() else ():
            text = page.read_text(encoding="utf-8")
            assert "seed" not in text.lower() and str(run["course"] / "private") not in text, page
            assert "HIDDEN TESTS" not in text


# -- formgrader and the feedback page in a real browser ------------------------------------------------------------
def _browser_missing() -> str | None:
    from tests.test_workbench_browser import _missing

    return _missing()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def jupyter(run: dict) -> Iterator[dict]:
    """A Jupyter server for the instructor, in the course folder, with formgrader; its log in a file."""
    port, token = _free_port(), "attnlab-test-token"
    log = run["base"] / "jupyter.log"
    with log.open("w") as handle:
        server = subprocess.Popen(
            [
                *JUPYTER_SERVER,
                f"--port={port}",
                f"--ServerApp.root_dir={run['base']}",
                f"--IdentityProvider.token={token}",
            ],
            cwd=run["course"],
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError(f"the Jupyter server did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.5)
        yield {"url": url, "token": token, "log": log}
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def chromium() -> Iterator:
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from autograder.deliver.handout import browser
    from tests.test_workbench_browser import CHROMEDRIVER

    options = webdriver.ChromeOptions()
    options.binary_location = browser.find_chromium()
    profile = tempfile.mkdtemp(prefix="attnlab-selenium-")
    flags = (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
    )  # fmt: skip
    for flag in flags:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def visit(driver, jupyter: dict, path: str) -> dict:
    """Open ``path`` on the server as the logged-in instructor; what the page did: the URLs it requested, what its
    own script state says, its text, and the server's log lines since."""
    driver.get_log("performance")  # drop what came before
    before = jupyter["log"].stat().st_size
    separator = "&" if "?" in path else "?"
    driver.get(f"{jupyter['url']}{path}{separator}token={jupyter['token']}")
    end = time.monotonic() + 30
    while driver.execute_script("return document.readyState") != "complete" and time.monotonic() < end:
        time.sleep(0.1)
    time.sleep(2.0)  # onerror, onload, refresh and fetches all fire within this on an idle page
    requests = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    pwned = driver.execute_script("try { return window.top.attnlabPwned || null } catch (e) { return 'blocked' }")
    with jupyter["log"].open() as handle:
        handle.seek(before)
        server = handle.read()
    return {"requests": requests, "pwned": pwned, "text": driver.find_element("tag name", "body").text, "log": server}


def api_requests(seen: dict) -> list[str]:
    return [url for url in seen["requests"] if re.match(r"https?://[^/]+/api/", url) or hostile.MARK in url]


def test_formgrader_and_the_feedback_page_of_a_hostile_notebook_run_no_script(
    run: dict, jupyter: dict, chromium
) -> None:
    course, bob = run["course"], run["students"]["bob"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gradebook:
        submission = gradebook.find_submission_notebook(LAB, LAB, bob.name).id
    relative = course.relative_to(run["base"])
    pages = {
        "formgrader": f"/formgrader/submissions/{submission}/",
        "feedback": f"/files/{relative}/feedback/{bob.name}/{LAB}/{LAB}.html",
    }
    # The detectors work: bob's notebook rendered without sanitising, served the same way, sets them all off.
    from nbconvert.exporters import HTMLExporter

    control, _ = HTMLExporter().from_filename(str(course / "submitted" / bob.name / LAB / notebook.NOTEBOOK))
    (run["base"] / "control.html").write_text(control, encoding="utf-8")
    seen = visit(chromium, jupyter, "/files/control.html")
    assert api_requests(seen) and hostile.MARK in seen["log"], "the detectors saw nothing"  # (its refresh navigates
    # away from the page, so its own state is gone by the time it is read)

    for name, path in pages.items():
        seen = visit(chromium, jupyter, path)
        assert hostile.VISIBLE in " ".join(seen["text"].split()), f"{name}: the answer is not shown:\n{seen['text']}"
        assert seen["pwned"] is None, f"{name}: a student's script ran: {seen['pwned']}"
        assert not api_requests(seen), f"{name}: the page asked the Jupyter API: {api_requests(seen)}"
        assert hostile.MARK not in seen["log"], f"{name}: a request of the student's reached the server"
    assert not list(run["base"].rglob(f"{hostile.MARK}*")), "a marker file was written"
    assert not os.path.exists(run["base"] / f"{hostile.MARK}-script-tag.txt")
