"""Heatmaps of a check's evidence (matplotlib): expected, yours and their difference, side by side.

One colour-blind-safe colormap (cividis) for every panel; expected and yours
share one colour scale, so the same colour means the same number; the
difference panel has its own, centred on 0, and a box marks its largest
entry. Small matrices also show each cell's value and the sums of every row
and column (a softmax over the wrong axis shows columns, not rows, summing to 1).
Arrays of more than two axes are shown at the leading index of the largest
difference. Every label comes from the catalogs (:mod:`autograder.i18n`).
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections import OrderedDict
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import numpy as np
from matplotlib import patches, ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.i18n import N_, _, language
from autograder.judge.evidence import Evidence

COLORMAP = "cividis"  # designed to read the same with every colour vision
DPI = 100
PANEL_INCHES = 2.9
ANNOTATE_MAX = 6  # cells are written out when both sides are at most this long (a 1.9-inch panel holds 6 of '−0.02')
EXPECTED, YOURS, DIFFERENCE = N_("expected"), N_("yours"), N_("yours − expected")
ROW, COLUMN, ENTRY = N_("row"), N_("column"), N_("entry")
LARGEST = N_("largest difference {size} at {where}")
SLICE = N_("shown at index {index} of the leading axes")
CHAPTER, YOURS_WEIGHTS = N_("the chapter's weights"), N_("your weights")
STYLE = {"font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 10}
CACHED_PICTURES = 256  # a batch draws the same wrong answer on the same public inputs for many students
_drawn: OrderedDict[str, bytes] = OrderedDict()


def _number(value: float) -> str:
    if np.isneginf(value):
        return "−∞"
    if np.isposinf(value):
        return "∞"
    if np.isnan(value):
        return "NaN"
    return f"{value + 0.0:.2f}" if abs(value) < 100 else f"{value:.3g}"


def _as_matrix(evidence: Evidence) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], tuple[str, str]]:
    """Expected and yours as 2-D arrays, the leading index shown, and the two axis labels."""
    expected, got = np.asarray(evidence.expected, float), np.asarray(evidence.got, float)
    labels = list(evidence.axes)
    lead: tuple[int, ...] = ()
    if expected.ndim > 2:
        worst = _worst(got, expected)
        lead = tuple(int(i) for i in worst[:-2])
        expected, got = expected[lead], got[lead]
        labels = labels[-2:] if len(labels) >= 2 else labels
    if expected.ndim == 1:
        expected, got = expected[None, :], got[None, :]
        labels = ["", labels[-1] if labels else _(ENTRY)]
    if len(labels) != 2:
        labels = [_(ROW), _(COLUMN)]
    return expected, got, lead, (labels[0], labels[1])


def _worst(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...]:
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - expected)
    diff = np.where(np.isnan(diff) | (np.isinf(got) != np.isinf(expected)), np.inf, diff)
    diff = np.where(np.isinf(got) & np.isinf(expected) & (np.sign(got) == np.sign(expected)), 0.0, diff)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))


def _ticks(ax, evidence: Evidence, shape: tuple[int, int]) -> None:
    for axis, count, setter, labeller in ((0, shape[0], ax.set_yticks, ax.set_yticklabels),
                                          (1, shape[1], ax.set_xticks, ax.set_xticklabels)):  # fmt: skip
        names = evidence.ticks[axis - 2] if len(evidence.ticks) >= 2 else None
        if names and len(names) == count:
            setter(range(count))
            labeller(names)
        elif count <= 12:
            setter(range(count))
        else:
            setter(np.linspace(0, count - 1, 5).round().astype(int))


def _panel(ax, values: np.ndarray, title: str, evidence: Evidence, labels: tuple[str, str], **scale: float) -> object:
    finite = np.where(np.isfinite(values), values, np.nan)
    image = ax.imshow(finite, cmap=COLORMAP, aspect="auto", interpolation="nearest", **scale)
    ax.set_title(title)
    ax.set_ylabel(labels[0])
    ax.set_xlabel(labels[1])
    _ticks(ax, evidence, values.shape)
    small = max(values.shape) <= ANNOTATE_MAX
    if small:
        size = 8 if values.shape[1] <= 4 else 7
        middle = np.nanmean([scale.get("vmin", np.nanmin(finite)), scale.get("vmax", np.nanmax(finite))])
        for (i, j), v in np.ndenumerate(values):
            dark = np.isfinite(v) and v < middle
            ax.text(j, i, _number(v), ha="center", va="center", fontsize=size, color="white" if dark else "black")
    return image


def _sums(ax, values: np.ndarray) -> None:
    """Row sums to the right of a small matrix and column sums below it, inside the axes."""
    if max(values.shape) > ANNOTATE_MAX or values.shape[0] == 1:
        return
    rows, columns = values.shape
    ax.set_xlim(-0.5, columns - 0.5 + 0.95)
    ax.set_ylim(rows - 0.5 + 0.6, -0.5)
    size, gap = (7.5, " ") if columns <= 4 else (6.5, "")  # "Σ4.05" fits under a column of a 6-wide panel
    for i, total in enumerate(np.sum(values, axis=1)):
        ax.text(columns - 0.4, i, f"Σ{gap}{_number(total)}", ha="left", va="center", fontsize=size)
    for j, total in enumerate(np.sum(values, axis=0)):
        ax.text(j, rows - 0.45, f"Σ{gap}{_number(total)}", ha="center", va="top", fontsize=size)


# The heatmaps' layout in inches, fixed: matplotlib's constrained layout measured every label again for each
# picture (about 40% of the time a class's feedback pages took). Each panel has room on its left for its tick
# labels and axis label, each colour bar on its right for its own.
LABELS_LEFT, BAR_GAP, BAR_WIDTH, BAR_LABELS = 0.62, 0.08, 0.11, 0.5
TITLES_TOP, LABELS_BELOW = 0.56, 0.5


def _three_panels(figure: Figure) -> tuple[list, list]:
    """Expected, yours (sharing the first colour bar) and the difference (its own): the axes and the two bars."""
    width, height = figure.get_size_inches()
    bar = BAR_GAP + BAR_WIDTH + BAR_LABELS
    panel = (width - 3 * LABELS_LEFT - 2 * bar) / 3
    bottom, top = LABELS_BELOW / height, (height - TITLES_TOP) / height
    x, axes, bars = 0.0, [], []
    for index in range(3):
        x += LABELS_LEFT
        axes.append(figure.add_axes((x / width, bottom, panel / width, top - bottom)))
        x += panel
        if index >= 1:
            bars.append(figure.add_axes(((x + BAR_GAP) / width, bottom, BAR_WIDTH / width, top - bottom)))
            x += bar
    return axes, bars


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer, metadata={"Software": None})
    return buffer.getvalue()


def _key(kind: str, words: object, arrays: tuple[np.ndarray | None, ...]) -> str:
    """What a picture depends on: its kind, the arrays (values, dtype, shape), the words on it and the language."""
    digest = hashlib.sha256(repr((kind, words, language())).encode())
    for array in arrays:
        array = np.ascontiguousarray(array if array is not None else np.zeros(0))
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _drawn_once(key: str, draw: Callable[[], bytes]) -> bytes:
    """The PNG of ``key``, drawn by ``draw`` the first time (the :data:`CACHED_PICTURES` most recent are kept)."""
    if key in _drawn:
        _drawn.move_to_end(key)
        return _drawn[key]
    png = _drawn[key] = draw()
    while len(_drawn) > CACHED_PICTURES:
        _drawn.popitem(last=False)
    return png


def heatmaps(evidence: Evidence) -> bytes:
    """Expected, yours and the difference as one PNG, the largest difference boxed (drawn once per content)."""
    key = _key("heatmaps", (evidence.axes, evidence.ticks), (evidence.expected, evidence.got))
    return _drawn_once(key, lambda: _draw_heatmaps(evidence))


def _draw_heatmaps(evidence: Evidence) -> bytes:
    expected, got, lead, labels = _as_matrix(evidence)
    both = np.concatenate([expected[np.isfinite(expected)], got[np.isfinite(got)]])
    low, high = (float(both.min()), float(both.max())) if both.size else (0.0, 1.0)
    with np.errstate(invalid="ignore"):
        difference = got - expected
    difference = np.where(np.isinf(got) & np.isinf(expected) & (got == expected), 0.0, difference)
    reach = float(np.nanmax(np.abs(np.where(np.isfinite(difference), difference, np.nan)), initial=0.0)) or 1.0
    worst = _worst(got, expected)
    with matplotlib.rc_context(STYLE):
        height = min(max(1.6, 0.42 * expected.shape[0] + 1.3), 4.5)
        figure = Figure(figsize=(3 * PANEL_INCHES, height), dpi=DPI)
        axes, bars = _three_panels(figure)
        _panel(axes[0], expected, _(EXPECTED), evidence, labels, vmin=low, vmax=high)
        image = _panel(axes[1], got, _(YOURS), evidence, labels, vmin=low, vmax=high)
        for ax, values in ((axes[0], expected), (axes[1], got)):
            _sums(ax, values)
        figure.colorbar(image, cax=bars[0], ticks=ticker.MaxNLocator(4))
        diff_image = _panel(axes[2], difference, _(DIFFERENCE), evidence, labels, vmin=-reach, vmax=reach)
        figure.colorbar(diff_image, cax=bars[1], ticks=ticker.MaxNLocator(4))
        i, j = worst[-2:] if len(worst) >= 2 else (0, worst[-1])
        for ax in axes:
            ax.add_patch(patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#ff00ff", linewidth=2.2))
        size = difference[i, j]
        where = "[" + ", ".join(str(k) for k in (*lead, *worst[-2:][-expected.ndim :])) + "]"
        caption = _(LARGEST).format(size=_number(size), where=where)
        if lead:
            caption += "; " + _(SLICE).format(index=list(lead))
        figure.suptitle(caption, fontsize=9)
        return _png(figure)


def weights_side_by_side(
    chapter: np.ndarray, yours: np.ndarray | None, tokens: list[str], axes: tuple[str, str]
) -> bytes:
    """The chapter's attention weights and the student's (if any) on the worked example, token labels on both axes
    (drawn once per content: every student with the right weights gets the same picture)."""
    key = _key("weights", (tokens, axes), (chapter, yours))
    return _drawn_once(key, lambda: _draw_weights(chapter, yours, tokens, axes))


def _draw_weights(chapter: np.ndarray, yours: np.ndarray | None, tokens: list[str], axes: tuple[str, str]) -> bytes:
    panels = [(chapter, _(CHAPTER))] + ([(yours, _(YOURS_WEIGHTS))] if yours is not None else [])
    evidence = Evidence("", chapter, chapter, axes=axes, ticks=(tuple(tokens), tuple(tokens)))
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(len(panels) * PANEL_INCHES + 0.6, 2.9), dpi=DPI, layout="constrained")
        axs = np.atleast_1d(figure.subplots(1, len(panels)))
        image = None
        for ax, (values, title) in zip(axs, panels):
            image = _panel(ax, np.asarray(values, float), title, evidence, axes, vmin=0.0, vmax=1.0)
            _sums(ax, np.asarray(values, float))
        figure.colorbar(image, ax=list(axs), shrink=0.8)
        return _png(figure)


def data_uri(png: bytes) -> str:
    """A PNG as a ``data:`` URI, for a page that must stand alone."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
