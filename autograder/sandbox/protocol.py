"""Wire format between the grader and the sandboxed child.

One message is a JSON header frame followed by zero or more array frames,
each frame a 4-byte big-endian length and its bytes. Values are encoded as a
small tree of JSON numbers, strings, lists and ``{"array": i}`` references to
the array frames. The header's ``"frames"`` lists each array's dtype (NumPy's
``dtype.str``, e.g. ``"<f8"``) and shape; its frame is the array's bytes in C
order. A reader accepts only plain numbers, booleans and strings, checks that
each frame holds exactly what its dtype and shape say, and builds the array
from those bytes: nothing that crosses from the child is unpickled, evaluated
or parsed beyond JSON. (Written by hand rather than ``.npy`` frames: NumPy
parses each ``.npy`` header as Python literals with ``ast``, which made a
student's 2,000 arrays cost the grader and the children about 50 ms.)

This module is imported by both sides, so it uses only the standard library
and numpy.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any, BinaryIO

import numpy as np

HEADER = struct.Struct(">I")
MAX_HEADER_BYTES = 1 << 20  # the JSON part: numbers, short strings, output
MAX_STRING_CHARS = 10_000  # a longer returned string crosses as its type and length only
MAX_DEPTH = 32  # nesting of returned tuples, lists and dicts
MAX_NODES = 100_000  # numbers, strings and containers in one value
MAX_ARRAYS = 10_000
MAX_NDIM = 32
MAX_VALUES = 1 << 32  # values in one array (an array of empty strings takes no bytes to describe)
ARRAY_KINDS = "biufcUS"  # booleans, numbers and strings; never objects, records, dates or raw bytes


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message."""


class FrameTooLarge(ProtocolError):
    """A frame longer than the reader accepts."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a frame of {size} bytes; at most {limit} are accepted")
        self.size, self.limit = size, limit


class AsTorch:
    """Marks an argument the child must hand to student code as a torch tensor."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.asarray(array)


