"""The operations' common names across NumPy, PyTorch, Python numbers and the lab's own functions.

``np.sum(x, axis=0)``, ``x.sum(0)``, ``torch.sum(x, dim=0)`` and ``np.add.reduce`` are one operation, ``sum``,
with one parameter, its axis. :func:`canonical` gives an event that name, its operands in the order the
mathematics writes them (``__rsub__`` swapped back), and its parameters under common names (``axis`` for NumPy's
axis and torch's dim, ``keepdims`` for both spellings), so that a student's call can be set beside the
reference's whatever library each used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autograder.judge.diagnose.trace.model import Event, nodes_in

NAMES = {
    "add": ("add", "__add__", "__radd__", "__iadd__", "add_"),
    "sub": ("subtract", "sub", "__sub__", "__rsub__", "__isub__", "sub_", "rsub"),
    "mul": ("multiply", "mul", "__mul__", "__rmul__", "__imul__", "mul_"),
    "div": ("divide", "true_divide", "div", "__truediv__", "__rtruediv__", "__itruediv__", "truediv", "div_"),
    "floordiv": ("floor_divide", "floordiv", "__floordiv__", "__rfloordiv__"),
    "pow": ("power", "pow", "__pow__", "__rpow__", "float_power", "square"),
    "neg": ("negative", "neg", "__neg__"),
    "matmul": ("matmul", "__matmul__", "__rmatmul__", "dot", "mm", "bmm", "einsum", "tensordot", "inner"),
    "exp": ("exp", "exp_"),
    "log": ("log",),
    "sqrt": ("sqrt", "rsqrt"),
    "tanh": ("tanh",),
    "erf": ("erf", "erf_"),
    "abs": ("absolute", "abs", "fabs", "__abs__"),
    "max": ("max", "amax", "maximum.reduce", "nanmax"),
    "min": ("min", "amin", "minimum.reduce", "nanmin"),
    "maximum": ("maximum", "clamp", "clip", "relu", "clamp_min", "fmax"),
    "sum": ("sum", "add.reduce", "nansum"),
    "mean": ("mean", "nanmean"),
    "var": ("var",),
    "std": ("std",),
    "softmax": ("softmax", "log_softmax"),
    "where": ("where", "masked_fill", "masked_fill_", "select"),
    "cat": ("concatenate", "cat", "concat", "hstack", "vstack", "stack", "column_stack"),
    "transpose": ("transpose", "swapaxes", "T", "mT", "permute", "moveaxis", "swapdims", "t", "movedim"),
    "reshape": ("reshape", "view", "flatten", "ravel", "unflatten", "squeeze", "unsqueeze", "expand_dims"),
    "getitem": ("getitem", "__getitem__", "take_along_axis", "take", "gather", "index_select"),
    "setitem": ("setitem", "__setitem__", "index_copy_", "index_add_", "index_put_", "scatter"),
    "argsort": ("argsort", "sort", "topk", "argpartition", "argmax"),
    "compare": ("less_equal", "less", "greater", "greater_equal", "equal", "le", "lt", "gt", "ge", "eq", "__le__"),
    "cast": ("astype", "to", "float", "double", "half", "bfloat16", "type_as", "asarray", "array", "as_tensor"),
    "tril": ("tril", "triu", "tri"),
}
CANONICAL = {name: canonical for canonical, names in NAMES.items() for name in names}
REFLECTED = frozenset({"__rsub__", "__rtruediv__", "__rfloordiv__", "__rpow__", "__rmatmul__", "rsub"})
AXIS_NAMES = ("axis", "dim", "axes", "dims")
KEEP_NAMES = ("keepdims", "keepdim")
# The readable name of a canonical operation (for the sentences).
SHOWN = {"matmul": "@", "div": "/", "mul": "*", "add": "+", "sub": "-", "getitem": "[...]", "setitem": "[...] ="}


@dataclass(frozen=True)
class Call:
    """An event as one operation: common name, operand nodes in the order written, parameters by common name."""

    name: str
    operands: tuple[int, ...]
    params: dict[str, Any]
    constants: tuple[Any, ...]  # the plain numbers among the positional arguments (a divisor, a fill value)


def canonical_name(event: Event) -> str:
    """The common name of an event's operation (a lab call keeps its own function name)."""
    if event.lab:
        return event.function.rpartition(".")[2] if "." in event.function else event.function
    return CANONICAL.get(event.op, event.op.strip("_"))


def canonical(event: Event) -> Call:
    """The event as a :class:`Call`."""
    name = canonical_name(event)
    positional = list(event.args)
    if event.op in REFLECTED and len(positional) >= 2:
        positional[0], positional[1] = positional[1], positional[0]
    operands = tuple(n for arg in positional for n in nodes_in(arg))
    params: dict[str, Any] = {}
    for key, value in event.kwargs.items():
        if key in AXIS_NAMES:
            params["axis"] = value
        elif key in KEEP_NAMES:
            params["keepdims"] = value
        elif (not nodes_in(value) and key not in ("out", "dtype")) or key == "dtype":
            params[key] = value
    if "axis" not in params and name in AXIS_FIRST and len(positional) >= 2 and not nodes_in(positional[1]):
        params["axis"] = positional[1]
    if name == "transpose" and len(positional) >= 2:
        params["axis"] = positional[1:]
    constants = tuple(arg for arg in positional[1:] if isinstance(arg, (int, float)) and not isinstance(arg, bool))
    return Call(name, operands, params, constants)


# Operations whose second positional argument (after the array) is the axis (NumPy's and torch's both).
AXIS_FIRST = frozenset({"sum", "max", "min", "mean", "var", "std", "softmax", "argsort", "cat", "cumsum", "prod"})


def shown(name: str) -> str:
    """How a canonical operation is named in a sentence."""
    return SHOWN.get(name, name)
