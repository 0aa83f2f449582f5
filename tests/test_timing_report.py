"""The timing report as data: strict validation, hostile files, fits and flags, plots (no measuring here)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.judge.timing import analysis, plots, report
from autograder.judge.timing.calibration import CPU_SWEEP, CUDA_WINDOWS, sweep_for, windows_for
from tests import kit

COMMITTED = kit.SOLUTIONS / report.PATH


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """The committed reference report, as decoded JSON."""
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def write(folder: Path, text: str | bytes) -> Path:
    (folder / report.FOLDER).mkdir(exist_ok=True)
    path = folder / report.PATH
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_committed_reference_report_is_valid_and_unflagged(raw: dict[str, Any]) -> None:
    data = report.parse(raw)
    assert data.environment.device == "cpu" and data.sweep == "full"
    assert data.attention.fit == CPU_SWEEP.fit and tuple(int(n) for n in data.attention.ns) == CPU_SWEEP.ns
    assert analysis.review_flags(data) == []
    assert data.decoding.without_cache.tokens == data.decoding.with_cache.tokens


def test_fits_and_speedups() -> None:
    assert analysis.fit_slope(np.array([1, 2, 4]), np.array([3.0, 12.0, 48.0])) == pytest.approx(2.0)
    assert analysis.local_slopes(np.array([1, 2, 4]), np.array([1.0, 2.0, 8.0])) == pytest.approx([1.0, 2.0])
    last, total = analysis.speedups(np.array([1.0, 2.0, 4.0, 8.0]), np.array([1.0, 1.0, 1.0, 1.0]), 2)
    assert (last, total) == (pytest.approx(6.0), pytest.approx(3.75))


def test_windows_per_device_class() -> None:
    assert windows_for("cpu").calibrated and windows_for("cpu").naive_slope == (2.0, 3.3)
    assert windows_for("cuda") is CUDA_WINDOWS and windows_for("cuda:1") is CUDA_WINDOWS and CUDA_WINDOWS.calibrated
    assert not windows_for("mps").calibrated and windows_for("mps").naive_slope is None  # a class nobody calibrated
    assert sweep_for("cpu", quick=True).fit == sweep_for("cpu").fit  # the quick sweep grades on the same windows
    assert sweep_for("cuda").ns[-1] > sweep_for("cpu").ns[-1]  # a GPU is launch-bound far past n = 4096


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        keys = path.split(".")
        target = data
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[int(keys[-1]) if isinstance(target, list) else keys[-1]] = value

    return edit


BAD_VALUES = {
    "bool_for_integer": (_set("attention.d", True), "attention.d"),
    "string_for_seconds": (_set("attention.series.naive.median.0", "0.1"), "attention.series.naive.median[0]"),
    "negative_seconds": (_set("decoding.with_cache.seconds.3", -1.0), "decoding.with_cache.seconds[3]"),
    "milliseconds_too_large": (_set("attention.series.sdpa.seconds.0.0", 1e6), "attention.series.sdpa.seconds[0][0]"),
    "float_token": (_set("decoding.with_cache.tokens.0", 1.5), "decoding.with_cache.tokens[0]"),
    "short_latencies": (lambda d: d["decoding"]["without_cache"]["seconds"].pop(), "decoding.without_cache.seconds"),
    "sizes_descending": (_set("attention.ns", [4096, 2048, 1024, 512, 256, 128]), "attention.ns"),
    "missing_series": (lambda d: d["attention"]["series"].pop("sdpa"), "missing sdpa"),
    "wrong_schema": (_set("schema", "something-else/9"), "schema"),
    "score_bytes_edited": (_set("memory.score_bytes.0", 1), "memory.score_bytes"),
    "list_for_object": (_set("decoding", [1, 2, 3]), "decoding"),
    "nested_junk": (_set("environment.device_name", {"a": [1, {"b": None}]}), "environment.device_name"),
    "huge_integer": (_set("attention.repeats", 10**30), "attention.repeats"),
    "float64_dtype": (_set("environment.dtype", "float64"), "environment.dtype"),
}


@pytest.mark.parametrize("name", list(BAD_VALUES))
def test_bad_values_are_report_errors_naming_the_field(name: str, raw: dict[str, Any]) -> None:
    edit, where = BAD_VALUES[name]
    data = copy.deepcopy(raw)
    edit(data)
    with pytest.raises(report.ReportError) as caught:
        report.parse(data)
    assert where in caught.value.message


HOSTILE_TEXT = {
    "nan": '{"schema": NaN}',
    "infinity": '{"schema": "attnlab-timing/1", "x": -Infinity}',
    "overflowing_float": '{"schema": 1e999}',
    "huge_integer_text": '{"schema": ' + "9" * 50_000 + "}",
    "deep_nesting": "[" * 100_000 + "]" * 100_000,
    "not_json": "this is not json",
    "top_level_list": "[1, 2, 3]",
    "empty": "",
}


@pytest.mark.parametrize("name", list(HOSTILE_TEXT))
def test_hostile_text_is_a_report_error(name: str, tmp_path: Path) -> None:
    with pytest.raises(report.ReportError):
        report.read(write(tmp_path, HOSTILE_TEXT[name]))


def test_hostile_files_are_report_errors(tmp_path: Path) -> None:
    with pytest.raises(report.ReportError) as missing:
        report.read(tmp_path / report.PATH)
    assert missing.value.missing
    with pytest.raises(report.ReportError, match=r"larger|bytes"):
        report.read(write(tmp_path, b" " * (report.MAX_BYTES + 10)))
    with pytest.raises(report.ReportError, match="UTF-8"):
        report.read(write(tmp_path, b'{"a": "\xff\xfe"}'))
    (tmp_path / report.PATH).unlink()
    os.symlink(COMMITTED, tmp_path / report.PATH)
    with pytest.raises(report.ReportError, match="regular file"):
        report.read(tmp_path / report.PATH)
    (tmp_path / report.PATH).unlink()
    os.mkfifo(tmp_path / report.PATH)  # opening a FIFO would block a naive reader
    with pytest.raises(report.ReportError, match="regular file"):
        report.read(tmp_path / report.PATH)
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(kit.SOLUTIONS / report.FOLDER, linked / report.FOLDER)
    with pytest.raises(report.ReportError, match="plain folder"):
        report.read(linked / report.PATH)


def test_review_flags_catch_made_up_numbers(raw: dict[str, Any]) -> None:
    data = copy.deepcopy(raw)
    ns = data["attention"]["ns"]
    for series in data["attention"]["series"].values():
        ideal = [1e-9 * n * n for n in ns]
        series.update(
            seconds=[[t] * len(row) for t, row in zip(ideal, series["seconds"])],
            median=ideal,
            min=ideal,
            max=ideal,
            slope=2.0,
        )
    data["decoding"]["with_cache"]["seconds"] = [2e-4] * data["decoding"]["n_tokens"]
    flags = analysis.review_flags(report.parse(data))
    text = " | ".join(flags)
    assert (
        "exactly the same time" in text
        and "never changes" in text
        and "does not grow" in text
        and "repeat exactly" in text
    )


def test_one_cleanly_scaling_series_is_not_flagged(raw: dict[str, Any]) -> None:
    """A quiet machine can give one kernel near-perfect n^2 steps; only every series at once is suspicious."""
    data = copy.deepcopy(raw)
    ns = data["attention"]["ns"]
    sdpa = data["attention"]["series"]["sdpa"]
    sdpa["median"] = [1e-9 * n * n * (1.0 + 1e-3 * (i % 2)) for i, n in enumerate(ns)]  # local slopes within 0.003 of 2
    assert not any("never changes" in flag for flag in analysis.review_flags(report.parse(data)))
    for series in data["attention"]["series"].values():
        series["median"] = list(sdpa["median"])
    assert sum("never changes" in flag for flag in analysis.review_flags(report.parse(data))) == 3


def test_summary_says_what_was_found(raw: dict[str, Any]) -> None:
    lines = analysis.summary(report.parse(raw))
    text = "\n".join(lines)
    assert "naive" in text and "SDPA" in text and "tokens identical: yes" in text and "score matrix" in text
    gpu = copy.deepcopy(raw)
    gpu["environment"]["device"] = "cuda"
    assert not any("not calibrated" in line for line in analysis.summary(report.parse(gpu)))  # windows from an H200


def test_plots_are_written_and_non_empty(raw: dict[str, Any], tmp_path: Path) -> None:
    written = plots.draw(report.parse(raw), tmp_path)
    assert sorted(p.name for p in written) == sorted(report.PLOTS.values())
    for path in written:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, path


def test_only_known_device_classes(raw: dict[str, Any]) -> None:
    """A made-up device would dodge the CPU windows: the report may only say cpu or cuda."""
    for device in ("tpu", "CPU", "cuda:x", "cpu "):
        data = copy.deepcopy(raw)
        data["environment"]["device"] = device
        with pytest.raises(report.ReportError, match=r"environment\.device"):
            report.parse(data)
