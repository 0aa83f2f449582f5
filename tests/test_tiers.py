"""The test suite's two tiers: decided in one place (tests/conftest.py), both always run in CI (.ci/run)."""

from __future__ import annotations

import ast
import shlex

from tests import conftest, kit

CI = kit.ROOT / ".ci" / "run"
FIRST_TIER_EXAMPLES = (
    ("tests/test_core_steps.py::test_softmax_worked_example", ()),
    ("tests/test_batch.py::test_every_student_is_a_row_and_nothing_stops_the_batch", ("local_run",)),
    ("tests/test_report_html.py::test_the_page_speaks_the_report_language", ()),
    ("tests/test_gradescope.py::test_the_zip_holds_the_scripts_the_lock_the_wheel_and_the_kit", ("gradescope_zip",)),
)


def ci_pytest_runs() -> list[list[str]]:
    """The arguments of every pytest run of .ci/run that always happens: a top-level line (not indented, so
    not inside a branch or a function) of a script that stops at the first failure."""
    runs = []
    for line in CI.read_text(encoding="utf-8").splitlines():
        words = shlex.split(line, comments=True)
        if words[:3] in (["python3", "-m", "pytest"], ["python", "-m", "pytest"]) and not line[:1].isspace():
            assert not {"||", "&", ";"} & set(words), f".ci/run must not let a test run fail quietly: {line!r}"
            runs.append(words[3:])
    return runs


def test_ci_runs_both_tiers_whole_and_stops_at_a_failure() -> None:
    text = CI.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text.splitlines()[:10], "a failed test run must fail CI"
    runs = ci_pytest_runs()
    tiers = set()
    for arguments in runs:
        tier = arguments[arguments.index("--tier") + 1] if "--tier" in arguments else "1"
        others = [a for i, a in enumerate(arguments) if a != "--tier" and (i == 0 or arguments[i - 1] != "--tier")]
        assert not others, f"CI runs each tier whole, without selections: pytest {' '.join(arguments)}"
        tiers.add(tier)
    assert {"1", "2"} <= tiers or "all" in tiers, f"CI runs the tiers {sorted(tiers)} only"


def test_every_test_is_in_exactly_one_tier_and_all_runs_both() -> None:
    cases = [*FIRST_TIER_EXAMPLES]
    for key in conftest.SECOND_TIER:  # one test of each entry: a file's, the test itself, a fixture's user
        if key.startswith("fixture:"):
            cases.append(("tests/test_any.py::test_any", (key.removeprefix("fixture:"),)))
        else:
            cases.append((key if "::" in key else f"{key}::test_any", ()))
    for nodeid, fixtures in cases:
        first, second = (conftest.selected(nodeid, fixtures, tier, named=False) for tier in ("1", "2"))
        assert first != second, nodeid
        assert conftest.selected(nodeid, fixtures, "all", named=False)
        assert conftest.selected(nodeid, fixtures, "1", named=True)  # a file named on the command line runs
    for nodeid, fixtures in FIRST_TIER_EXAMPLES:
        assert conftest.second_tier_reason(nodeid, fixtures) is None


def test_every_second_tier_entry_names_tests_that_exist() -> None:
    """A stale entry (a file renamed, a test gone) would leave its tests in the first tier unnoticed otherwise."""
    defined = {
        node.name
        for node in ast.parse((kit.ROOT / "tests" / "conftest.py").read_text("utf-8")).body
        if isinstance(node, ast.FunctionDef)
    }
    for key, why in conftest.SECOND_TIER.items():
        assert why, key
        if key.startswith("fixture:"):
            assert key.removeprefix("fixture:") in defined, f"{key}: no such fixture in tests/conftest.py"
            continue
        path, _, test = key.partition("::")
        source = kit.ROOT / path
        assert source.is_file(), f"{key}: no such file"
        names = {n.name for n in ast.walk(ast.parse(source.read_text("utf-8"))) if isinstance(n, ast.FunctionDef)}
        assert (test or "").partition("[")[0] in names if test else any(n.startswith("test_") for n in names), key


def test_the_readme_and_the_testing_page_name_both_tier_commands() -> None:
    readme = (kit.ROOT / "README.md").read_text(encoding="utf-8")
    testing = (kit.ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "python3 -m pytest\n" in readme and "[Testing the kit](docs/testing.md)" in readme
    assert "python3 -m pytest --tier 2" in testing and "python3 -m pytest\n" in testing
