"""A lossless JSON round trip of the report dataclasses (and of any other frozen dataclass of plain fields).

The warm grader's workers, the nbgrader grade cells and ``attnlab grade-batch``
pass a :class:`~autograder.grading.model.GradeReport` between processes and
machines as JSON; :func:`report_json` and :func:`report_from_json` are that
format. The codec is driven by the dataclasses' own type hints, so a field
added to the model (with a default, as ``/work/PLAN.md`` asks) is carried
without a change here: dataclasses become objects of their fields, tuples and
lists become arrays, ``Path`` a string, a NumPy array an object with its
dtype, shape and values (base64 of its bytes). Decoding rebuilds exactly the
types the hints name and refuses what they do not allow, so a reply cannot
smuggle another type into the trusted side.

Written by hand: the standard library's ``json`` has no dataclass decoder, and
no small, well-kept library rebuilds frozen dataclasses with ``X | None``
unions, tuples and arrays without a schema of its own.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, Union

from autograder.grading.model import GradeReport

FORMAT = "attnlab-report/1"  # the format's name and version, written into every report document
ARRAY = "__ndarray__"
T = TypeVar("T")


class FormatError(ValueError):
    """The JSON is not a report of this format (or not of the type asked for)."""


# -- encoding ----------------------------------------------------------------------------
def encode(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses by field, sequences as lists, paths as strings, arrays tagged."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    if type(value).__module__ == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray):
            data = np.ascontiguousarray(value)
            if data.dtype.hasobject:
                raise TypeError("an object array cannot be encoded")
            return {
                ARRAY: {
                    "dtype": data.dtype.str,
                    "shape": list(data.shape),
                    "data": base64.b64encode(data.tobytes()).decode("ascii"),
                }
            }
        if isinstance(value, np.generic):
            return value.item()
    raise TypeError(f"cannot encode a {type(value).__name__}")


# -- decoding ----------------------------------------------------------------------------
def decode(kind: Any, data: Any) -> Any:
    """``data`` as the type ``kind`` (a dataclass, or a type hint over them); :class:`FormatError` if it is not."""
    if kind is Any:
        return data
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return decode(option, data)
            except FormatError as error:
                errors.append(str(error))
        raise FormatError(f"{data!r:.80} is none of {kind}: {'; '.join(errors)}")
    if origin is tuple:
        args = typing.get_args(kind)
        items = _sequence(data, kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], item) for item in items)
        if len(args) != len(items):
            raise FormatError(f"expected {len(args)} items for {kind}, got {len(items)}")
        return tuple(decode(arg, item) for arg, item in zip(args, items))
    if origin is list:
        (arg,) = typing.get_args(kind) or (Any,)
        return [decode(arg, item) for item in _sequence(data, kind)]
    if origin is dict:
        key_kind, value_kind = typing.get_args(kind) or (str, Any)
        if not isinstance(data, dict):
            raise FormatError(f"expected an object for {kind}, got {type(data).__name__}")
        return {decode(key_kind, key): decode(value_kind, item) for key, item in data.items()}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind, data)
    if kind is Path or (isinstance(kind, type) and issubclass(kind, Path)):
        return Path(_plain(str, data))
    if kind in (str, bool, int, float):
        return _plain(kind, data)
    if type(None) is kind:
        if data is not None:
            raise FormatError(f"expected null, got {data!r:.80}")
        return None
    if getattr(kind, "__module__", "") == "numpy" and getattr(kind, "__name__", "") == "ndarray":
        return _array(data)
    raise FormatError(f"cannot decode the type {kind}")


@functools.cache
def _fields(kind: type) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A dataclass's resolved type hints and its ``__init__`` fields, worked out once per class (resolving the
    hints took 56 ms of each report read, a batch's coordinator reads every student's report twice)."""
    hints = typing.get_type_hints(kind, vars(sys.modules[kind.__module__]))
    return hints, tuple(f.name for f in dataclasses.fields(kind) if f.init)


def _dataclass(kind: type[T], data: Any) -> T:
    if not isinstance(data, dict):
        raise FormatError(f"expected an object for {kind.__name__}, got {type(data).__name__}")
    hints, fields = _fields(kind)
    unknown = set(data) - set(fields)
    if unknown:
        raise FormatError(f"{kind.__name__} has no fields {sorted(unknown)}")
    values = {name: decode(hints[name], data[name]) for name in fields if name in data}
    try:
        return kind(**values)
    except TypeError as error:  # a required field is missing
        raise FormatError(f"{kind.__name__}: {error}") from None


def _sequence(data: Any, kind: Any) -> list:
    if not isinstance(data, list):
        raise FormatError(f"expected an array for {kind}, got {type(data).__name__}")
    return data


def _plain(kind: type, data: Any) -> Any:
    if kind is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)  # JSON writes 10.0 as 10 in some encoders
    if type(data) is not kind:
        raise FormatError(f"expected {kind.__name__}, got {type(data).__name__} {data!r:.80}")
    return data


def _array(data: Any) -> Any:
    import numpy as np

    if not isinstance(data, dict) or set(data) != {ARRAY}:
        raise FormatError("expected an encoded array")
    spec = data[ARRAY]
    dtype = np.dtype(_plain(str, spec["dtype"]))
    if dtype.hasobject:
        raise FormatError("an object array cannot be decoded")
    shape = tuple(_plain(int, n) for n in _sequence(spec["shape"], "shape"))
    raw = base64.b64decode(_plain(str, spec["data"]), validate=True)
    if len(raw) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
        raise FormatError("an encoded array's data does not match its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


# -- the report document -------------------------------------------------------------------
def report_dict(report: GradeReport) -> dict[str, Any]:
    """The report as a JSON-ready object, tagged with :data:`FORMAT`."""
    return {"format": FORMAT, "report": encode(report)}


def report_from_dict(document: Any) -> GradeReport:
    """The report of a :func:`report_dict` object; :class:`FormatError` when it is not one."""
    if not isinstance(document, dict) or document.get("format") != FORMAT or "report" not in document:
        raise FormatError(f"not an {FORMAT} document")
    return decode(GradeReport, document["report"])


def json_text(data: Any, indent: int | None = 2) -> str:
    """Encoded data as JSON text (UTF-8 kept, NaN and infinities as JSON's usual extension)."""
    return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=True)


def report_json(report: GradeReport, indent: int | None = None) -> str:
    return json_text(report_dict(report), indent=indent)


def report_from_json(text: str | bytes) -> GradeReport:
    """The report of a :func:`report_json` text; :class:`FormatError` when it is not one."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise FormatError(f"not JSON ({error})") from None
    return report_from_dict(document)