class Unsupported:
    """Stands for a returned object the grader cannot receive (only its type name crosses)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<object of type {self.type_name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsupported) and other.type_name == self.type_name


def _torch_to_numpy(value: Any) -> np.ndarray | None:
    """A torch tensor as numpy, without importing torch where it was never imported.

    A dtype NumPy lacks (bfloat16, the float8 kinds) crosses as float32, which holds each of its values exactly.
    """
    module = type(value).__module__
    if module.startswith("torch") and hasattr(value, "detach"):
        tensor = value.detach().cpu()
        try:
            return tensor.numpy()
        except TypeError:  # "Got unsupported ScalarType BFloat16"
            return tensor.float().numpy()
    return None


def encode(value: Any, arrays: list[np.ndarray]) -> Any:
    """Turn ``value`` into a JSON-able tree, appending arrays to ``arrays``."""
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        return {"unsupported": f"str of {len(value)} characters"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not np.isfinite(value):
            return {"float": repr(value)}
        return value
    if isinstance(value, np.generic):
        return {"scalar": len(arrays), "type": type(value).__name__, **_push(np.asarray(value), arrays)}
    if isinstance(value, np.ndarray):
        return {"array": len(arrays), "type": "ndarray", **_push(value, arrays)}
    if isinstance(value, AsTorch):
        return {"array": len(arrays), "type": "torch", **_push(value.array, arrays)}
    as_numpy = _torch_to_numpy(value)
    if as_numpy is not None:
        return {"array": len(arrays), "type": "Tensor", **_push(as_numpy, arrays)}
    if isinstance(value, (list, tuple)):
        return {"seq": type(value).__name__, "items": [encode(v, arrays) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v, arrays) for k, v in value.items()}}
    return {"unsupported": type(value).__name__}


def _push(array: np.ndarray, arrays: list[np.ndarray]) -> dict:
    if array.dtype.hasobject or array.dtype.fields is not None:
        raise TypeError(f"arrays of dtype {array.dtype} cannot be returned")
    arrays.append(array if array.flags.c_contiguous else np.array(array, order="C"))  # keeps 0-d arrays 0-d
    return {}


def decode(tree: Any, arrays: list[np.ndarray], clean: Any = None) -> Any:
    """Inverse of :func:`encode`; lists come back as lists, tuples as tuples.

    Bounded: at most :data:`MAX_DEPTH` levels and :data:`MAX_NODES` nodes, else ``ProtocolError``.
    ``clean`` (a ``str -> str`` function) is applied to every string (the grader escapes control characters).
    """
    return _Decoder(arrays, clean).node(tree, 0)


class _Decoder:
    def __init__(self, arrays: list[np.ndarray], clean: Any) -> None:
        self.arrays, self.clean, self.nodes = arrays, clean, 0

    def node(self, tree: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise ProtocolError(f"a value nested deeper than {MAX_DEPTH} or larger than {MAX_NODES} items")
        if isinstance(tree, str):
            return self.clean(tree[:MAX_STRING_CHARS]) if self.clean else tree
        if tree is None or isinstance(tree, (bool, int, float)):
            return tree
        if not isinstance(tree, dict):
            raise ProtocolError(f"unexpected node {type(tree).__name__}")
        if "float" in tree:
            return float(_typed(tree["float"], str))
        if "array" in tree:
            array = _pick(self.arrays, tree["array"])
            if tree.get("type") == "torch":  # only ever sent by the grader, to the child
                import torch

                return torch.from_numpy(array.copy())
            return array
        if "scalar" in tree:
            array = _pick(self.arrays, tree["scalar"])
            if array.shape != ():
                raise ProtocolError(f"a scalar of shape {array.shape}")
            return array[()]
        if "seq" in tree:
            items = [self.node(v, depth + 1) for v in _typed(tree.get("items"), list)]
            return tuple(items) if tree["seq"] == "tuple" else items
        if "dict" in tree:
            entries = _typed(tree["dict"], dict)
            return {self.node(k, depth + 1): self.node(v, depth + 1) for k, v in entries.items()}
        if "unsupported" in tree:
            name = str(tree["unsupported"])[:80]
            return Unsupported(self.clean(name) if self.clean else name)
        raise ProtocolError("unknown node")


def _typed(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise ProtocolError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _pick(arrays: list[np.ndarray], index: Any) -> np.ndarray:
    if not isinstance(index, int) or not 0 <= index < len(arrays):
        raise ProtocolError("array reference out of range")
    return arrays[index]


def write_message(stream: BinaryIO, header: dict, arrays: list[np.ndarray] = ()) -> None:
    """Write one message (header plus array frames) and flush; ``arrays`` are C-contiguous (:func:`encode`)."""
    frames = [[array.dtype.str, list(array.shape)] for array in arrays]
    head = json.dumps({**header, "frames": frames}).encode()
    stream.write(HEADER.pack(len(head)) + head)
    for array in arrays:
        data = array.tobytes()
        stream.write(HEADER.pack(len(data)))
        stream.write(data)
    stream.flush()


def read_frame(stream: BinaryIO, limit: int) -> bytes:
    """One length-prefixed frame; ``EOFError`` when the stream ends first."""
    size_bytes = _read_exact(stream, HEADER.size)
    (size,) = HEADER.unpack(size_bytes)
    if size > limit:
        raise FrameTooLarge(size, limit)
    return _read_exact(stream, size)


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("stream closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(stream: BinaryIO, array_limit: int) -> tuple[dict, list[np.ndarray]]:
    """Read one message; arrays larger than ``array_limit`` bytes in total are refused (``FrameTooLarge``).

    Everything else that is not a well-formed message (JSON nested too deep, a bad list of frames, a frame whose
    size is not what its dtype and shape say, an array that is not plain numbers or strings) is a
    ``ProtocolError``.
    """
    try:
        header = json.loads(read_frame(stream, MAX_HEADER_BYTES))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ProtocolError(f"the header is not JSON ({type(error).__name__})") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not an object")
    frames = header.pop("frames", [])
    if not isinstance(frames, list) or len(frames) > MAX_ARRAYS:
        raise ProtocolError("bad list of frames")
    arrays, budget = [], array_limit
    for spec in frames:
        dtype, shape = _described(spec)
        frame = read_frame(stream, budget)
        budget -= len(frame)
        arrays.append(_array(frame, dtype, shape))
    return header, arrays


def _described(spec: Any) -> tuple[np.dtype, tuple[int, ...]]:
    """A frame's ``[dtype, shape]``, checked: a dtype of plain numbers, booleans or strings written exactly as
    NumPy writes it, and at most :data:`MAX_NDIM` non-negative sizes."""
    if not (isinstance(spec, list) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], list)):
        raise ProtocolError("a frame described by something other than [dtype, shape]")
    name, shape = spec
    if len(name) > 16:
        raise ProtocolError("a frame's dtype is not a dtype")
    try:
        dtype = np.dtype(name)
    except (TypeError, ValueError, SyntaxError):
        raise ProtocolError("a frame's dtype is not a dtype") from None
    if dtype.str != name or dtype.kind not in ARRAY_KINDS or dtype.fields is not None or dtype.hasobject:
        raise ProtocolError(f"an array of dtype {dtype}")
    if len(shape) > MAX_NDIM:
        raise ProtocolError(f"an array of {len(shape)} dimensions")
    if not all(isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in shape):
        raise ProtocolError("an array's shape is not a list of sizes")
    return dtype, tuple(shape)


def _array(frame: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The array of ``dtype`` and ``shape`` whose bytes ``frame`` holds (a writable copy); the frame's size must be
    exactly the array's."""
    count = math.prod(shape)
    if len(frame) != count * dtype.itemsize:
        raise ProtocolError(f"a frame of {len(frame)} bytes for {count} values of {dtype}")
    if count > MAX_VALUES:
        raise ProtocolError(f"an array of {count} values")
    if dtype.itemsize == 0 or count == 0:
        return np.zeros(shape, dtype)
    return np.frombuffer(frame, dtype).reshape(shape).copy()
