"""Public checks of step 4, positions: the sinusoidal table, RoPE and ALiBi, with the chapter's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.base import chapter
from autograder.i18n import N_, _, ngettext
from autograder.judge import cases
from autograder.judge.cases import positions as pcases
from autograder.judge.checking import Lab, expect_case, expect_close, expect_rounding, expect_that
from autograder.judge.checks.weights import WEIGHT_AXES
from autograder.judge.diagnose import answers

pytestmark = pytest.mark.step("positions")

TABLE_AXES = {"axes": (N_("position"), N_("feature"))}  # a table of positions: one row per position
ROW_LENGTHS = N_("{call}, the length of each row")
AT_POSITIONS = N_("{call} with x of shape {shape} and positions {positions}")


@pytest.mark.points(1)
def test_table_d4(lab: Lab) -> None:
    """sinusoidal_encoding(3, 4) is the chapter's table: sin p, cos p, sin p/100, cos p/100"""
    got = lab.call("sinusoidal_encoding", 3, 4, text="sinusoidal_encoding(3, 4)")
    expect_close(got, chapter.value("T742-PE-d4"), wrong=cases.wrong("pe_3_4"), **TABLE_AXES)


@pytest.mark.points(1)
def test_tables_other_widths_and_base(lab: Lab) -> None:
    """Wider tables interleave sin and cos pair by pair, and the base argument is used"""
    got = lab.call("sinusoidal_encoding", 20, 16, text="sinusoidal_encoding(20, 16)")
    expect_case(got, "pe_20_16", **TABLE_AXES)
    got = lab.call("sinusoidal_encoding", 5, 6, base=100.0, text="sinusoidal_encoding(5, 6, base=100.0)")
    expect_case(got, "pe_5_6_base100", **TABLE_AXES)


@pytest.mark.points(2)
def test_dot_products_depend_on_offset_only(lab: Lab) -> None:
    """PE_p . PE_(p+k) at d = 64 is the same for every p; its means are the chapter's 32.000000 ... 13.906089"""
    offsets = ", ".join(str(k) for k in pcases.DOT_OFFSETS)
    got = lab.call(
        "sinusoidal_encoding",
        pcases.DOT_ROWS,
        pcases.DOT_WIDTH,
        text=_("{call}, PE_p . PE_(p+k) for p = {starts} and k = {offsets}").format(
            call=f"sinusoidal_encoding({pcases.DOT_ROWS}, {pcases.DOT_WIDTH})",
            starts=f"0..{pcases.DOT_STARTS - 1}",
            offsets=offsets,
        ),
    )
    table = got.array((pcases.DOT_ROWS, pcases.DOT_WIDTH))
    dots = pcases.dot_products(table)  # (offsets, starts)
    means, spread = dots.mean(axis=1), np.ptp(dots, axis=1)
    worst = int(np.argmax(spread))
    printed = max(chapter.value("T743-PEdot-std-range")["range"])
    expect_rounding(
        got,
        float(spread[worst]),
        _("the same product for every p: a spread over p at k = {k}").format(k=pcases.DOT_OFFSETS[worst]),
        scale=pcases.angle_scale(pcases.DOT_ROWS, pcases.DOT_WIDTH),
        exact=_("; the chapter's float64 table has at most {value}").format(value=f"{printed:.1e}"),
        value=means,
        wrong=cases.wrong("pe_dots_64"),
    )
    expect_close(got.with_value(means), chapter.value("T743-PEdot-mean"), wrong=cases.wrong("pe_dots_64"))
    at_32, at_16 = chapter.value("T743-nonmono")
    k32, k16 = means[pcases.DOT_OFFSETS.index(32)], means[pcases.DOT_OFFSETS.index(16)]
    expect_that(
        got,
        bool(k32 > k16),
        _("a larger mean at k = 32 than at k = 16 ({values})").format(values=f"{at_32:.6f} > {at_16:.6f}"),
        _("{first} and {second}").format(first=f"{k32:.6f}", second=f"{k16:.6f}"),
    )


