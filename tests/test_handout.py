"""The handout: its generated blocks and figures are current, every step has its section, the HTML builds."""

from __future__ import annotations

import difflib
import importlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from autograder import cli
from autograder.base import chapter, tasks
from autograder.base.kit import Kit
from autograder.deliver.handout import blocks, checks, contract, figures, generate, html, workbench_figure

KIT = Kit.source_tree()
IMAGE_REF = re.compile(r"!\[[^\]]*\]\((figures/[^)]+)\)")


def markdown() -> str:
    return KIT.handout.read_text(encoding="utf-8")


def block_body(kind: str, key: str, text: str | None = None) -> str:
    text = text or markdown()
    found = [b for b in blocks.find_blocks(text) if (b.kind, b.key) == (kind, key)]
    assert len(found) == 1, f"handout: expected one block {kind}:{key}, found {len(found)}"
    return text[found[0].start : found[0].end]


@pytest.fixture(scope="module")
def fresh_figures() -> dict[str, bytes]:
    """Every figure rendered once from the reference."""
    return figures.render(KIT)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    return html.build(KIT, tmp_path_factory.mktemp("handout") / "page.html").read_text(encoding="utf-8")


# ---- the markdown: anchors and generated blocks


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_every_step_has_its_anchor(step: tasks.Step) -> None:
    """Feedback messages link to handouts/lab07_attention.md#<anchor>; the anchor must exist right above the step's
    heading."""
    lines = markdown().splitlines()
    anchor = f'<a id="{step.anchor}"></a>'
    assert anchor in lines, f"no {anchor} line in {tasks.HANDOUT}"
    after = lines[lines.index(anchor) + 1]
    assert after.startswith("## ") and step.title in after, (
        f"{anchor} is not followed by the heading of '{step.title}': {after!r}"
    )


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_every_step_has_its_generated_blocks(step: tasks.Step) -> None:
    for kind in ("contract", "values", "mistakes", "checks"):
        body = block_body(kind, step.id)
        section = markdown().split(f'<a id="{step.anchor}"></a>')[1].split('<a id="')[0]
        assert f"<!-- {kind}:{step.id} -->" in section, (
            f"block {kind}:{step.id} is outside the section of step {step.id}"
        )
        assert body.strip(), f"block {kind}:{step.id} is empty (run: attnlab handout)"


def test_generated_blocks_are_current() -> None:
    """The committed handout equals what generation produces (else: run attnlab handout)."""
    committed, fresh = markdown(), generate.generated(KIT)
    diff = "".join(
        list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), "committed", "generated"))[:40]
    )
    if committed != fresh:
        pytest.fail(f"the handout's generated blocks are stale; run: attnlab handout\n{diff}", pytrace=False)


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_contract_lists_every_function_of_the_stub(step: tasks.Step) -> None:
    stub = (KIT.assignments / f"{step.module}.py").read_text(encoding="utf-8")
    body = block_body("contract", step.id)
    for name in contract.public_names(stub):
        assert re.search(rf"^\s*(def|class) {name}\b", body, re.MULTILINE), (
            f"{name} of {step.module}.py is missing from the handout's contract"
        )
    answers = contract.answer_names(stub, step.functions)
    for name in step.functions:
        assert name in contract.public_names(stub, to_write=True) or name in answers, (
            f"registry function {name} is not a stubbed function of {step.module}.py"
        )
    for name in answers:
        assert contract.answer_source(stub, (name,)) in body, (
            f"the stub's {name} is missing from the handout's contract"
        )


def test_contract_is_the_stubs_text() -> None:
    """Signatures and docstrings are copied from the stub verbatim, bodies left out."""
    stub = (KIT.assignments / "softmax.py").read_text(encoding="utf-8")
    source = contract.contract_source(stub)
    assert source in stub
    assert source.startswith("def softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:")
    assert "NotImplementedError" not in source


