"""`attnlab workbench`: the page's data comes from the student's own code, and every failure lands in its view.

No browser here (``tests/test_workbench_browser.py`` clicks the page): these
tests read the data the page embeds, for the reference (it must reproduce the
chapter), the untouched stubs (every view says what to write and where to
read), a buggy submission (the page shows the student's numbers, not the
right ones) and a faulty one (a hang, a crash and NaN cost only the views that
need those functions). Each submission is computed once for the module.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.base import chapter, tasks
from autograder.base.kit import PACKAGE
from autograder.deliver.release import contents, leaks
from autograder.deliver.workbench import build, page, strings, worked
from autograder.judge.cases import core
from autograder.sandbox.client import Limits
from tests import kit

TIMEOUT = 2.0  # seconds a call may take in the faulty submission (its hang costs this once)


def submission(into: Path, name: str, changes: list[tuple[str, str, str]]) -> Path:
    """The reference with each ``(module, old, new)`` replacement made (each ``old`` must be there)."""
    folder = into / name
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for module, old, new in changes:
        path = folder / f"{module}.py"
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{name}: {old!r} is not in {module}.py any more; update the test"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


# Concatenates the heads in the wrong order ([head 2 | head 1]); the toy GPT's attention forgets its mask.
BUGGY = [
    ("block", "concat = np.concatenate(outputs, axis=-1)", "concat = np.concatenate(outputs[::-1], axis=-1)"),
    ("toy_gpt", 'scores.masked_fill(~allowed, float("-inf"))', "scores"),
]
# causal_mask hangs, multi_head ends its process, project returns NaN.
FAULTY = [
    ("mask", "    n_k = n_q if n_k is None else n_k\n", "    while True:\n        pass\n"),
    (
        "block",
        "    X = np.asarray(X, dtype=float)\n    outputs = []",
        "    import os\n\n    os._exit(3)\n    outputs = []",
    ),
    (
        "scaling",
        "    X = np.asarray(X, dtype=float)\n    return X @",
        "    X = np.asarray(X, dtype=float) * np.nan\n    return X @",
    ),
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    into = tmp_path_factory.mktemp("workbench")
    return {"buggy": submission(into, "buggy", BUGGY), "faulty": submission(into, "faulty", FAULTY)}


@pytest.fixture(scope="module")
def reference() -> dict:
    return build.collect(build.Options(kit.SOLUTIONS))


@pytest.fixture(scope="module")
def stubs() -> dict:
    return build.collect(build.Options(kit.STUBS))


@pytest.fixture(scope="module")
def buggy(folders: dict[str, Path]) -> dict:
    return build.collect(build.Options(folders["buggy"]))


@pytest.fixture(scope="module")
def faulty(folders: dict[str, Path]) -> dict:
    return build.collect(build.Options(folders["faulty"], Limits(call_timeout_s=TIMEOUT)))


def array(value) -> np.ndarray:
    """A matrix of the page's data back as floats (None is NaN, "-inf" is -inf)."""
    convert = {None: np.nan, "-inf": -np.inf, "inf": np.inf}
    return np.array([[convert.get(v, v) if not isinstance(v, (int, float)) else v for v in row] for row in value])


def experiment(data: dict, name: str) -> dict:
    return next(x for x in data["experiments"] if x["id"] == name)


# ---- the reference reproduces the chapter in every view ----------------------------------------------------
def test_the_reference_reproduces_every_stage_of_the_chapter(reference: dict) -> None:
    assert set(reference["meta"]["status"].values()) == {"ok"}, reference["meta"]["status"]
    stages = reference["stages"]
    pairs = [
        ("sum", "scores", "scores"),
        ("scale", "scaled", "scaled"),
        ("softmax", "weights", "weights"),
        ("mixing", "output", "output"),
        ("mixing", "weights", "weights"),
        ("concat", "concat", "concat"),
        ("concat", "weights2", "weights2"),
        ("projection", "projected", "projected"),
        ("products", "Q", "Q"),
    ]
    for stage, yours, printed in pairs:
        np.testing.assert_allclose(array(stages[stage]["yours"][yours]), array(stages[stage]["chapter"][printed]))
    masked = stages["mask"]["yours"]
    assert masked["mask"] == np.tril(np.ones((3, 3), dtype=bool)).tolist()
    assert masked["masked"][0][1:] == ["-inf", "-inf"] and masked["weights"][0] == [1.0, 0.0, 0.0]