@pytest.mark.points(1)
def test_every_vector_has_length_sqrt_half_d(lab: Lab) -> None:
    """Every position vector has length sqrt(d/2): 5.656854 at d = 64, and sqrt(384) in a GPT-2-sized table"""
    got = lab.call(
        "sinusoidal_encoding",
        pcases.DOT_STARTS,
        pcases.DOT_WIDTH,
        text=_(ROW_LENGTHS).format(call=f"sinusoidal_encoding({pcases.DOT_STARTS}, {pcases.DOT_WIDTH})"),
    )
    norms = pcases.row_norms(got.array((pcases.DOT_STARTS, pcases.DOT_WIDTH)))
    expect_close(
        got.with_value(norms),
        np.full(pcases.DOT_STARTS, chapter.value("T743-PEnorm")),
        wrong=cases.wrong("pe_norms_64"),
    )
    entries = int(chapter.value("T744-ctx"))  # GPT-2 learns a 1024 x 768 table of positions; this one is computed
    got = lab.call(
        "sinusoidal_encoding",
        1024,
        768,
        text=ngettext(
            "{call} ({count} number, the size of GPT-2's learned table), the length of each row",
            "{call} ({count} numbers, the size of GPT-2's learned table), the length of each row",
            entries,
        ).format(call="sinusoidal_encoding(1024, 768)", count=f"{entries:,}"),
    )
    table = got.array((1024, 768))
    expect_close(got.with_value(pcases.row_norms(table)), np.full(1024, np.sqrt(768 / 2)))


@pytest.mark.points(1)
def test_rope_values(lab: Lab) -> None:
    """rope turns each pair (2i, 2i+1) counterclockwise by position * base**(-2i/d)"""
    got = lab.call(
        "rope",
        np.array([[1.0, 0.0], [1.0, 0.0]]),
        np.array([1, 2]),
        text=_("{call} with x = [[1, 0], [1, 0]] at positions [1, 2] (d = 2: one pair, angles 1 and 2)").format(
            call="rope(x, positions)"
        ),
    )
    expect_case(got, "rope_unit")
    x = pcases.INPUTS["x48"]
    got = lab.call(
        "rope",
        x,
        np.arange(4),
        text=_(AT_POSITIONS).format(call="rope(x, positions)", shape="(4, 8)", positions="[0, 1, 2, 3]"),
    )
    expect_case(got, "rope_4_8")
    x = pcases.INPUTS["x258"]
    got = lab.call(
        "rope",
        x,
        np.arange(3, 8),
        text=_("{call} with x of shape {shape} (a batch axis) and positions {positions}").format(
            call="rope(x, positions)", shape="(2, 5, 8)", positions="[3, 4, 5, 6, 7]"
        ),
    )
    expect_case(got, "rope_batch")
    x = pcases.INPUTS["x36"]
    got = lab.call(
        "rope",
        x,
        np.array([0, 5, 40]),
        base=100.0,
        text=_(AT_POSITIONS).format(call="rope(x, positions, base=100.0)", shape="(3, 6)", positions="[0, 5, 40]"),
    )
    expect_case(got, "rope_base100")


@pytest.mark.points(1)
def test_rope_keeps_lengths(lab: Lab) -> None:
    """rope is a rotation: every vector keeps its length, at positions up to 5000"""
    x, positions = pcases.INPUTS["x616"], pcases.NORM_POSITIONS
    got = lab.call(
        "rope",
        x,
        positions,
        text=_(ROW_LENGTHS).format(
            call=_(AT_POSITIONS).format(call="rope(x, positions)", shape=x.shape, positions=positions.tolist())
        ),
    )
    rotated = got.array(x.shape)
    expect_close(got.with_value(pcases.row_norms(rotated)), pcases.row_norms(x), wrong=cases.wrong("rope_norms"))