def test_values_tables_hold_every_id_the_graders_check() -> None:
    used = checks.chapter_ids_by_step(KIT.public_graders, KIT.hidden)
    assert used, "no chapter.value(...) found in the graders"
    for step_id, ids in used.items():
        body = block_body("values", step_id)
        for entry in ids:
            assert f"`{entry}`" in body, (
                f"chapter value {entry} (checked by the {step_id} graders) is not in the handout's table"
            )


def test_errata_list_every_mismatch_with_its_correct_value() -> None:
    body = block_body("errata", "chapter")
    mismatches = [entry for entry, status in chapter.entries().items() if status == "MISMATCH"]
    assert sorted(mismatches) == sorted(["T712-llama-2d2", "T732-scoretensor-32", "T764-eighth", "ACT-unitvec"])
    for entry in mismatches:
        row = next(line for line in body.splitlines() if f"`{entry}`" in line)
        assert generate.values.cell(generate.values.shown(generate.values.raw(entry))) in row


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_mistakes_lists_every_known_mistake(step: tasks.Step) -> None:
    try:
        module = importlib.import_module(f"autograder.judge.diagnose.{step.module}")
    except ModuleNotFoundError:
        pytest.skip(f"no diagnosis module for {step.id}")
    body = block_body("mistakes", step.id)
    if step.id in generate.ANSWER_STEPS:
        section = markdown().split(f'<a id="{step.anchor}"></a>')[1].split('<a id="')[0]
        assert body.strip() == generate.ANSWERS_HIDDEN and not any(m.text in section for m in module.MISTAKES.values())
        return
    for mistake in module.MISTAKES.values():
        assert mistake.text in body


@pytest.mark.parametrize("step", tasks.STEPS, ids=lambda s: s.id)
def test_checks_block_names_the_command_and_the_points(step: tasks.Step) -> None:
    body = block_body("checks", step.id)
    assert f"attnlab grade --step {step.id}" in body
    public = checks.checks_by_step(KIT.public_graders).get(step.id, [])
    assert sum(c.points for c in public) == pytest.approx(step.public_points), (
        f"the public checks of {step.id} do not add up to its public points"
    )
    for check in public:
        assert check.title in body


def test_the_hidden_checks_line_says_what_each_steps_hidden_checks_compare() -> None:
    """The predictions step's hidden check compares with the reference's values; the others' check the same
    properties on fresh random inputs."""
    predictions = block_body("checks", "predictions")
    assert "compared with the values the reference computes" in predictions
    assert "fresh random inputs" not in predictions
    assert "the same properties on fresh random inputs" in block_body("checks", "softmax")


def test_a_step_without_chapter_values_says_what_its_graders_compare_with() -> None:
    """The predictions step's public checks compare with the student's own code (its hidden check with the
    reference), the timing step's graders time the kernels themselves; other steps compare with the reference."""
    predictions, timing = block_body("values", "predictions"), block_body("values", "timing")
    assert "what your own code computes" in predictions and "the value the reference computes" in predictions
    assert "time your kernels themselves" in timing
    assert "on the inputs above" not in predictions + timing
    assert "they compare with the reference on the inputs above" in block_body("values", "mask")


# ---- blocks and math, as units


def test_fill_replaces_only_block_bodies() -> None:
    text = "before\n<!-- contract:softmax -->\nold\n<!-- /contract -->\nafter\n"
    assert (
        blocks.fill(text, lambda kind, key: f"new {kind} {key}")
        == "before\n<!-- contract:softmax -->\nnew contract softmax\n<!-- /contract -->\nafter\n"
    )


def test_unclosed_block_names_its_line() -> None:
    with pytest.raises(blocks.BlockError, match="line 2"):
        blocks.find_blocks("x\n<!-- values:mask -->\n<!-- contract:mask -->\n<!-- /contract -->\n")


def test_unknown_block_kind_is_an_error() -> None:
    with pytest.raises(blocks.BlockError, match="unknown block kind"):
        generate.Generator(KIT).body("nonsense", "softmax")


