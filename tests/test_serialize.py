"""The report's JSON round trip is lossless: every field of every report dataclass, whoever added it."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

import numpy as np
import pytest

from autograder.base import tasks
from autograder.grading import serialize
from autograder.grading.model import GradeReport


def value_for(kind: Any, name: str, default: Any = dataclasses.MISSING) -> Any:
    """A value of type ``kind`` that differs from ``default`` (every field set, none left at its default)."""
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        return value_for(next(o for o in typing.get_args(kind) if o is not type(None)), name)
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return (value_for(args[0], f"{name}0"), value_for(args[0], f"{name}1"))
        return tuple(value_for(arg, f"{name}{i}") for i, arg in enumerate(args))
    if origin is list:
        return [value_for(typing.get_args(kind)[0], f"{name}0")]
    if origin is dict:
        return {f"{name}-key": value_for(typing.get_args(kind)[1], f"{name}v")}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return filled(kind)
    if kind is bool:
        return not default if isinstance(default, bool) else True
    if kind is int:
        return 7 if default != 7 else 8
    if kind is float:
        return 2.5 if default != 2.5 else 3.5
    if kind is str:
        return f"{name}: ünïcode \u00e7 [0, 1] \x1b escaped"
    if kind is Path:
        return Path("/some") / name
    if kind is np.ndarray:
        return np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    if kind is Any:
        return {"any": [1, 2.5, None]}
    raise AssertionError(f"test_serialize: no value for the type {kind} of {name}; extend value_for")


def filled(cls: type) -> Any:
    """An instance of the dataclass ``cls`` with every field set to a non-default value."""
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    values = {}
    for field in dataclasses.fields(cls):
        default = field.default if field.default is not dataclasses.MISSING else dataclasses.MISSING
        values[field.name] = value_for(hints[field.name], field.name, default)
    return cls(**values)


def every_field_set(value: Any, path: str = "report") -> None:
    """No field of ``value`` (recursively) is at its default."""
    if not dataclasses.is_dataclass(value):
        return
    for field in dataclasses.fields(value):
        got = getattr(value, field.name)
        if field.default is not dataclasses.MISSING:
            assert serialize.encode(got) != serialize.encode(field.default), f"{path}.{field.name} is at its default"
        for item in got if isinstance(got, tuple) else (got,):
            every_field_set(item, f"{path}.{field.name}")


def test_a_report_with_every_field_set_round_trips() -> None:
    report = filled(GradeReport)
    every_field_set(report)
    text = serialize.report_json(report)
    again = serialize.report_from_json(text)
    assert serialize.encode(again) == serialize.encode(report)
    assert type(again) is GradeReport and again.steps[0].checks[0].__class__ is report.steps[0].checks[0].__class__
    assert again.seconds == report.seconds  # compare=False fields are carried too
    assert json.loads(text)["format"] == serialize.FORMAT


def test_a_real_report_round_trips(stubs_report: GradeReport) -> None:
    again = serialize.report_from_json(serialize.report_json(stubs_report))
    assert again == stubs_report and again.earned == stubs_report.earned
    assert again.steps[0].step == tasks.STEPS[0]


def test_arrays_keep_dtype_shape_and_values() -> None:
    array = np.array([[1.5, -np.inf], [np.nan, 3]], dtype=np.float64)
    back = serialize.decode(np.ndarray, json.loads(json.dumps(serialize.encode(array))))
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)


@pytest.mark.parametrize(
    "document",
    [
        "[]",
        '{"format": "something/9", "report": {}}',
        '{"format": "attnlab-report/1", "report": {"submission": 1}}',
        '{"format": "attnlab-report/1", "report": {"unknown_field": 1}}',
        "[" * 5000,
        "not json",
    ],
)
def test_what_is_not_a_report_is_refused(document: str) -> None:
    with pytest.raises(serialize.FormatError):
        serialize.report_from_json(document)