def test_the_calibrator_holds_every_condition_and_its_default_is_the_chapter(reference: dict) -> None:
    results = reference["calibrator"]["results"]
    assert len(results) == 3 * 2 * 2 * len(worked.TEMPERATURES)
    np.testing.assert_allclose(array(results["2|1|0|1"]["weights"]), chapter.value("T72-A"), atol=1e-12)
    unscaled = array(results["2|0|0|1"]["weights"])  # no division by sqrt(2): the softmax of the raw scores
    raw = chapter.value("T72-QKT")
    np.testing.assert_allclose(unscaled, np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True), atol=1e-12)
    hot, cold = array(results["2|1|0|4"]["weights"]), array(results["2|1|0|0.25"]["weights"])
    assert hot.max() < chapter.value("T72-A").max() < cold.max()  # T = 4 flattens, T = 1/4 sharpens
    masked = array(results["0|1|1|1"]["weights"])  # kedi sütü kedi, causal
    assert np.all(np.triu(masked, 1) == 0) and masked[0, 0] == 1.0


def test_the_toy_gpt_views_come_from_the_students_pieces(reference: dict) -> None:
    gpt = reference["gpt"]
    assert gpt["sizes"] == {"blocks": 2, "heads": 2, "d_model": 8, "d_head": 4, "vocabulary": 16}
    forward = gpt["forward"]
    assert not forward["problems"] and not forward["warnings"]
    n = len(gpt["tokens"])
    for layer in forward["layers"]:
        for head in layer:
            weights = array(head)
            assert weights.shape == (n, n)
            np.testing.assert_allclose(weights.sum(axis=1), 1.0)
            assert np.all(np.triu(weights, 1) == 0), "a head of the reference attends to a later position"
    assert not np.allclose(array(forward["layers"][0][0]), array(forward["layers"][0][1])), "two heads, one pattern"
    steps = gpt["decode"]["steps"]
    assert len(steps) == n
    np.testing.assert_allclose(np.array([s["logits"] for s in steps]), array(forward["logits"]), atol=1e-9)
    for t, step in enumerate(steps):
        assert step["cache"]["lengths"] == [[t + 1, t + 1], [t + 1, t + 1]]
        assert np.shape(step["cache"]["keys"][1][0]) == (t + 1, 4)
    runs = gpt["generate"]["runs"]
    assert runs["cache"]["tokens"] == runs["no_cache"]["tokens"] and len(runs["cache"]["tokens"]) == 8
    assert not gpt["generate"]["problems"], gpt["generate"]["problems"]


def test_the_experiments_answer_with_the_reference_values(reference: dict) -> None:
    assert experiment(reference, "value_row")["answer"] == 1  # sütü
    drop = experiment(reference, "drop_scale")
    assert drop["answer"] == 0 and drop["detail"]["scaled"] < 0.13 < 0.6 < drop["detail"]["unscaled"]
    first = experiment(reference, "mask_first_row")
    assert first["answer"] == 1.0 and first["detail"]["exact_zeros"] == [True, True]
    scores = experiment(reference, "scores_1024")
    assert scores["answer"] == 1024**2 and scores["detail"]["allowed"] == 1024 * 1025 // 2
    assert scores["chapter"]["millions"] == pytest.approx(1.048576)
    assert experiment(reference, "cache_length")["answer"] == 12
    assert all(not x["problems"] for x in reference["experiments"])


# ---- the stubs: every view says what it will show and what to read --------------------------------------------
def test_every_view_of_the_stubs_says_what_to_write_and_where_to_read(stubs: dict) -> None:
    assert set(stubs["meta"]["status"].values()) == {"todo"}, stubs["meta"]["status"]
    views = [*stubs["stages"].values(), stubs["calibrator"], *(stubs["gpt"][k] for k in ("forward", "decode"))]
    for view in views + stubs["experiments"]:
        assert view["problems"], view
        for found in view["problems"]:
            assert found["todo"] and "NotImplementedError" in found["text"]
            anchor = found["link"].partition("#")[2]
            assert found["link"].startswith(tasks.HANDOUT) and anchor in tasks.BY_ID and found["section"]
    assert {p["link"] for p in stubs["stages"]["sum"]["problems"]} == {f"{tasks.HANDOUT}#scaling"}
    assert all(x["answer"] is None for x in stubs["experiments"])
    # the chapter's values are still there to compare with once the code is written
    np.testing.assert_allclose(array(stubs["stages"]["sum"]["chapter"]["scores"]), chapter.value("T72-QKT"))