def test_math_becomes_mathml_but_code_stays_as_written() -> None:
    text = "A $\\sqrt{d_k}$ and `$x$`\n\n$$\nQK^\\top\n$$\n\n```sh\necho $HOME $PATH\n```\n"
    body = html.render_html(text, KIT.handout.parent)
    assert body.count("<math") == 2 and 'display="block"' in body
    assert "<code>$x$</code>" in body and "echo $HOME $PATH" in body


# ---- figures


def test_every_figure_is_current(fresh_figures: dict[str, bytes]) -> None:
    """Regenerating gives the committed PNGs (byte-identical, or the same pixels within a tiny tolerance)."""
    stale = [
        name
        for name, data in fresh_figures.items()
        if not (KIT.figures / name).is_file() or not figures.same_image((KIT.figures / name).read_bytes(), data)
    ]
    assert not stale, f"stale figures {stale}; run: attnlab handout"


def test_figures_are_reproducible_byte_for_byte(fresh_figures: dict[str, bytes]) -> None:
    again = figures.render(KIT, ["masks"])
    assert again["masks.png"] == fresh_figures["masks.png"]
    assert b"Software" not in again["masks.png"] and b"Creation" not in again["masks.png"]


def test_every_figure_is_used_and_every_image_exists() -> None:
    used = set(IMAGE_REF.findall(markdown()))
    made = {f"figures/{name}.png" for name in (*figures.FIGURES, workbench_figure.NAME)}  # the screenshot too
    assert used == made, (
        f"figures drawn but not shown: {sorted(made - used)}; shown but not drawn: {sorted(used - made)}"
    )
    committed = {f"figures/{p.name}" for p in KIT.figures.glob("*.png")}
    assert committed == made, f"stray or missing files in handouts/figures: {sorted(committed ^ made)}"


def test_same_image_tolerates_a_few_pixels_only(fresh_figures: dict[str, bytes]) -> None:
    from PIL import Image

    original = fresh_figures["masks.png"]
    pixels = figures.pixels(original).astype(np.uint8)

    def png(array: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, format="PNG")
        return buffer.getvalue()

    nudged = pixels.copy()
    nudged[0, :20] = 0  # 20 pixels out of ~200,000
    assert figures.same_image(original, png(nudged))
    changed = pixels.copy()
    changed[: pixels.shape[0] // 4] = 0
    assert not figures.same_image(original, png(changed))


# ---- the HTML page


def test_html_page_has_every_step_anchor(page: str) -> None:
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    missing = [s.anchor for s in tasks.STEPS if s.anchor not in ids]
    assert not missing, f"anchors missing from the HTML page: {missing}"


def test_html_page_is_self_contained_with_math_and_figures(page: str) -> None:
    assert not re.search(r'(src|href)="(https?:)?//', page), "the page must not load anything from the network"
    assert "<script" not in page and "<link" not in page
    assert page.count('src="data:image/png;base64,') == len(figures.FIGURES) + 1  # and the workbench screenshot
    assert page.count("<math") > 50
    prose = re.sub(r"<(pre|code)>.*?</\1>", "", page, flags=re.DOTALL)
    assert "$" not in re.sub(r"<math.*?</math>", "", prose, flags=re.DOTALL), "some TeX was left unconverted"


# ---- the command


def test_attnlab_has_the_handout_command() -> None:
    args = cli.parser().parse_args(["handout", "--check"])
    assert args.check and args.run is cli.handout.run


def test_check_passes_on_the_committed_handout(
    fresh_figures: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``attnlab handout --check`` on this kit: nothing stale, exit 0, nothing written."""
    monkeypatch.setattr(figures, "render", lambda kit, names=None: fresh_figures)  # rendered once already
    before = {p: p.stat().st_mtime_ns for p in [KIT.handout, *KIT.figures.glob("*.png")]}
    assert cli.main(["handout", "--check"]) == 0
    assert before == {p: p.stat().st_mtime_ns for p in before}


def test_handout_markdown_is_plain_utf8_without_tabs() -> None:
    text = Path(KIT.handout).read_bytes().decode("utf-8")
    assert "\t" not in text and text.endswith("\n")
