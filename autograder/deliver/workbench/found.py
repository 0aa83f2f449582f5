"""Calls into the student's code for the workbench: a value a view can draw, or the sentence that says why not.

Every call goes through the kit's sandbox (:class:`autograder.sandbox.client.Sandbox`)
and ends in a typed outcome; :class:`Found` keeps the value, or the reason there
is none (in the words of :func:`autograder.judge.messages.call_outcome`, the graders'
own), and the step whose handout section explains the function. A function
that raises ``NotImplementedError`` is *not written yet* (``todo``), which the
page shows as what the view will show, not as an error. A value of the wrong
kind or shape is a problem too; NaN entries are kept and drawn as NaN, with a
warning beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from autograder.base import tasks
from autograder.i18n import N_, Nn_, _, counted
from autograder.judge import messages
from autograder.judge.checking import describe
from autograder.sandbox import outcome as outcomes
from autograder.sandbox.client import Sandbox

NOT_WRITTEN = N_("{call} raises NotImplementedError")
NO_VALUE = N_("{call}: {what}")
NOT_AN_ARRAY = N_("{call} returned {got}, not an array of shape {shape}")
WRONG_SHAPE = N_("{call} returned an array of shape {got}; this view needs shape {shape}")
NOT_A_TUPLE = Nn_("{call} returned {got}, not a tuple of {count}", "{call} returned {got}, not a tuple of {count}")
NOT_A_NUMBER = N_("{call} returned {got}, not a number")
NOT_FINITE = Nn_(
    "{call} returned {count} entry that is NaN or infinite (at [{where}]); it is drawn as NaN",
    "{call} returned {count} entries that are NaN or infinite (the first at [{where}]); they are drawn as NaN",
)


@dataclass(frozen=True)
class Found:
    """One value a view needs: what the student's code returned, or why there is none.

    ``problem`` is empty when ``value`` is usable; ``step`` is the step whose
    function was called (its handout section); ``todo`` says the function is
    not written yet; ``warning`` is said beside a usable but odd value.
    """

    value: Any = None
    problem: str = ""
    step: str = ""
    todo: bool = False
    warning: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem

    def failed(self, problem: str) -> Found:
        return replace(self, value=None, problem=problem)

    def array(self, call: str, shape: Sequence[int] | None = None, allow_neg_inf: bool = False) -> Found:
        """The value as a float array (of ``shape`` if given); entries that are NaN (or infinite, except ``-inf``
        where ``allow_neg_inf``) are kept, with a warning."""
        if not self.ok:
            return self
        value = self.value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
            return self.failed(
                _(NOT_AN_ARRAY).format(call=call, got=describe(value), shape=messages.shape(tuple(shape or ())))
            )
        if shape is not None and value.shape != tuple(shape):
            return self.failed(
                _(WRONG_SHAPE).format(call=call, got=messages.shape(value), shape=messages.shape(tuple(shape)))
            )
        array = value.astype(float)
        bad = np.isnan(array) | (np.isinf(array) & ~(allow_neg_inf & np.isneginf(array)))
        if bad.any():
            where = ", ".join(str(int(i)) for i in np.argwhere(bad)[0])
            warning = counted(NOT_FINITE, int(bad.sum())).format(call=call, count=int(bad.sum()), where=where)
            return replace(self, value=array, warning=warning)
        return replace(self, value=array)

    def mask(self, call: str, shape: Sequence[int]) -> Found:
        """The value as a boolean array of ``shape`` (a mask: True may attend)."""
        if not self.ok:
            return self
        value = self.value
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biu" or value.shape != tuple(shape):
            return self.failed(
                _(NOT_AN_ARRAY).format(call=call, got=describe(value), shape=messages.shape(tuple(shape)))
            )
        return replace(self, value=value.astype(bool))

    def parts(self, call: str, count: int) -> list[Found]:
        """The entries of a returned tuple of ``count`` (``output, weights = ...``)."""
        if not self.ok:
            return [self] * count
        value = self.value
        if not isinstance(value, (tuple, list)) or len(value) != count:
            return [
                self.failed(counted(NOT_A_TUPLE, count).format(call=call, got=describe(value), count=count))
            ] * count
        return [replace(self, value=item) for item in value]

    def number(self, call: str) -> Found:
        """The value as a float (a Python or NumPy number, or a 0-d array)."""
        if not self.ok:
            return self
        value = self.value
        if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
            value = value.item()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return replace(self, value=float(value))
        return self.failed(_(NOT_A_NUMBER).format(call=call, got=describe(value)))


def missing(outcome: outcomes.Failure, step: tasks.Step, module: str, function: str, call: str) -> Found:
    """The :class:`Found` of a call that produced no value, in the graders' words."""
    cause = outcomes.root_cause(outcome)
    if isinstance(cause, outcomes.Raised) and cause.raised_as("NotImplementedError"):
        return Found(problem=_(NOT_WRITTEN).format(call=call), step=step.id, todo=True)
    what = messages.call_outcome(outcome, function, step, f"{module}.{function}")
    return Found(problem=_(NO_VALUE).format(call=call, what=what), step=step.id)


class Caller:
    """The submission's functions, reached through one sandbox; every call gives a :class:`Found`."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def call(self, step: str, function: str, *args: Any, call: str, **kwargs: Any) -> Found:
        """``function`` (``"module.name"``) of step ``step`` on ``args``; ``call`` writes it for the page."""
        module, _dot, name = function.rpartition(".")
        outcome = self.sandbox.run_call(module, name, *args, **kwargs)
        if isinstance(outcome, outcomes.Returned):
            return Found(outcome.value, step=step)
        return missing(outcome, tasks.step(step), module, name, call)

    def probe(self, step: str, name: str, module: str, *args: Any, call: str) -> Found:
        """The child-side probe ``name`` (:mod:`autograder.sandbox.probes`) around ``module``'s functions."""
        outcome = self.sandbox.run_probe(name, module, *args)
        if isinstance(outcome, outcomes.Returned):
            return Found(outcome.value, step=step)
        return missing(outcome, tasks.step(step), module, call.partition("(")[0], call)