@pytest.mark.points(1)
def test_rope_score_depends_on_offset_only(lab: Lab) -> None:
    """The score of a fixed q and k depends only on their offset, wherever they start (0, 100, 1000, 5000)"""
    shifts = ", ".join(chapter.value("T745-rope")["example_seed0_scores"])  # the chapter's offsets
    starts = ", ".join(str(m) for m in pcases.ROPE_STARTS)
    got = lab.call(
        "rope",
        pcases.ROPE_PAIR_X,
        pcases.ROPE_PAIR_POSITIONS,
        text=_("{call} with a fixed q and k (d = 64): k at m = {starts}, q at m + {shifts}; raw scores q . k").format(
            call="rope(x, positions)", starts=starts, shifts=f"{{{shifts}}}"
        ),
    )
    rotated = got.array(pcases.ROPE_PAIR_X.shape)
    scores = pcases.pair_scores(rotated)  # (starts, shifts)
    spread = np.ptp(scores, axis=0)
    worst = int(np.argmax(spread))
    expect_rounding(
        got,
        float(spread[worst]),
        _("the same score at every start: a spread over the starts at offset {offset}").format(
            offset=pcases.ROPE_SHIFTS[worst]
        ),
        scale=pcases.angle_scale(
            pcases.ROPE_PAIR_POSITIONS.max(),
            len(pcases.ROPE_Q),
            pair_sizes=pcases.pair_lengths(pcases.ROPE_Q, pcases.ROPE_K),
        ),
        exact=_("; float64 gives about {value}").format(value="1e-13"),
        value=scores,
        wrong=cases.wrong("rope_scores"),
    )
    unrotated = pcases.ROPE_Q @ pcases.ROPE_K
    expect_close(
        got.with_value(scores[:, 0]),
        np.full(len(pcases.ROPE_STARTS), unrotated),
        wrong=answers.derived(cases.wrong("rope_scores"), lambda s: s[:, 0]),
    )


@pytest.mark.points(1)
def test_alibi_slopes(lab: Lab) -> None:
    """alibi_slopes(8) is 1/2, 1/4, ..., 1/256; other head counts (an odd one too) follow 2**(-8h/n)"""
    got = lab.call("alibi_slopes", 8, text="alibi_slopes(8)")
    expect_close(got, chapter.value("T746-slopes"), wrong=cases.wrong("alibi_slopes_8"))
    for n_heads in (4, 5, 16):
        got = lab.call("alibi_slopes", n_heads, text=f"alibi_slopes({n_heads})")
        expect_case(got, f"alibi_slopes_{n_heads}")


@pytest.mark.points(1)
def test_alibi_bias(lab: Lab) -> None:
    """alibi_bias(6, 0.5) is the chapter's matrix: -0.5 (i - j) on and below the diagonal, -inf above"""
    got = lab.call("alibi_bias", 6, 0.5, text="alibi_bias(6, 0.5)")
    bias = expect_close(got, chapter.value("T746-alibi"), wrong=cases.wrong("alibi_6"), **WEIGHT_AXES)
    row = bias[2]  # the third token: its key two tokens back has penalty 1, so its weight is divided by e
    penalty_and_factor = np.array([-row[0], np.exp(row[2] - row[0])])
    expect_close(got.with_value(penalty_and_factor), chapter.value("T746-e"))
    got = lab.call(
        "alibi_bias",
        257,
        1 / 256,
        text=_("{call}, the penalty of the last token against each earlier key").format(call="alibi_bias(257, 1/256)"),
    )
    penalties = -got.array((257, 257))[256, ::-1]  # by distance 0 .. 256
    reached = np.flatnonzero(penalties >= 1 - 1e-6)
    distance = int(reached[0]) if reached.size else None
    needed = int(chapter.value("T746-256"))
    expect_that(
        got,
        distance == needed,
        _("a penalty of 1 first at distance {distance}").format(distance=needed),
        _("first at distance {distance}").format(distance=distance)
        if distance is not None
        else ngettext("no penalty of 1 within {count} token", "no penalty of 1 within {count} tokens", 256).format(
            count=256
        ),
    )
