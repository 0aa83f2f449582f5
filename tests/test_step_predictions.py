"""The predict-first step: its question file, the graders, the probe, and an instructor's own question."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import shutil
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

try:
    import tomllib  # novermin  (3.11+; tomli stands in below)
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from autograder.base import chapter, tasks
from autograder.base.reference import Reference
from autograder.grading.model import GradeReport
from autograder.judge import cases, diagnose, predictions
from autograder.judge.diagnose import catalog
from autograder.judge.diagnose import predictions as prediction_mistakes
from autograder.judge.predictions import Question, QuestionError
from tests import kit
from tests.kit import Variant

STEP = "predictions"
TITLE = tasks.step(STEP).title
QUESTIONS = predictions.load()
SOLUTION = kit.SOLUTIONS / "predictions.py"
GRADER = kit.ROOT / "autograder" / "grading" / "graders" / tasks.LAB / "test_predictions.py"
HIDDEN_GRADER = kit.HIDDEN / "test_predictions_hidden.py"


def _grade(folder: Path) -> GradeReport:
    return kit.grade(folder, steps=(STEP,))


def _answer_line(question_id: str) -> str:
    """The reference's ``"id": value,  # ANSWER`` line (stripped)."""
    lines = [
        line.strip()
        for line in SOLUTION.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith(f'"{question_id}":') and line.rstrip().endswith("# ANSWER")
    ]
    assert len(lines) == 1, (
        f"solutions/{tasks.LAB}/predictions.py needs one answer line for {question_id!r}, found {len(lines)}"
    )
    return lines[0]


def _answering(question_id: str, literal: str) -> str:
    return f'"{question_id}": {literal},  # ANSWER'


def _literal(question: Question, value: Any) -> str:
    """A normalised value as the literal a student would write."""
    return repr(value if question.kind in ("shape", "choice") else list(value) if isinstance(value, tuple) else value)


