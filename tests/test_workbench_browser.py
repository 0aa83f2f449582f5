"""The workbench in a real browser: headless chromium driven by Selenium clicks cells, predicts and reads the result.

Three pages are built once for the module (the reference, the untouched
stubs, and a submission whose softmax runs over the query axis) and one
browser opens them all. Selenium is pointed at the system's chromedriver
(``apt-get install -y chromium chromium-driver``; ``ATTNLAB_CHROMEDRIVER``
names another): its own driver manager would try to download one. Skipped,
with the reason, where there is no browser, driver or Selenium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.deliver.handout import browser
from autograder.deliver.workbench import build
from tests import kit

CHROMEDRIVER = os.environ.get("ATTNLAB_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (  # as autograder/deliver/handout/browser.py starts chromium, and nothing that would reach the network
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--no-first-run", "--disable-extensions", "--window-size=1300,1400",
)  # fmt: skip


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if browser.find_chromium() is None:
        return "chromium is not installed (apt-get install -y chromium, or set ATTNLAB_CHROMIUM)"
    if not Path(CHROMEDRIVER).is_file():
        return f"no chromedriver at {CHROMEDRIVER} (apt-get install -y chromium-driver, or set ATTNLAB_CHROMEDRIVER)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()}; the workbench's browser tests skip")

WRONG_AXIS = ("softmax", "e / np.sum(e, axis=axis, keepdims=True)", "e / np.sum(e, axis=0, keepdims=True)")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    into = tmp_path_factory.mktemp("workbench-pages")
    wrong = into / "wrong_axis"
    shutil.copytree(kit.SOLUTIONS, wrong, ignore=shutil.ignore_patterns("__pycache__"))
    module, old, new = WRONG_AXIS
    source = (wrong / f"{module}.py").read_text(encoding="utf-8")
    assert old in source, "the softmax of the reference changed; update WRONG_AXIS"
    (wrong / f"{module}.py").write_text(source.replace(old, new), encoding="utf-8")
    built = {}
    for name, folder in (("reference", kit.SOLUTIONS), ("stubs", kit.STUBS), ("buggy", wrong)):
        out = into / f"{name}.html"
        built[name] = (out, build.write(build.Options(folder), out))
    return built


@pytest.fixture(scope="module")
def driver() -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser.find_chromium()
    profile = tempfile.mkdtemp(prefix="attnlab-selenium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield chrome
    chrome.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, page: Path, state: str = "") -> None:
    driver.get("about:blank")
    driver.get(page.resolve().as_uri() + (f"#{state}" if state else ""))
    wait(driver, lambda: driver.find_element("css selector", "body").get_attribute("data-ready") == "true")
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"the page's script failed: {errors}"


def wait(driver, condition, seconds: float = 10.0):
    """Poll ``condition`` until it holds (the page draws synchronously; this only absorbs a slow machine)."""
    end = time.monotonic() + seconds
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception:  # an element not drawn yet
            if time.monotonic() > end:
                raise
        if time.monotonic() > end:
            raise AssertionError("the page did not reach the expected state")
        time.sleep(0.05)


def find(driver, selector: str):
    return driver.find_element("css selector", selector)


def text(driver, selector: str) -> str:
    return find(driver, selector).text


def predict(driver, experiment: str, answer: str) -> str:
    """Enter ``answer`` (a radio's index, or a number) for ``experiment``, record it, and return what is revealed."""
    find(driver, "#tab-predict").click()
    card = find(driver, f"#exp-{experiment}")
    radios = card.find_elements("css selector", "input[type=radio]")
    if radios:
        radios[int(answer)].click()
    else:
        field = card.find_element("css selector", "input[inputmode=decimal]")
        field.clear()
        field.send_keys(answer)
    button = card.find_element("css selector", "button.test")
    assert button.is_enabled(), "the test button stays disabled after a prediction"
    button.click()
    return wait(driver, lambda: text(driver, f"#reveal-{experiment}"))


def test_the_reference_page_shows_how_a_clicked_score_is_made_and_tests_a_prediction(driver, pages) -> None:
    page, _data = pages["reference"]
    open_page(driver, page, "tab=stages&stage=sum")
    find(driver, '#grid-sum td[data-i="2"][data-j="1"]').click()
    detail = text(driver, "#detail")
    assert "1.80 × 0.15 + 2.00 × 1.35" in detail and "2.9700" in detail, detail
    # the keyboard: the picked cell has focus; move left and press Enter
    cell = find(driver, '#grid-sum td[data-i="2"][data-j="1"]')
    assert driver.switch_to.active_element == cell
    cell.send_keys("\ue012")  # ArrowLeft
    driver.switch_to.active_element.send_keys("\ue007")  # Enter
    assert "2.7300" in text(driver, "#detail") and "[2, 0]" in text(driver, "#detail")
    with_value = predict(driver, "value_row", "1")  # sütü
    assert "sütü" in with_value and "0.5012" in with_value and "matches what your code computed" in with_value
    assert "The chapter's row: 0.4230, 0.5012, 0.0759" in with_value
    counted = predict(driver, "scores_1024", "1000")
    assert "1,048,576 scores" in counted and "524,800" in counted and "something else" in counted


def test_a_prediction_is_kept_on_this_computer(driver, pages) -> None:
    page, _data = pages["reference"]
    open_page(driver, page, "tab=predict")
    predict(driver, "mask_first_row", "0.5")
    open_page(driver, page, "tab=predict")
    kept = find(driver, "#guess-mask_first_row").get_attribute("value")
    assert kept == "0.5", "the prediction was not kept in the browser's storage"
    assert find(driver, "#exp-mask_first_row button.test").is_enabled()


def test_the_stubs_page_says_what_each_view_will_show_and_what_to_read(driver, pages) -> None:
    page, _data = pages["stubs"]
    open_page(driver, page, "tab=stages&stage=sum")
    problem = text(driver, ".problem.todo")
    assert "scores(Q, K) raises NotImplementedError" in problem and "handouts/lab07_attention.md#scaling" in problem
    find(driver, '#grid-sum td[data-i="2"][data-j="1"]').click()  # the chapter's grid takes the clicks
    detail = text(driver, "#detail")
    assert "none yet" in detail and "The chapter's [2, 1]: 2.9700" in detail
    revealed = predict(driver, "scores_1024", "1048576")
    assert "no answer to this yet" in revealed and "1.05 million" in revealed and "NotImplementedError" in revealed
    assert re.search(r"\[[a-z_0-9]+\]", find(driver, "body").text) is None, "a sentence key without its text"


def test_a_buggy_page_reveals_the_students_own_numbers(driver, pages) -> None:
    page, data = pages["buggy"]
    open_page(driver, page, "tab=stages&stage=softmax")
    caption = text(driver, "#grid-softmax caption")
    assert "differs from the chapter" in caption
    weights = next(x for x in data["experiments"] if x["id"] == "value_row")["detail"]["weights"]
    revealed = predict(driver, "value_row", "1")
    theirs = f"{max(weights):.4f}"
    assert theirs in revealed and theirs != "0.5012", revealed  # their weight, beside the chapter's row
    assert "0.4230, 0.5012, 0.0759" in revealed


def test_the_calibrator_asks_for_a_prediction_before_it_shows_a_changed_condition(driver, pages) -> None:
    page, _data = pages["reference"]
    open_page(driver, page, "tab=calibrator")
    assert find(driver, "#cal-weights")  # the default conditions are shown at once
    find(driver, "#cal-scale").click()  # no division by sqrt(d_k)
    assert not driver.find_elements("css selector", "#cal-weights"), "the result showed before a prediction"
    find(driver, '#cal-predict button[data-guess="1"]').click()
    verdict = text(driver, "#cal-verdict")
    assert "sütü" in verdict and "right" in verdict, verdict
    assert find(driver, "#cal-weights")


def test_the_time_control_steps_and_plays_the_flow(driver, pages) -> None:
    page, data = pages["reference"]
    open_page(driver, page, "tab=tracker&pos=3")
    lines = driver.find_elements("css selector", "#tracker-svg path")
    assert len(lines) == 4, "position 3 attends to positions 0 to 3, and to nothing later"
    drawn = sorted(float(p.get_attribute("stroke-width")) for p in lines)
    assert drawn[0] < drawn[-1], "every line has the same thickness"
    find(driver, "body").send_keys("]")
    assert "Position 4" in text(driver, "#time-where")
    find(driver, "#time-play").click()
    wait(driver, lambda: "Position 5" in text(driver, "#time-where") or "Position 6" in text(driver, "#time-where"))
    find(driver, "#time-play").click()  # pause
    stopped = text(driver, "#time-where")
    time.sleep(1.6)
    assert text(driver, "#time-where") == stopped
    open_page(driver, page, "tab=cache&step=5")
    assert "The same logits" in text(driver, "#cache-gap") and "block 1: 6, 6" in text(driver, "#cache-lengths")
    assert json.loads(json.dumps(data["gpt"]["decode"]["steps"][5]["cache"]["lengths"])) == [[6, 6], [6, 6]]


def test_the_tracker_draws_a_line_to_a_later_position_dashed_and_says_so(driver, pages, tmp_path: Path) -> None:
    from autograder.deliver.workbench import page as workbench_page

    _page, data = pages["reference"]
    planted = json.loads(json.dumps(data))
    row = planted["gpt"]["forward"]["layers"][0][0][3]
    row[5], row[3] = 0.25, row[3] - 0.25  # a head that looks ahead: what a missing mask does
    out = tmp_path / "ahead.html"
    out.write_text(workbench_page.render(planted), encoding="utf-8")
    open_page(driver, out, "tab=tracker&pos=3")
    dashed = [
        p for p in driver.find_elements("css selector", "#tracker-svg path") if p.get_attribute("stroke-dasharray")
    ]
    assert [p.get_attribute("data-key") for p in dashed] == ["5"]
    assert "later positions (5)" in text(driver, ".warning")