# ---- a buggy submission: the page shows the student's numbers -------------------------------------------------
def test_a_buggy_submission_sees_its_own_numbers(buggy: dict) -> None:
    concat = array(buggy["stages"]["concat"]["yours"]["concat"])
    printed = chapter.value("T732-concat")
    np.testing.assert_allclose(concat, np.hstack([printed[:, 2:], printed[:, :2]]))  # [head 2 | head 1]: theirs
    assert buggy["meta"]["status"]["stage:softmax"] == "ok"  # what is right stays right


def test_a_toy_gpt_whose_attention_is_not_what_its_heads_compute_is_flagged(buggy: dict) -> None:
    forward = buggy["gpt"]["forward"]
    assert any("block 1" in w and "causal_self_attention" in w for w in forward["warnings"]), forward["warnings"]
    assert buggy["meta"]["status"]["tracker"] == "problem"
    steps, logits = buggy["gpt"]["decode"]["steps"], array(forward["logits"])
    gaps = [np.max(np.abs(np.array(s["logits"]) - logits[t])) for t, s in enumerate(steps)]
    assert max(gaps) > 1e-3  # an unmasked forward pass is not what decoding with the cache gives


# ---- a faulty submission: a hang, a crash and NaN each cost only their views ----------------------------------
def test_a_hang_a_crash_and_nan_cost_only_their_views(faulty: dict) -> None:
    status = faulty["meta"]["status"]
    texts = {name: " ".join(p["text"] for p in view["problems"]) for name, view in faulty["stages"].items()}
    assert f"did not return within {TIMEOUT:g} s" in texts["mask"]
    assert "exit code 3" in texts["concat"] and "exit code 3" in texts["projection"]
    assert any("NaN" in w for w in faulty["stages"]["products"]["warnings"])
    assert faulty["stages"]["products"]["yours"]["Q"][0][0] is None  # NaN travels as null
    for fine in ("sum", "scale", "softmax", "mixing"):
        assert status[f"stage:{fine}"] == "ok", (fine, texts[fine])
    assert status["calibrator"] == status["tracker"] == status["decode"] == "ok"
    scores = experiment(faulty, "scores_1024")
    assert scores["answer"] == 1024**2 and scores["detail"]["allowed"] is None and scores["problems"]
    html = page.render(faulty)
    assert "did not return within" in html and "exit code 3" in html


