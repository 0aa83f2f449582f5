"""The pages a person reads pass axe-core's WCAG 2.1 A and AA rules, and the workbench works from the keyboard.

Every page the kit writes for a person is checked in headless chromium with axe-core (``tests/vendor/axe-core``,
vendored from the npm registry: nothing is downloaded while testing): the handout in every language
(``attnlab handout``), the HTML report of a correct, an untouched and a buggy hand-in (``attnlab grade --html``),
the workbench of the reference and of the stubs (``attnlab workbench``), in each of its views, and the class summary
(``attnlab grade-batch``). Zero violations of the rules tagged ``wcag2a``, ``wcag2aa``, ``wcag21a`` and
``wcag21aa``. Then a keyboard alone walks the workbench: Tab reaches its controls, Enter opens a view, the arrow
keys move between a matrix's cells, a typed prediction is recorded with Enter, and a field that holds no number
says so. Second tier: it needs chromium, its chromedriver and Selenium (skipped with the reason otherwise).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.deliver.batch import summary
from autograder.deliver.handout import html as handout_html
from autograder.deliver.workbench import build
from autograder.report import render_html
from tests import kit
from tests.test_workbench_browser import _missing, find, open_page, wait
from tests.test_workbench_browser import driver as driver

pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()}; the accessibility tests skip")

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
WCAG21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WRONG_AXIS = ("softmax", "e / np.sum(e, axis=axis, keepdims=True)", "e / np.sum(e, axis=0, keepdims=True)")
VIEWS = ("stages", "calibrator", "tracker", "lens", "cache", "predict")


def violations(driver) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations of the page open in ``driver``, one line each (rule, where, why)."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})"
        ".then(r => done(r.violations.map(v => [v.id, v.help, v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': '"
        " + n.failureSummary.replace(/\\s+/g, ' ')).join(' | ')])))"
        ".catch(e => done([['axe-error', String(e), '']]));",
        WCAG21_AA,
    )
    return [f"{rule} ({help}): {where}" for rule, help, where in found]


def open_plain(driver, page: Path) -> None:
    driver.get("about:blank")
    driver.get(page.resolve().as_uri())


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, reference_report, stubs_report) -> dict[str, Path]:
    """Every page to check, written once for the module."""
    into = tmp_path_factory.mktemp("accessible-pages")
    found: dict[str, Path] = {}
    for lang in ("en", "id", "ru", "tr"):
        found[f"handout-{lang}"] = handout_html.build(kit.KIT, into / f"handout.{lang}.html", lang)
    wrong = into / "wrong_axis"
    shutil.copytree(kit.SOLUTIONS, wrong, ignore=shutil.ignore_patterns("__pycache__"))
    module, old, new = WRONG_AXIS
    source = (wrong / f"{module}.py").read_text(encoding="utf-8")
    (wrong / f"{module}.py").write_text(source.replace(old, new), encoding="utf-8")
    buggy = kit.grade(wrong, steps=("softmax", "scaling", "mask"))
    for name, report in (("reference", reference_report), ("stubs", stubs_report), ("buggy", buggy)):
        found[f"report-{name}"] = into / f"report-{name}.html"
        found[f"report-{name}"].write_text(render_html.page(report, handout=None), encoding="utf-8")
    for name, folder in (("reference", kit.SOLUTIONS), ("stubs", kit.STUBS)):
        found[f"workbench-{name}"] = into / f"workbench-{name}.html"
        build.write(build.Options(folder), found[f"workbench-{name}"])
    from tests.test_batch_summary import CLASS

    whole = summary.summarise(CLASS)
    found["summary"] = into / "summary.html"
    found["summary"].write_text(summary.page(whole, summary.chart(whole)), encoding="utf-8")
    return found


STATIC = ["handout-en", "handout-id", "handout-ru", "handout-tr", "report-reference", "report-stubs", "report-buggy"]


@pytest.mark.parametrize("name", [*STATIC, "summary"])
def test_the_page_has_no_wcag_violation(driver, pages: dict[str, Path], name: str) -> None:
    open_plain(driver, pages[name])
    found = violations(driver)
    assert not found, f"{name}: " + "\n".join(found)


@pytest.mark.parametrize("which", ["reference", "stubs"])
@pytest.mark.parametrize("view", VIEWS)
def test_every_view_of_the_workbench_has_no_wcag_violation(driver, pages, which: str, view: str) -> None:
    open_page(driver, pages[f"workbench-{which}"], f"tab={view}")
    found = violations(driver)
    assert not found, f"workbench {which}, {view}: " + "\n".join(found)


def active(driver):
    return driver.switch_to.active_element


def tab_until(driver, matches, most: int = 200):
    """Press Tab until the focused element ``matches``; it. Fails when Tab never reaches one."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    for _ in range(most):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if matches(active(driver)):
            return active(driver)
    raise AssertionError("Tab never reached the control")


def test_the_workbench_is_used_with_the_keyboard_alone(driver, pages) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(driver, pages["workbench-reference"])
    find(driver, "body").click()
    # Tab reaches the selected view's tab (one tab stop for the tab list); the arrow keys select another
    tab = tab_until(driver, lambda e: (e.get_attribute("id") or "").startswith("tab-"))
    assert tab.get_attribute("aria-selected") == "true"
    tab.send_keys(Keys.ARROW_LEFT)  # from the first view to the last: predict
    assert active(driver).get_attribute("id") == "tab-predict"
    wait(driver, lambda: find(driver, "#exp-mask_first_row"))
    # a typed prediction: a field that holds no number says so, a number is recorded with Enter
    field = tab_until(driver, lambda e: e.get_attribute("id") == "guess-mask_first_row")
    field.send_keys("e")
    assert field.get_attribute("aria-invalid") == "true"
    assert "“e”" in find(driver, "#hint-mask_first_row").text
    assert not find(driver, "#exp-mask_first_row button.test").is_enabled()
    field.send_keys(Keys.BACKSPACE, "1e-1")
    assert field.get_attribute("aria-invalid") == "false"
    field.send_keys(Keys.ENTER)
    assert "0.1" in wait(driver, lambda: find(driver, "#reveal-mask_first_row").text)
    # the stages view: Tab reaches a cell of the matrix, the arrow keys move between cells, Enter opens one
    open_page(driver, pages["workbench-reference"], "tab=stages")
    find(driver, "body").click()
    cell = tab_until(driver, lambda e: e.tag_name == "td" and e.get_attribute("tabindex") is not None)
    before = cell.get_attribute("data-cell") or cell.id
    cell.send_keys(Keys.ARROW_RIGHT)
    moved = active(driver)
    assert moved.tag_name == "td" and (moved.get_attribute("data-cell") or moved.id) != before
    moved.send_keys(Keys.ENTER)
    wait(driver, lambda: active(driver) is not None)