def _folder(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "predictions.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def ref() -> Reference:
    return Reference(kit.SOLUTIONS, tasks.MODULES)


@pytest.fixture(scope="module")
def computed(ref: Reference) -> dict[str, Any]:
    return {q.id: predictions.compute(q, ref) for q in QUESTIONS}


# -- the question file -------------------------------------------------------


def _missing_answers(questions: tuple[Question, ...], answers: dict[str, Any]) -> list[str]:
    """Questions without a reference answer, and answers without a question."""
    ids = [q.id for q in questions]
    return [f"question {i!r} has no answer in PREDICTIONS" for i in ids if i not in answers] + [
        f"PREDICTIONS[{k!r}] has no question" for k in answers if k not in ids
    ]


def test_every_question_has_a_reference_answer(ref: Reference) -> None:
    assert _missing_answers(QUESTIONS, ref.predictions.PREDICTIONS) == []
    assert list(ref.predictions.PREDICTIONS) == [q.id for q in QUESTIONS], (
        "keep PREDICTIONS in the order of data/predictions.toml"
    )


def test_reference_answers_are_literals() -> None:
    tree = ast.parse(SOLUTION.read_text(encoding="utf-8"))
    (table,) = [n.value for n in tree.body if isinstance(n, ast.AnnAssign) and n.target.id == "PREDICTIONS"]
    for key, value in zip(table.keys, table.values):
        ast.literal_eval(value)  # raises on anything computed
        _answer_line(ast.literal_eval(key))


def test_points_are_the_registry_s() -> None:
    step = tasks.step(STEP)
    assert sum(q.points for q in QUESTIONS) == step.points
    assert step.hidden_points == step.points * tasks.PREDICTION_HIDDEN_SHARE > 0  # the reference is instructor-side


def test_mistakes_of_the_file_are_defined_and_used() -> None:
    used = {w.mistake for q in QUESTIONS for w in q.wrong}
    assert used == set(prediction_mistakes.MISTAKES), f"defined but unused: {set(prediction_mistakes.MISTAKES) - used}"
    for mistake in prediction_mistakes.MISTAKES:
        assert catalog.MISTAKES[mistake] is prediction_mistakes.MISTAKES[mistake]
    others = {
        m
        for info in pkgutil.iter_modules(diagnose.__path__)
        if info.name not in ("catalog", STEP)
        for m in getattr(importlib.import_module(f"{diagnose.__name__}.{info.name}"), "MISTAKES", {})
    }
    assert others.isdisjoint(prediction_mistakes.MISTAKES), "a mistake id of the predictions is used by another step"


def test_wrong_predictions_are_wrong_and_distinct(computed: dict[str, Any]) -> None:
    for question in QUESTIONS:
        for index, wrong in enumerate(question.wrong):
            assert not predictions.agrees(question, wrong.value, computed[question.id]), (
                f"{question.id}: wrong value {wrong.value} is the right answer"
            )
            for other in question.wrong[index + 1 :]:
                assert other.mistake == wrong.mistake or not predictions.agrees(question, wrong.value, other.value), (
                    f"{question.id}: {wrong.value} matches two mistakes"
                )


# The chapter value each question restates, as the question's value (question id, catalog id) -> value.
CHAPTER = {
    ("favoured_keys", "RU-QKT"): lambda: tuple(np.argmax(chapter.value("RU-QKT"), axis=1)),
    ("favoured_keys", "RU-A"): lambda: tuple(np.argmax(chapter.value("RU-A"), axis=1)),
    ("output_shape", "RU-shapes"): lambda: tuple(int(n) for n in chapter.value("RU-shapes")[0]),
    ("equal_keys_weights", "RU-equalkeys"): lambda: tuple(chapter.value("RU-equalkeys")),
    ("single_token_weight", "RU-single"): lambda: chapter.value("RU-single")["A"][0][0],
    ("single_token_output", "RU-single"): lambda: tuple(chapter.value("RU-single")["O"][0]),
    ("causal_first_row", "ACT-maskrows"): lambda: (
        chapter.value("ACT-maskrows")[0],
        0.0,
        0.0,
        0.0,
    ),  # row 0 sums to 1 on key 0 alone
    ("permuted_inputs", "RU-perm"): lambda: "swapped" if chapter.value("RU-perm") < 1e-12 else "different",
    ("kv_cache_gb", "T764-10.7"): lambda: float(chapter.value("T764-10.7")),
}


def test_computed_values_agree_with_the_chapter(computed: dict[str, Any]) -> None:
    for question in QUESTIONS:
        for entry in question.chapter:
            assert (question.id, entry) in CHAPTER, (
                f"{question.id} restates {entry}: add how to compare it to CHAPTER in this file"
            )
            value = predictions.normalise(question, predictions._plain(CHAPTER[question.id, entry]()))
            assert predictions.agrees(replace(question, tolerance=1e-6), computed[question.id], value), (
                f"{question.id}: computed {computed[question.id]}, {entry} gives {value}"
            )


def test_question_texts_give_the_russian_inputs() -> None:
    by_id = {q.id: q for q in QUESTIONS}
    for question_id in ("favoured_keys", "permuted_inputs"):
        assert "Q = [[0, 3], [2, -1]]" in by_id[question_id].text and "K = [[3, 0], [-1, 2]]" in by_id[question_id].text
    assert chapter.inputs("RU_Q").tolist() == [[0, 3], [2, -1]] and chapter.inputs("RU_K").tolist() == [[3, 0], [-1, 2]]


def test_no_snapshot_holds_an_answer() -> None:
    """The public engine stores no expected answer of this step: the public check runs the student's own code."""
    assert "predictions" not in cases.case_module_names()
    assert not (kit.ROOT / "autograder" / "data" / "snapshots" / "predictions.npz").exists()
    assert not any(
        name.startswith("prediction")
        for module in cases.case_modules().values()
        for name in (case.name for case in module.CASES)
    )


def _entry(**changes: Any) -> dict[str, Any]:
    """The first question of the file as parsed TOML, with ``changes`` (None deletes a field)."""
    entry = dict(tomllib.loads(tasks.QUESTIONS.read_text(encoding="utf-8"))["question"][1])  # output_shape
    for field, value in changes.items():
        if value is None:
            entry.pop(field)
        else:
            entry[field] = value
    return entry


@pytest.mark.parametrize(
    "changes, field, problem",
    [
        ({"kind": None}, "kind", "is missing"),
        ({"tolerence": 0.1}, "tolerence", "is unknown"),
        ({"kind": "tuple"}, "kind", "is not one of"),
        ({"points": 0}, "points", "positive number"),
        ({"points": True}, "points", "positive number"),
        ({"section": "chapter7"}, "section", "is not a step"),
        ({"id": "Output Shape"}, "id", "lower case"),
        ({"kind": "number"}, "tolerance", "is required"),
        ({"tolerance": 0.1}, "tolerance", "means nothing"),
        ({"kind": "choice"}, "choices", "is required"),
        ({"compute": "ref.scaling.attention(("}, "compute", "line"),
        ({"compute": "x = 1\ny = 2"}, "compute", "must assign 'answer'"),
        ({"chapter": ["RU-nothing"]}, "chapter", "catalog ids"),
        (
            {"wrong": [{"value": [4, 7, 3], "mistake": "no_such_mistake"}]},
            "wrong",
            "not in autograder/judge/diagnose/predictions.py",
        ),
        ({"wrong": [{"value": "4x7x3", "mistake": "predicted_width_of_keys"}]}, "wrong", "str '4x7x3'"),
        ({"wrong": [{"value": [4, 7, 3]}]}, "wrong", "exactly 'value' and 'mistake'"),
        ({"text": ""}, "text", "non-empty string"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_malformed_question_names_question_and_field(changes: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(QuestionError) as caught:
        predictions.parse({"question": [_entry(**changes)]}, "mine.toml")
    message = str(caught.value)
    assert message.startswith("mine.toml: question 1") and f"field {field!r}" in message and problem in message, message
    if "id" not in changes:
        assert "'output_shape'" in message, message


def test_malformed_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text("[[question]]\nid = 'a'\nid = 'b'\n", encoding="utf-8")
    with pytest.raises(QuestionError, match="not valid TOML"):
        predictions.load(path)
    with pytest.raises(QuestionError, match="used twice"):
        predictions.parse({"question": [_entry(), _entry()]})
    with pytest.raises(QuestionError, match=r"\[\[question\]\] tables and nothing else, found \['title'\]"):
        predictions.parse({"question": [_entry()], "title": "x"})


def test_compute_of_the_wrong_form_is_an_error(ref: Reference) -> None:
    (question,) = predictions.parse({"question": [_entry(compute="'a shape'")]})
    with pytest.raises(QuestionError, match="field 'compute' gives str 'a shape'"):
        predictions.compute(question, ref)


@pytest.mark.parametrize(
    "kind, answer, value",
    [
        ("shape", [4, 7, 5.0], (4, 7, 5)),
        ("indices", (1, 0), (1, 0)),
        ("number", 10, 10.0),
        ("numbers", [1, 0.5], (1.0, 0.5)),
        ("choice", "  Swapped. ", "swapped"),
        ("choice", "SWAPPED", "swapped"),
    ],
)
def test_answers_in_any_plain_form_are_read(kind: str, answer: Any, value: Any) -> None:
    question = next(q for q in QUESTIONS if q.kind == kind)
    assert predictions.normalise(question, answer) == value


@pytest.mark.parametrize(
    "kind, answer",
    [
        ("shape", [4, 7.5]),
        ("shape", "4x7x5"),
        ("indices", [True, False]),
        ("number", "10.7"),
        ("number", [10.7]),
        ("numbers", 0.5),
        ("numbers", [0.5, None]),
        ("choice", "swap"),
        ("choice", 1),
    ],
)
def test_answers_of_another_form_are_refused(kind: str, answer: Any) -> None:
    question = next(q for q in QUESTIONS if q.kind == kind)
    with pytest.raises(predictions.AnswerFormError):
        predictions.normalise(question, answer)


# -- the graders -------------------------------------------------------------


def test_reference_scores_full_marks() -> None:
    result = _grade(kit.SOLUTIONS).step(STEP)
    assert result.earned == result.possible == tasks.step(STEP).points, [c.message for c in result.failed]
    public, hidden = result.checks[: len(QUESTIONS)], result.checks[len(QUESTIONS) :]
    assert [c.title for c in public] == [q.short for q in QUESTIONS] and not any(c.hidden for c in public)
    assert [c.title for c in hidden] == [f"{q.short}, against the reference" for q in QUESTIONS]
    share = tasks.PREDICTION_HIDDEN_SHARE
    assert [c.points for c in public] == [q.points * (1 - share) for q in QUESTIONS]
    assert [c.points for c in hidden] == [q.points * share for q in QUESTIONS] and all(c.hidden for c in hidden)


def test_stubs_score_zero_and_reveal_nothing(computed: dict[str, Any]) -> None:
    result = _grade(kit.STUBS).step(STEP)
    assert result.earned == 0 and len(result.checks) == 2 * len(QUESTIONS)
    for check, question in zip(result.checks, QUESTIONS + QUESTIONS):
        assert check.message.startswith(f"{TITLE}: "), check.message
        assert f'PREDICTIONS["{question.id}"]' in check.message and "no prediction yet" in check.message, check.message
        assert "the value the reference computes" not in check.message and not check.internal_error
        if question.kind != "choice":  # a choice question lists its choices, the right one among them
            assert predictions.show(question, computed[question.id]) not in check.message, check.message


VARIANTS = tuple(
    Variant(
        f"{q.id}_{index}_{w.mistake}", STEP, STEP, _answer_line(q.id), _answering(q.id, _literal(q, w.value)), w.mistake
    )
    for q in QUESTIONS
    for index, w in enumerate(q.wrong)
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_listed_wrong_prediction_is_diagnosed(variant: Variant, tmp_path: Path) -> None:
    kit.check_variant(variant, tmp_path)


def test_wrong_prediction_shows_the_computed_value(tmp_path: Path) -> None:
    variant = Variant(
        "shape_d_k",
        STEP,
        STEP,
        _answer_line("output_shape"),
        _answering("output_shape", "(4, 7, 3)"),
        "predicted_width_of_keys",
    )
    own, against = _grade(variant.build(tmp_path)).step(STEP).failed
    assert own.message.startswith(
        f'{TITLE}: PREDICTIONS["output_shape"] in predictions.py: expected (4, 7, 5), what your own code '
        "computes for these inputs (attention)"
    ), own.message
    assert against.hidden and against.message.startswith(
        f'{TITLE}: PREDICTIONS["output_shape"] in predictions.py: expected (4, 7, 5), the value the reference computes'
    )
    for check in (own, against):
        assert "got (4, 7, 3). Likely mistake: the output takes its width from V" in check.message
    assert "section 'Scaled dot-product attention'" in against.message


def test_answer_of_the_wrong_form_fails_without_revealing(tmp_path: Path) -> None:
    variant = Variant(
        "shape_as_text", STEP, STEP, _answer_line("output_shape"), _answering("output_shape", "'4x7x5'"), ""
    )
    for check in _grade(variant.build(tmp_path)).step(STEP).failed:  # the public check and the hidden one
        assert check.message.startswith(
            f'{TITLE}: PREDICTIONS["output_shape"] in predictions.py: expected a tuple of ints, e.g. '
            "(2, 3), got str '4x7x5'."
        ), check.message
        assert "(4, 7, 5)" not in check.message and check.mistake is None and not check.internal_error


def test_other_plain_forms_of_the_right_answers_pass(tmp_path: Path) -> None:
    folder = tmp_path / "other_forms"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    path = folder / "predictions.py"
    text = path.read_text(encoding="utf-8")
    for question_id, literal in (
        ("output_shape", "[4, 7, 5]"),
        ("favoured_keys", "(1, 0)"),
        ("causal_first_row", "[1, 0, 0, 0]"),
        ("permuted_inputs", "'  Swapped. '"),
        ("kv_cache_gb", "2.684"),
        ("single_token_weight", "1"),
    ):
        text = text.replace(_answer_line(question_id), _answering(question_id, literal))
    path.write_text(
        text.replace("from typing import Any\n", "from typing import Any\n\nimport numpy as np\n").replace(
            "[0.5, 0.5]", "np.array([0.5, 0.5])"
        ),
        encoding="utf-8",
    )
    result = _grade(folder).step(STEP)
    assert result.earned == result.possible, [c.message for c in result.failed]


ANSWERS = (
    "{'favoured_keys': [1, 0], 'output_shape': (4, 7, 5), 'equal_keys_weights': [0.5, 0.5], "
    "'single_token_weight': 1.0, 'single_token_output': [5.0, -2.0], 'causal_first_row': [1.0, "
    "0.0, 0.0, 0.0], 'permuted_inputs': 'swapped', 'kv_cache_gb': 2.68}"
)
HOSTILE = {
    "lying_dict": (
        f"""
        ANSWERS = {ANSWERS}

        class Lying(dict):
            def __getitem__(self, key):
                return ANSWERS[key]

            def get(self, key, default=None):
                return ANSWERS.get(key, default)

        PREDICTIONS = Lying({{key: None for key in ANSWERS}})
        """,
        "no prediction yet",
    ),
    "objects": (
        f"""
        class Anything:
            def __eq__(self, other):
                return True

            def __float__(self):
                return 0.0

        class Number(float):
            def __eq__(self, other):
                return True

        PREDICTIONS = {{
            key: Number(1.0) if isinstance(value, float) else Anything() for key, value in {ANSWERS}.items()
        }}
        """,
        "an object of type",
    ),
    "objects_inside": (f"PREDICTIONS = {{key: [type('X', (), {{}})()] for key in {ANSWERS}}}\n", "an object of type X"),
    "fake_dict": (
        """
        class Fake:
            @property
            def __class__(self):
                return dict

        PREDICTIONS = Fake()
        """,
        "PREDICTIONS is an object of type Fake, not a dict",
    ),
    "a_list": ("PREDICTIONS = [[1, 0], (4, 7, 5)]\n", "PREDICTIONS is an object of type list, not a dict"),
    "no_predictions": ("ANSWERS = {}\n", "predictions.py defines no PREDICTIONS"),
    "import_error": (
        "raise RuntimeError('half-written file')\n",
        "importing predictions.py raised RuntimeError: half-written file",
    ),
    "renamed_keys": (
        f"PREDICTIONS = {{key + '_': value for key, value in {ANSWERS}.items()}}\n",
        "no such entry (the keys are: 'favoured_keys_'",
    ),
    "huge": (
        f"PREDICTIONS = {{key: [[[[0]]]] if key == 'output_shape' else list(range(10**6)) for key in {ANSWERS}}}\n",
        "more than",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_predictions_cannot_pass(name: str, tmp_path: Path) -> None:
    source, reason = HOSTILE[name]
    result = _grade(_folder(tmp_path, name, source)).step(STEP)
    assert result.earned == 0
    for check in result.checks:
        assert check.message.startswith(f"{TITLE}: ") and not check.internal_error, check.message
        assert reason in check.message, check.message
    assert all("the value the reference computes" not in c.message for c in result.checks)


def test_probe_caps_strings_and_nesting(tmp_path: Path) -> None:
    from autograder.sandbox.client import Sandbox

    folder = _folder(
        tmp_path,
        "caps",
        "import numpy as np\nPREDICTIONS = {'a': 'x' * 5000, 'b': [[[[1]]]], 'c': np.arange(3), "
        "'d': np.float32(0.5), 'e': (1, [2.5, None])}\n",
    )
    with Sandbox(folder) as sandbox:
        replies = {key: sandbox.probe("prediction", STEP, key) for key in "abcde"}
    assert replies["a"]["status"] == replies["b"]["status"] == "not_plain"
    assert "5000 characters" in replies["a"]["detail"] and "nested" in replies["b"]["detail"]
    assert (replies["c"]["value"], replies["d"]["value"], replies["e"]["value"]) == ([0, 1, 2], 0.5, [1, [2.5, None]])


# -- an instructor's own question --------------------------------------------

EXTRA = '''
[[question]]
id = "scale_divisor"
points = 2
section = "scaling"
short = "What the scores are divided by"
text = "Q and K are rows of width d_k = 16. By what number does scaled_scores divide Q K^T?"
answer = "a number"
kind = "number"
tolerance = 0.01
compute = """
ones = np.ones((1, 16))
answer = ref.scaling.scores(ones, ones)[0, 0] / ref.scaling.scaled_scores(ones, ones)[0, 0]
"""

[[question.wrong]]
value = 16
mistake = "predicted_score_as_weight"
'''


@pytest.fixture
def instructor_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: Reference) -> Iterator[Path]:
    """The kit's question file plus one question, in place of the registry's (no snapshot to make)."""
    path = tmp_path / "predictions.toml"
    path.write_text(tasks.QUESTIONS.read_text(encoding="utf-8") + EXTRA, encoding="utf-8")
    questions = predictions.load(path)
    points = sum(q.points for q in questions)
    step = replace(tasks.step(STEP), points=points, hidden_points=points * tasks.PREDICTION_HIDDEN_SHARE)
    monkeypatch.setattr(tasks, "QUESTIONS", path)
    monkeypatch.setattr(tasks, "STEPS", tuple(step if s.id == STEP else s for s in tasks.STEPS))
    monkeypatch.setattr(tasks, "BY_ID", {**tasks.BY_ID, STEP: step})
    graders = (str(GRADER), str(HIDDEN_GRADER))
    cached = {name: module for name, module in sys.modules.items() if getattr(module, "__file__", None) in graders}
    for name in cached:  # the engine must import the graders again, with the new file
        del sys.modules[name]
    try:
        yield path
    finally:
        for name in [n for n, m in sys.modules.items() if getattr(m, "__file__", None) in graders]:
            del sys.modules[name]
        sys.modules.update(cached)


def test_instructor_question_works_end_to_end(instructor_file: Path, ref: Reference, tmp_path: Path) -> None:
    questions = predictions.load()
    assert [q.id for q in questions][-1] == "scale_divisor" and predictions.compute(questions[-1], ref) == 4.0
    assert _missing_answers(questions, ref.predictions.PREDICTIONS) == [
        "question 'scale_divisor' has no answer in PREDICTIONS"
    ]
    text = SOLUTION.read_text(encoding="utf-8").replace(
        _answer_line("kv_cache_gb"), _answer_line("kv_cache_gb") + '\n    "scale_divisor": ANSWER,  # ANSWER'
    )
    right, wrong, stub = (tmp_path / name for name in ("right", "wrong", "stub"))
    for folder, answer in ((right, "4.0"), (wrong, "16"), (stub, "None")):
        shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
        (folder / "predictions.py").write_text(text.replace("ANSWER,", f"{answer},"), encoding="utf-8")
    result = _grade(right).step(STEP)
    assert result.earned == result.possible == 10
    assert result.checks[len(questions) - 1].title == "What the scores are divided by"
    own, against = _grade(wrong).step(STEP).failed
    assert own.mistake == against.mistake == "predicted_score_as_weight"
    assert "expected 4, what your own code computes for these inputs (scores and scaled_scores)" in own.message, (
        own.message
    )
    assert "expected 4, the value the reference computes" in against.message
    for failed in _grade(stub).step(STEP).failed:
        assert "got None (no prediction yet)" in failed.message and "expected 4" not in failed.message


# -- predict, then test: the public check runs the student's own code, the hidden one the reference -------------


def _wrong_cache(tmp_path: Path, prediction: str) -> Path:
    """The reference with kv_cache_bytes missing the factor 2 for K and V, and ``prediction`` for kv_cache_gb."""
    folder = tmp_path / f"no_factor_two_{prediction}"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    module = folder / "kv_cache.py"
    source = module.read_text(encoding="utf-8")
    assert "per_token = 2 * n_layers" in source
    module.write_text(source.replace("per_token = 2 * n_layers", "per_token = n_layers"), encoding="utf-8")
    answers = folder / "predictions.py"
    answers.write_text(
        answers.read_text(encoding="utf-8").replace(_answer_line("kv_cache_gb"), _answering("kv_cache_gb", prediction)),
        encoding="utf-8",
    )
    return folder


def test_a_prediction_that_agrees_with_a_wrong_function_earns_nothing_where_a_reference_is(tmp_path: Path) -> None:
    """The student's own grade (no reference anywhere) can only hold the prediction to the student's own code; an
    instructor's grade holds that code to the reference too: two values from the student's process agreeing with
    each other prove nothing."""
    folder = _wrong_cache(tmp_path, "1.342")
    local = kit.grade(folder, steps=(STEP,), public_only=True, reference=None).step(STEP)
    assert local.earned == local.possible == tasks.step(STEP).public_points
    instructor = _grade(folder).step(STEP)
    public, hidden = sorted(instructor.failed, key=lambda check: check.hidden)
    assert public.name == "test_kv_cache_gb" and "a correct implementation does not give" in public.message
    assert "1.34218" in public.message and "2.68" not in public.message  # the public check tells no reference value
    assert hidden.hidden and hidden.name == "test_kv_cache_gb_against_reference"
    assert hidden.mistake == "predicted_kv_without_factor_two" and "expected 2.68435, the value the reference" in (
        hidden.message
    )
    assert instructor.earned == tasks.step(STEP).points - public.points - hidden.points


def test_a_right_prediction_against_a_wrong_function_says_they_disagree(tmp_path: Path) -> None:
    (failed,) = kit.grade(_wrong_cache(tmp_path, "2.68"), steps=(STEP,), public_only=True).step(STEP).failed
    assert "expected 1.34218, what your own code computes for these inputs (kv_cache_bytes), got 2.68" in (
        failed.message
    ), failed.message
    assert "reference" not in failed.message and failed.mistake is None


def test_a_prediction_for_a_function_not_written_yet_is_not_tested(tmp_path: Path) -> None:
    folder = tmp_path / "stubbed_cache"
    shutil.copytree(kit.SOLUTIONS, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    shutil.copyfile(kit.STUBS / "kv_cache.py", folder / "kv_cache.py")
    result = kit.grade(folder, steps=(STEP,), public_only=True).step(STEP)
    (failed,) = result.failed
    assert failed.name == "test_kv_cache_gb" and "your kv_cache_bytes to compute it" in failed.message, failed.message
    assert "NotImplementedError" in failed.message and not failed.internal_error
