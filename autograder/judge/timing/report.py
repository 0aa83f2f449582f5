"""The timing report (``reports/timing.json``): its schema, and reading it as untrusted data.

The runner writes the report; the graders read it in the grading process. A
report is data a student could edit, so it is read with limits (a regular
file, not a link, at most :data:`MAX_BYTES`), parsed without ``NaN`` or
``Infinity``, and validated field by field: exact types (a bool is not a
number), finite values, units that make sense (seconds, bytes), lengths that
agree. Any problem raises :class:`ReportError` naming the field, in the active
language (the report is read where a student's feedback is written); nothing in
the file is ever executed or echoed at length.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.base.text import escape_controls
from autograder.i18n import N_, _, ngettext
from autograder.judge.timing.calibration import SERIES

SCHEMA = "attnlab-timing/1"
FOLDER, FILE = "reports", "timing.json"
PATH = f"{FOLDER}/{FILE}"
PLOTS = {"attention": "timing_attention.png", "decoding": "timing_decoding.png", "memory": "timing_memory.png"}
MAX_BYTES = 2 << 20
MAX_ITEMS = 4096  # longest list in a report (per-token latencies of up to 4096 tokens)
MAX_SECONDS = 600.0  # one forward pass or one token; more means the unit is not seconds
MIN_SECONDS = 1e-9
MAX_BYTES_VALUE = 1 << 50
MAX_TEXT = 400
DEVICE = re.compile(r"cpu|cuda(:[0-9]{1,2})?")  # the device classes the kit knows


class ReportError(ValueError):
    """The report is missing or unusable; ``missing`` when there is no file at all."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.message, self.missing = message, missing


@dataclass(frozen=True)
class Environment:
    device: str  # "cpu", "cuda", "cuda:1"
    device_name: str
    torch: str
    python: str
    platform: str
    dtype: str
    threads: int
    sdpa_backend: str


@dataclass(frozen=True)
class Series:
    """One attention variant over the sweep: every repeat's seconds, their summary, the fitted slope."""

    name: str
    kind: str
    causal: bool
    seconds: tuple[tuple[float, ...], ...]  # per n, every repeat of every round
    median: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    slope: float


@dataclass(frozen=True)
class Attention:
    d: int
    repeats: int
    rounds: int
    ns: np.ndarray
    fit: tuple[int, int]
    series: dict[str, Series]

    @property
    def in_fit(self) -> np.ndarray:
        """Which sizes the slopes are fitted over."""
        return (self.ns >= self.fit[0]) & (self.ns <= self.fit[1])


@dataclass(frozen=True)
class DecodeRun:
    seconds: np.ndarray  # one per generated token
    tokens: tuple[int, ...]
    slope: float


@dataclass(frozen=True)
class Decoding:
    n_tokens: int
    d_model: int
    n_layers: int
    n_heads: int
    fit: tuple[int, int]  # token positions (1-based), a whole number of blocks
    block: int  # tokens per block: slopes fit block medians; the speed-up compares the last block
    rounds: int  # each run was made this often; a token's seconds are its minimum over the rounds
    without_cache: DecodeRun
    with_cache: DecodeRun
    speedup_last: float
    speedup_total: float

    @property
    def positions(self) -> np.ndarray:
        """1, 2, ..., n_tokens."""
        return np.arange(1, self.n_tokens + 1)

    @property
    def in_fit(self) -> np.ndarray:
        return (self.positions >= self.fit[0]) & (self.positions <= self.fit[1])


@dataclass(frozen=True)
class Memory:
    method: str
    ns: np.ndarray
    score_bytes: np.ndarray  # 4 n^2: one float32 score matrix
    allocated: dict[str, np.ndarray]  # "naive", "sdpa"
    reserved: dict[str, np.ndarray | None]


@dataclass(frozen=True)
class TimingReport:
    sweep: str  # "full" or "quick"
    command: str
    environment: Environment
    attention: Attention
    decoding: Decoding
    memory: Memory
    notes: tuple[str, ...]


# -- reading ------------------------------------------------------------------
def read(path: Path) -> TimingReport:
    """Read and validate the report at ``path``; :class:`ReportError` says what is wrong."""
    return parse(load_json(path))


