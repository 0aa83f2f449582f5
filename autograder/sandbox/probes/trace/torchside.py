"""PyTorch's side of a trace: a ``TorchFunctionMode`` that records every torch function and tensor method.

torch calls the mode's ``__torch_function__`` for each operation while it is active, with the mode itself
switched off, so the operation runs once, as torch would run it. Tensors are nodes by identity (an in-place
operation gives its tensor a new node, its new version). Queries that return no tensor (``shape``, ``dim``,
``dtype``) are not events. torch is imported only here, when a traced call runs.
"""

from __future__ import annotations

from typing import Any

from autograder.sandbox.probes.trace import arrays, graph

# Tensor attributes read through ``__get__`` that hold a tensor (the others, shape or dtype, are not events).
TENSOR_PROPERTIES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
# Functions that return no tensor: not events.
QUERIES = frozenset(
    {
        "size", "dim", "__len__", "numel", "is_floating_point", "is_contiguous", "__format__", "__repr__",
        "__bool__", "__index__", "__int__", "__float__", "__hash__", "element_size", "nelement", "ndimension",
        "is_complex", "stride", "storage_offset", "data_ptr", "get_device", "tolist", "__array__", "__reduce_ex__",
        "requires_grad_", "retain_grad", "backward", "register_hook", "__deepcopy__", "__dir__", "__contains__",
    }
)  # fmt: skip


def op_name(func: Any) -> str:
    """The name an event gets: the function's (``softmax``, ``__matmul__``), a property's for ``__get__`` (``T``)."""
    name = getattr(func, "__name__", "") or type(func).__name__
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", "") or "__get__"
    return name


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "dtype")


def _tensors(value: Any, depth: int = 0) -> list:
    if _is_tensor(value):
        return [value]
    if depth < 3 and isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v, depth + 1)]
    return []


def _inject(tensor: Any, replacement: Any) -> Any:
    import torch

    return torch.as_tensor(replacement, dtype=tensor.dtype, device=tensor.device)


def _outputs(recorder: graph.Recorder, name: str, result: Any, args: tuple) -> tuple[Any, list[int]]:
    """Nodes for the tensors of ``result`` (a new version of ``args[0]`` for an in-place operation)."""
    target = args[0] if args and _is_tensor(args[0]) else None
    if target is not None and ((result is None and name == "__setitem__") or result is target):
        node = recorder.new_node(target, "op")
        recorder.by_id[id(target)] = node
        return result, [node]
    if name in ("numpy", "item") or isinstance(result, arrays.Traced):
        return arrays.wrap(result, recorder, numbers=name == "item")
    nodes = []
    if _is_tensor(result):
        node = recorder.new_node(result, "op")
        injected = recorder.injected(node)
        if injected is not None:
            result = _inject(result, injected)
            recorder.live[node] = result
        recorder.by_id[id(result)] = node
        return result, [node]
    if isinstance(result, tuple) and all(_is_tensor(v) or not hasattr(v, "dtype") for v in result):
        items = []
        for value in result:
            if _is_tensor(value):
                node = recorder.new_node(value, "op")
                recorder.by_id[id(value)] = node
                nodes.append(node)
            items.append(value)
        return (type(result)(items) if type(result) is tuple else result), nodes
    return result, nodes


def mode() -> Any:
    """A fresh recording mode (torch imported now), to be entered around the traced call."""
    from torch.overrides import TorchFunctionMode

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            recorder = graph.CURRENT
            name = op_name(func)
            getter = getattr(func, "__name__", "") == "__get__"
            skipped = name in QUERIES or (getter and name not in TENSOR_PROPERTIES)
            if recorder is None or not recorder.on or skipped:
                return func(*arrays.plain(args), **arrays.plain(kwargs))
            index, edit = recorder.begin("torch", name, args, kwargs)
            if edit is not None and edit.get("kind") == "call":
                args, kwargs = recorder.edited_call(edit, "torch")
                args = tuple(args)
            with recorder.quiet():
                result = func(*arrays.plain(args), **arrays.plain(kwargs))
            if edit is not None and edit.get("kind") == "skip":
                recorder.pass_on(edit)
            result, nodes = _outputs(recorder, name, result, args)
            recorder.finish(index, nodes)
            return result

    return Recording()


def tensors_in(value: Any) -> list:
    """The tensors in ``value`` (nested tuples and lists, a few levels deep)."""
    return _tensors(value)
