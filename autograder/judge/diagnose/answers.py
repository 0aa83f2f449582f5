"""Known wrong answers that can be computed again on the call's twin, so a name is confirmed before it is shown.

A check's wrong answers (``{mistake: value}``) were always computed on the check's own input. :class:`Answers`
keeps, beside them, how to get the same answers on the twin input (:mod:`autograder.judge.diagnose.twin`): the
snapshot's twin for a public case (:mod:`autograder.judge.cases`), the variant function run again for a hidden check
(:meth:`Answers.live`). Computing is lazy, so a check that passes never builds its wrong answers at all.

``part`` picks one entry of tuple-valued answers (``(dQ, dK, dV)``); ``derived`` maps the answers through a
function for a check of a quantity computed from the call's value (a loss, a row): the match is made on the
derived values, the confirmation on the call's own part, since the twin has no derivation of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from autograder.judge.diagnose import search, twin

Values = Mapping[str, Any]
TwinOf = Callable[[], "tuple[tuple, dict, Values] | None"]


def _picked(value: Any, part: tuple[int, ...]) -> Any:
    for index in part:
        value = value[index]
    return value


class Answers(Mapping[str, Any]):
    """Wrong answers by mistake id (one part of them, maybe derived), and their twin."""

    def __init__(
        self,
        compute: Callable[[], Values],
        twin_of: TwinOf | None = None,
        part: tuple[int, ...] = (),
        derive: Callable[[Any], Any] | None = None,
        reshape: Callable[[Any], Any] | None = None,
        measure: Callable[[Any], Any] | None = None,
    ) -> None:
        self._compute, self._twin_of, self.part_path, self._derive = compute, twin_of, part, derive
        self._reshape, self._measure = reshape, measure
        self._answers: dict[str, Any] | None = None
        self._twin: tuple[tuple, dict, Values] | bool | None = False  # False: not asked yet

    @classmethod
    def of(cls, values: Values, twin_of: TwinOf | None = None) -> Answers:
        """Answers already computed (a snapshot's), with the way to their twin."""
        frozen = dict(values)
        return cls(lambda: frozen, twin_of)

    @classmethod
    def live(cls, variants: Callable[..., Values], *args: Any, **kwargs: Any) -> Answers:
        """``variants(*args, **kwargs)`` for a call with these arguments, computed when first read; its twin is
        ``variants`` on the call's twin (``functools.partial(attention_variants, ref)`` for a hidden check)."""
        return cls.of_call(args, kwargs, lambda a, k: variants(*a, **k))

    @classmethod
    def of_call(cls, args: tuple, kwargs: dict, compute: Callable[[tuple, dict], Values]) -> Answers:
        """``compute(args, kwargs)``, the wrong answers of a call with these arguments (a probe's, whose answers are
        computed from its arguments in another way), and the same on the call's twin."""

        def twin_of() -> tuple[tuple, dict, Values] | None:
            drawn = twin.inputs(args, kwargs)
            if drawn is None:
                return None
            with search.every_variant():
                return drawn[0], drawn[1], compute(*drawn)

        return cls(lambda: compute(args, kwargs), twin_of)

    def _own(self) -> dict[str, Any]:
        if self._answers is None:
            values = {}
            for key, value in self._compute().items():
                try:
                    picked = self._shaped(_picked(value, self.part_path))
                except (IndexError, TypeError, KeyError):
                    continue  # this wrong answer has no such part
                values[key] = self._derive(picked) if self._derive is not None else picked
            self._answers = values
        return self._answers

    def __getitem__(self, key: str) -> Any:
        return self._own()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._own())

    def __len__(self) -> int:
        return len(self._own())

    def _shaped(self, value: Any) -> Any:
        return self._reshape(value) if self._reshape is not None else value

    def part(self, index: int) -> Answers:
        """The answers' entry ``index`` (of a returned tuple), with the same twin."""
        return Answers(
            self._compute, self._twin_of, (*self.part_path, index), self._derive, self._reshape, self._measure
        )

    def derived(self, function: Callable[[Any], Any]) -> Answers:
        """Each answer mapped by ``function`` for a check of a quantity derived from the call's value (a row, a
        loss); confirmed, on the twin, on the call's value itself."""
        return Answers(self._compute, self._twin_of, self.part_path, function, self._reshape, self._measure)

    def shaped(self, function: Callable[[Any], Any]) -> Answers:
        """Each answer, on both inputs, put in the form the call's value has (``[..., 1, d]`` as ``[..., d]``)."""
        return Answers(self._compute, self._twin_of, self.part_path, self._derive, function, self._measure)

    def measured(self, function: Callable[[Any], Any]) -> Answers:
        """Answers of a quantity measured on the call's value (how many rows each expert received): the student's
        value on the twin is measured by ``function`` too before it is compared."""
        return Answers(self._compute, self._twin_of, self.part_path, self._derive, self._reshape, function)

    def measure(self, value: Any) -> Any:
        """The student's value on the twin as these answers compare it."""
        return self._measure(value) if self._measure is not None else value

    def twin(self) -> tuple[tuple, dict, dict[str, Any]] | None:
        """``(args, kwargs, answers)`` on the twin input, the answers at this part (never derived), or None."""
        if self._twin is False:
            self._twin = self._twin_of() if self._twin_of is not None else None
        if not self._twin:
            return None
        args, kwargs, values = self._twin
        picked = {}
        for key, value in values.items():
            try:
                picked[key] = self._shaped(_picked(value, self.part_path))
            except (IndexError, TypeError, KeyError):
                continue
        return args, kwargs, picked


def twin_of(wrong: Mapping[str, Any] | None) -> tuple[tuple, dict, dict[str, Any]] | None:
    """The twin of a check's wrong answers, when they have one (a plain dict has none)."""
    return wrong.twin() if isinstance(wrong, Answers) else None


def part(wrong: Mapping[str, Any] | None, index: int) -> Mapping[str, Any]:
    """Entry ``index`` of tuple-valued wrong answers (an :class:`Answers` keeps its twin)."""
    if isinstance(wrong, Answers):
        return wrong.part(index)
    return {key: value[index] for key, value in (wrong or {}).items()}


def shaped(wrong: Mapping[str, Any] | None, function: Callable[[Any], Any]) -> Mapping[str, Any]:
    """Wrong answers put in the form of the checked value, on both inputs (see :meth:`Answers.shaped`)."""
    if isinstance(wrong, Answers):
        return wrong.shaped(function)
    return {key: function(value) for key, value in (wrong or {}).items()}


def derived(wrong: Mapping[str, Any] | None, function: Callable[[Any], Any]) -> Mapping[str, Any]:
    """Wrong answers mapped by ``function`` (an :class:`Answers` confirms on the underlying part)."""
    if isinstance(wrong, Answers):
        return wrong.derived(function)
    return {key: function(value) for key, value in (wrong or {}).items()}