# ---- the page: self-contained, every sentence translated, student text inert -------------------------------
def test_the_page_is_self_contained_and_student_text_cannot_close_its_script(reference: dict) -> None:
    data = json.loads(json.dumps(reference))
    planted = '</script><script>alert("x")</script><!--'
    data["stages"]["sum"]["problems"] = [{"text": planted, "todo": False, "section": "s", "link": "l"}]
    data["meta"]["folder"] = "<b>folder</b>"
    text = page.render(data)
    assert text.count("<script") == 2 and text.count("</script>") == 2, "student text opened or closed a script"
    assert "<b>folder</b>" not in text and "&lt;b&gt;folder&lt;/b&gt;" in text
    embedded = re.search(r'<script type="application/json" id="wb-data">(.*?)</script>', text, re.DOTALL).group(1)
    assert json.loads(embedded)["stages"]["sum"]["problems"][0]["text"] == planted
    script = page.static("workbench.js")
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(", script), "text as markup"
    # nothing is fetched: no external script, style, image, font or frame
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the page refers to a remote resource"
    assert "<link" not in text and "@import" not in text and "url(http" not in text and "<iframe" not in text
    assert re.findall(r"https?://[^\s\"')]+", text) == ["http://www.w3.org/2000/svg"]  # a namespace, never fetched


def test_every_sentence_of_the_script_is_in_the_catalog_strings() -> None:
    script = page.static("workbench.js")
    literal = set(re.findall(r'\bT\("([a-z0-9_]+)"(?!\s*\+)', script))
    literal |= {k for pair in re.findall(r'T\([^()]*\?\s*"([a-z_]+)"\s*:\s*"([a-z_]+)"', script) for k in pair}
    literal |= set(re.findall(r'valueLine\("([a-z_]+)"', script))
    families = {
        "stage_": [f"stage_{s}{suffix}" for s in worked.STAGES for suffix in ("", "_text", "_what")],
        "tab_": [f"tab_{t}" for t in ("stages", "calibrator", "tracker", "lens", "cache", "predict")],
        "exp_": [
            f"exp_{x}{suffix}"
            for x in ("value_row", "drop_scale", "mask_first_row", "scores_1024", "cache_length")
            for suffix in ("", "_question", "_what", "_yours")
        ]
        + [f"exp_{x}_chapter" for x in ("value_row", "drop_scale", "scores_1024")],
        "generated_": ["generated_cache", "generated_no_cache"],
    }
    assert set(re.findall(r'T\("([a-z_]+)" \+', script)) == set(families)
    needed = literal | {key for keys in families.values() for key in keys}
    missing = sorted(needed - set(strings.TEXT) - set(strings.COUNTED))
    assert not missing, f"the script asks for sentences the catalog strings lack: {missing}"
    assert not re.search(r'\b(text|caption):\s*"[A-Za-z][a-z]+ [a-z]', script), "a sentence written in the script"


def test_the_turkish_page_is_in_turkish(reference: dict) -> None:
    from autograder import i18n

    with i18n.using("tr"):
        turkish = strings.texts()
        text = page.render(reference)
    catalog = i18n.translations("tr")._catalog  # gettext's own table: every msgid with a translation
    untranslated = sorted(k for k, v in strings.TEXT.items() if v not in catalog)
    untranslated += sorted(k for k, (one, _many) in strings.COUNTED.items() if (one, 0) not in catalog)
    assert turkish["tab_stages"] != strings.TEXT["tab_stages"]
    assert not untranslated, f"untranslated in Turkish: {untranslated}"
    assert '<html lang="tr">' in text


# ---- the command, and what it never does -------------------------------------------------------------------
def test_the_command_refuses_a_folder_without_lab_files_and_writes_the_page_otherwise(tmp_path: Path) -> None:
    def attnlab(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "autograder", "workbench", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    (tmp_path / "notes").mkdir()
    done = attnlab("notes")
    assert done.returncode == 2 and "holds none of the lab's files" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "workbench.html").exists()
    assert attnlab("no-such-folder").returncode == 2
    done = attnlab(str(kit.STUBS), "--out", "pages/wb.html", "--lang", "tr")  # no folder is made: refused first
    assert done.returncode == 2 and "pages" in done.stderr and not (tmp_path / "pages").exists()
    (tmp_path / "pages").mkdir()
    done = attnlab(str(kit.STUBS), "--out", "pages/wb.html", "--lang", "tr")
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "pages" / "wb.html").read_text(encoding="utf-8")
    assert '<html lang="tr">' in written and "NotImplementedError" in written


def test_the_workbench_never_imports_student_code_nor_the_reference(reference: dict) -> None:
    inside = [
        name
        for name, m in list(sys.modules.items())
        if kit.SOLUTIONS in Path(getattr(m, "__file__", "") or "/").parents
    ]
    assert not inside, f"student modules imported into the grader: {inside}"
    folder = PACKAGE / "deliver" / "workbench"
    for path in [
        *folder.glob("*.py"),
        PACKAGE / "cli" / "workbench.py",
        PACKAGE / "sandbox" / "probes" / "workbench.py",
    ]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not imported & {"autograder.base.reference", "solutions"}, f"{path.name} imports the reference"


def test_the_student_wheel_holds_the_workbench_and_no_solution() -> None:
    files = [p for p in contents.public_files() if "workbench" in p.as_posix()]
    names = {p.relative_to(PACKAGE).as_posix() for p in files}
    assert {
        "cli/workbench.py",
        "deliver/workbench/build.py",
        "deliver/workbench/static/workbench.js",
        "sandbox/probes/workbench.py",
    } <= names
    assert "deliver/workbench/static/workbench.css" in names
    secrets = leaks.Secrets.of(kit.KIT)
    found = [
        problem
        for path in files
        for problem in leaks.scan_text(
            path.relative_to(PACKAGE).as_posix(), path.read_text("utf-8"), secrets, engine=True
        )
    ]
    assert not found, found
    assert ".js" in leaks.TEXT, "the release scan must read the page's script too"


def test_a_json_number_is_never_nan() -> None:
    from autograder.deliver.workbench.view import numbers

    assert numbers(np.array([[np.nan, -np.inf], [np.inf, 1.5]])) == [[None, "-inf"], ["inf", 1.5]]
    assert numbers({"m": np.array([True, False]), "n": np.int64(3)}) == {"m": [True, False], "n": 3}
    json.dumps(numbers(core.CAUSAL3), allow_nan=False)