def load_json(path: Path) -> Any:
    """The JSON value in ``path``, read as untrusted data."""
    path = Path(path)
    try:
        folder = os.lstat(path.parent)
    except OSError:
        raise ReportError(_("no {folder}/ folder").format(folder=FOLDER), missing=True) from None
    if stat.S_ISLNK(folder.st_mode) or not stat.S_ISDIR(folder.st_mode):
        raise ReportError(_("{folder}/ is not a plain folder").format(folder=FOLDER))
    try:
        info = os.lstat(path)
    except OSError:
        raise ReportError(_("no file {path}").format(path=PATH), missing=True) from None
    if not stat.S_ISREG(info.st_mode):
        raise ReportError(_("{path} is not a regular file (a link, a folder or a device)").format(path=PATH))
    if info.st_size > MAX_BYTES:
        raise ReportError(
            ngettext(
                "{path} is {size} byte, more than a timing report can be ({limit} bytes)",
                "{path} is {size} bytes, more than a timing report can be ({limit} bytes)",
                info.st_size,
            ).format(path=PATH, size=info.st_size, limit=MAX_BYTES)
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise ReportError(_("{path} cannot be read ({reason})").format(path=PATH, reason=error.strerror)) from None
    if len(raw) > MAX_BYTES:
        raise ReportError(
            ngettext(
                "{path} is larger than a timing report can be ({limit} byte)",
                "{path} is larger than a timing report can be ({limit} bytes)",
                MAX_BYTES,
            ).format(path=PATH, limit=MAX_BYTES)
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportError(_("{path} is not UTF-8 text").format(path=PATH)) from None
    return loads(text)


def loads(text: str) -> Any:
    """Parse JSON text that may be hostile: no NaN/Infinity, no huge integers, bounded nesting."""

    def refuse(constant: str) -> None:
        raise ValueError(_("{constant} is not a number a report may hold").format(constant=constant))

    try:
        return json.loads(text, parse_constant=refuse)
    except RecursionError:
        raise ReportError(_("{path} nests too deeply to be a timing report").format(path=PATH)) from None
    except ValueError as error:  # JSONDecodeError, refused constants, integers too long to convert
        raise ReportError(_("{path} is not valid JSON ({error})").format(path=PATH, error=str(error)[:80])) from None


# -- validation -----------------------------------------------------------------
EXPECTED_GOT = N_("{where}: expected {expected}, got {value}")
A_FINITE_NUMBER, A_POSITIVE_RATIO = N_("a finite number"), N_("a positive ratio")


def _fail(where: str, expected: str, value: Any) -> None:
    """``expected`` is in the active language already."""
    raise ReportError(_(EXPECTED_GOT).format(where=where, expected=expected, value=_kind(value)))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return _("the boolean {value}").format(value=str(value).lower())
    if isinstance(value, (int, float)):
        return (
            _("the number {value}").format(value=f"{value:.6g}")
            if isinstance(value, float)
            else (_("a huge integer") if abs(value) > 10**15 else _("the number {value}").format(value=value))
        )
    if isinstance(value, str):
        return ngettext("a string of {count} character", "a string of {count} characters", len(value)).format(
            count=len(value)
        )
    if isinstance(value, list):
        return ngettext("a list of {count} item", "a list of {count} items", len(value)).format(count=len(value))
    if isinstance(value, dict):
        return _("an object")
    return "null" if value is None else type(value).__name__


def _object(value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(where, _("an object with {keys}").format(keys=", ".join(keys)), value)
    missing = [k for k in keys if k not in value]
    if missing:
        raise ReportError(_("{where}: missing {keys}").format(where=where, keys=", ".join(missing)))
    return value


def _text(value: Any, where: str) -> str:
    """A string of the report, control characters escaped (it came from the student's folder)."""
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        _fail(
            where,
            ngettext(
                "a string of at most {limit} character", "a string of at most {limit} characters", MAX_TEXT
            ).format(limit=MAX_TEXT),
            value,
        )
    return escape_controls(value)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, _("true or false"), value)
    return value


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _fail(where, _("an integer from {low} to {high}").format(low=low, high=high), value)
    return value


def _number(
    value: Any, where: str, low: float = -math.inf, high: float = math.inf, what: str = A_FINITE_NUMBER
) -> float:
    """``what`` names what was expected: English marked with ``N_``, or already translated."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        _fail(where, _(what), value)
    return float(value)


def _list(value: Any, where: str, length: int | None = None, at_least: int = 1) -> list:
    if (
        not isinstance(value, list)
        or len(value) > MAX_ITEMS
        or len(value) < at_least
        or (length is not None and len(value) != length)
    ):
        size = f"{length}" if length is not None else _("{low} to {high}").format(low=at_least, high=MAX_ITEMS)
        _fail(where, ngettext("a list of {count} item", "a list of {count} items", size).format(count=size), value)
    return value


def _seconds(value: Any, where: str) -> float:
    what = _("seconds (a number from {low} to {high})").format(low=f"{MIN_SECONDS:g}", high=f"{MAX_SECONDS:g}")
    return _number(value, where, MIN_SECONDS, MAX_SECONDS, what)


def _seconds_list(value: Any, where: str, length: int | None = None) -> np.ndarray:
    return np.array([_seconds(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where, length))], dtype=float)


def _bytes_list(value: Any, where: str, length: int) -> np.ndarray:
    return np.array(
        [_integer(v, f"{where}[{i}]", 0, MAX_BYTES_VALUE) for i, v in enumerate(_list(value, where, length))],
        dtype=float,
    )


def _sizes(value: Any, where: str, at_least: int) -> np.ndarray:
    ns = [_integer(v, f"{where}[{i}]", 1, 1 << 20) for i, v in enumerate(_list(value, where, at_least=at_least))]
    if any(b <= a for a, b in itertools.pairwise(ns)):
        raise ReportError(_(EXPECTED_GOT).format(where=where, expected=_("sizes in increasing order"), value=ns[:12]))
    return np.array(ns, dtype=float)


def _environment(value: Any) -> Environment:
    keys = ("device", "device_name", "torch", "python", "platform", "dtype", "threads", "sdpa_backend")
    raw = _object(value, "environment", keys)
    fields = {k: _text(raw[k], f"environment.{k}") for k in keys if k != "threads"}
    if fields["dtype"] != "float32":
        raise ReportError(
            _(EXPECTED_GOT).format(
                where="environment.dtype",
                expected=_("float32 (the kit measures float32)"),
                value=_("a different dtype"),
            )
        )
    if not DEVICE.fullmatch(fields["device"]):
        raise ReportError(
            _(EXPECTED_GOT).format(
                where="environment.device",
                expected=_("the device measured on, cpu or cuda (cuda:1, ...)"),
                value=_("another string"),
            )
        )
    return Environment(threads=_integer(raw["threads"], "environment.threads", 1, 4096), **fields)


def _series(value: Any, name: str, ns: np.ndarray, repeats: int) -> Series:
    where = f"attention.series.{name}"
    raw = _object(value, where, ("kind", "causal", "seconds", "median", "min", "max", "slope"))
    kind, causal = _text(raw["kind"], f"{where}.kind"), _flag(raw["causal"], f"{where}.causal")
    if (kind, causal) != SERIES[name]:
        raise ReportError(
            _(EXPECTED_GOT).format(
                where=where,
                expected=_("kind {kind} with causal {causal}").format(
                    kind=repr(SERIES[name][0]), causal=str(SERIES[name][1]).lower()
                ),
                value=_("another variant"),
            )
        )
    rows = _list(raw["seconds"], f"{where}.seconds", len(ns))
    seconds = tuple(tuple(_seconds_list(row, f"{where}.seconds[{i}]", repeats)) for i, row in enumerate(rows))
    return Series(
        name=name,
        kind=kind,
        causal=causal,
        seconds=seconds,
        median=_seconds_list(raw["median"], f"{where}.median", len(ns)),
        minimum=_seconds_list(raw["min"], f"{where}.min", len(ns)),
        maximum=_seconds_list(raw["max"], f"{where}.max", len(ns)),
        slope=_number(raw["slope"], f"{where}.slope", -100, 100),
    )


def _attention(value: Any) -> Attention:
    raw = _object(value, "attention", ("d", "repeats", "rounds", "ns", "fit", "series"))
    d = _integer(raw["d"], "attention.d", 1, 4096)
    repeats, rounds = (
        _integer(raw["repeats"], "attention.repeats", 1, 100),
        _integer(raw["rounds"], "attention.rounds", 1, 20),
    )
    ns = _sizes(raw["ns"], "attention.ns", at_least=2)
    fit = _object(raw["fit"], "attention.fit", ("n_min", "n_max"))
    low, high = (_integer(fit[k], f"attention.fit.{k}", 1, 1 << 20) for k in ("n_min", "n_max"))
    if np.count_nonzero((ns >= low) & (ns <= high)) < 2:
        raise ReportError(
            _("{where}: expected {expected}").format(
                where="attention.fit", expected=_("a range holding at least two of the sizes")
            )
        )
    series_raw = _object(raw["series"], "attention.series", tuple(SERIES))
    series = {name: _series(series_raw[name], name, ns, repeats * rounds) for name in SERIES}
    return Attention(d=d, repeats=repeats, rounds=rounds, ns=ns, fit=(low, high), series=series)


def _decode_run(value: Any, where: str, n_tokens: int) -> DecodeRun:
    raw = _object(value, where, ("seconds", "tokens", "slope"))
    tokens = tuple(
        _integer(t, f"{where}.tokens[{i}]", 0, 1 << 20)
        for i, t in enumerate(_list(raw["tokens"], f"{where}.tokens", n_tokens))
    )
    return DecodeRun(
        seconds=_seconds_list(raw["seconds"], f"{where}.seconds", n_tokens),
        tokens=tokens,
        slope=_number(raw["slope"], f"{where}.slope", -100, 100),
    )


def _decoding(value: Any) -> Decoding:
    keys = (
        "n_tokens",
        "d_model",
        "n_layers",
        "n_heads",
        "fit",
        "block",
        "rounds",
        "without_cache",
        "with_cache",
        "speedup_last",
        "speedup_total",
    )
    raw = _object(value, "decoding", keys)
    n_tokens = _integer(raw["n_tokens"], "decoding.n_tokens", 2, MAX_ITEMS)
    fit = _object(raw["fit"], "decoding.fit", ("t_min", "t_max"))
    low, high = (_integer(fit[k], f"decoding.fit.{k}", 1, n_tokens) for k in ("t_min", "t_max"))
    block = _integer(raw["block"], "decoding.block", 1, n_tokens)
    if high <= low or (high - low + 1) % block or (high - low + 1) // block < 2:
        raise ReportError(
            _("{where}: expected {expected}").format(
                where="decoding.fit", expected=_("t_min below t_max, spanning a whole number (at least 2) of blocks")
            )
        )
    return Decoding(
        n_tokens=n_tokens,
        d_model=_integer(raw["d_model"], "decoding.d_model", 1, 4096),
        n_layers=_integer(raw["n_layers"], "decoding.n_layers", 1, 64),
        n_heads=_integer(raw["n_heads"], "decoding.n_heads", 1, 64),
        fit=(low, high),
        block=block,
        rounds=_integer(raw["rounds"], "decoding.rounds", 1, 20),
        without_cache=_decode_run(raw["without_cache"], "decoding.without_cache", n_tokens),
        with_cache=_decode_run(raw["with_cache"], "decoding.with_cache", n_tokens),
        speedup_last=_number(raw["speedup_last"], "decoding.speedup_last", 0, 1e9, A_POSITIVE_RATIO),
        speedup_total=_number(raw["speedup_total"], "decoding.speedup_total", 0, 1e9, A_POSITIVE_RATIO),
    )


def _memory(value: Any) -> Memory:
    raw = _object(value, "memory", ("method", "ns", "score_bytes", "naive", "sdpa"))
    ns = _sizes(raw["ns"], "memory.ns", at_least=1)
    score_bytes = _bytes_list(raw["score_bytes"], "memory.score_bytes", len(ns))
    if not np.array_equal(score_bytes, 4 * ns**2):
        raise ReportError(
            _("{where}: expected {expected}").format(
                where="memory.score_bytes", expected=_("4 n^2 bytes (one float32 score matrix) for each n")
            )
        )
    allocated, reserved = {}, {}
    for kind in ("naive", "sdpa"):
        entry = _object(raw[kind], f"memory.{kind}", ("allocated", "reserved"))
        allocated[kind] = _bytes_list(entry["allocated"], f"memory.{kind}.allocated", len(ns))
        reserved[kind] = (
            None if entry["reserved"] is None else _bytes_list(entry["reserved"], f"memory.{kind}.reserved", len(ns))
        )
    return Memory(
        method=_text(raw["method"], "memory.method"),
        ns=ns,
        score_bytes=score_bytes,
        allocated=allocated,
        reserved=reserved,
    )


def parse(value: Any) -> TimingReport:
    """Validate a decoded JSON value as a timing report."""
    raw = _object(
        value,
        _("the report"),
        ("schema", "sweep", "command", "environment", "attention", "decoding", "memory", "notes"),
    )
    if raw["schema"] != SCHEMA:
        _fail(
            "schema",
            _("{schema} (a report written by this kit's `attnlab timing`)").format(schema=repr(SCHEMA)),
            raw["schema"],
        )
    sweep = _text(raw["sweep"], "sweep")
    if sweep not in ("full", "quick"):
        raise ReportError(
            _("{where}: expected {expected}").format(
                where="sweep", expected=_("{first} or {second}").format(first="'full'", second="'quick'")
            )
        )
    notes = tuple(_text(n, f"notes[{i}]") for i, n in enumerate(_list(raw["notes"], "notes", at_least=0)))
    return TimingReport(
        sweep=sweep,
        command=_text(raw["command"], "command"),
        environment=_environment(raw["environment"]),
        attention=_attention(raw["attention"]),
        decoding=_decoding(raw["decoding"]),
        memory=_memory(raw["memory"]),
        notes=notes,
    )


def dumps(data: dict[str, Any]) -> str:
    """The report's JSON text, as the runner writes it (strict JSON: no NaN or Infinity)."""
    return json.dumps(data, indent=1, allow_nan=False) + "\n"
