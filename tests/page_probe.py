"""A layout probe run inside a page in chromium: which fonts draw a script's letters, and what text is clipped.

Shared by the handout's language tests (``tests/test_languages_handout.py``, run through ``--dump-dom``) and the
workbench's (``tests/test_workbench_languages.py``, run through Selenium). :data:`FUNCTION` is one JavaScript
function ``(letters, sample) -> result``: ``letters`` is a regular expression's source (the characters whose text is
looked at), ``sample`` a sentence in them. The result holds

* ``fonts``: for each family of the body's font stack, whether it draws ``sample`` itself (the same width whatever
  the fallback behind it: a missing glyph would come from the fallback);
* ``used``: the same for the first family of every element whose own text has ``letters`` (a table cell's monospace
  font, a code span's);
* ``clipped``: every such element that clips what overflows it, ends in an ellipsis, or runs off the page outside a
  box that scrolls (text in a scrolling code block or wide table is reachable; text past the page's edge with no
  scrolling box around it is lost);
* ``matched``: how many elements had such text.
"""

from __future__ import annotations

import json

CYRILLIC = "[\\u0400-\\u04FF]"
CYRILLIC_SAMPLE = "Вычислите одну голову самовнимания ЁЖЩЫЭЮЯ ёжщыэюя"
LATIN = "[A-Za-z\\u00C0-\\u024F]"
INDONESIAN_SAMPLE = "Hitung satu head self-attention tanpa masker: query dicocokkan dengan key"

FUNCTION = """
function (letters, sample) {
  const pattern = new RegExp(letters);
  const ctx = document.createElement("canvas").getContext("2d");
  function width(font) { ctx.font = "32px " + font; return ctx.measureText(sample).width; }
  function covers(f) { return Math.abs(width(f + ", monospace") - width(f + ", serif")) < 0.01; }
  const generic = ["serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "math"];
  function named(stack) {
    const families = stack.split(",").map(function (f) { return f.trim(); });
    return families.filter(function (f) { return generic.indexOf(f) < 0; });
  }
  const fonts = named(getComputedStyle(document.body).fontFamily).map(function (f) {
    return { family: f, covers: covers(f) };
  });
  const used = {};
  const clipped = [];
  let matched = 0;
  document.querySelectorAll("body *").forEach(function (el) {
    if (el.id === "probe") { return; }
    const own = Array.from(el.childNodes).filter(function (n) { return n.nodeType === 3; })
      .map(function (n) { return n.textContent; }).join("");
    if (!pattern.test(own)) { return; }
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") { return; }
    matched += 1;
    const first = named(style.fontFamily)[0];
    if (first && !(first in used)) { used[first] = covers(first); }
    const clips = ["hidden", "clip"].indexOf(style.overflowX) >= 0 || ["hidden", "clip"].indexOf(style.overflowY) >= 0;
    if ((clips && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))
        || style.textOverflow === "ellipsis") {
      clipped.push(el.tagName + ": " + own.trim().slice(0, 60));
    }
    let scrolls = false;
    for (let up = el; up && up !== document.body; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll") { scrolls = true; break; }
    }
    const box = el.getBoundingClientRect();
    if (!scrolls && (box.right > document.documentElement.clientWidth + 1 || box.left < -1)) {
      clipped.push("off the page: " + el.tagName + ": " + own.trim().slice(0, 60));
    }
  });
  return { fonts: fonts, used: used, clipped: clipped, matched: matched };
}
"""


def on_load(letters: str, sample: str) -> str:
    """A ``<script>`` that runs the probe once the page has loaded and writes its result, as JSON, into a
    ``<pre id="probe">`` at the end of the body (read back from chromium's ``--dump-dom``)."""
    arguments = f"{json.dumps(letters)}, {json.dumps(sample, ensure_ascii=False)}"
    return f"""
<script>
window.addEventListener("load", function () {{
  const result = ({FUNCTION})({arguments});
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
}});
</script>
"""


def run(driver, letters: str, sample: str) -> dict:
    """The probe's result for the page open in the Selenium ``driver``, as it is drawn now."""
    return driver.execute_script(f"return ({FUNCTION}).apply(null, arguments);", letters, sample)
