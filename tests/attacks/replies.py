"""Attack: lie to the grader's decoder and to the terminal: replies written straight into the reply pipe (JSON
nested 5000 deep, garbage, impossible sizes, wrong types, pickled arrays, array frames that claim an object dtype
or more values than their bytes hold) and messages full of ANSI escapes
(copied into the submission as ``_attack.py``). Each call makes the attempt its input picks (every call starts
in a fresh working copy after the grader ended the last child, so nothing can count the calls)."""

import io
import json
import os
import struct
import time
import zlib

import numpy as np


def _frame(data):
    return struct.pack(">I", len(data)) + data


def _inject(message):
    for fd in range(3, 64):  # the reply pipe is one of the low descriptors
        try:
            os.write(fd, message)
        except OSError:
            pass
    time.sleep(30)  # the grader reads the injected reply and ends this child


def _pickled():
    buffer = io.BytesIO()
    np.save(buffer, np.array([object()]), allow_pickle=True)
    header = json.dumps({"ok": True, "output": "", "value": {"array": 0}, "n_arrays": 1}).encode()
    return _frame(header) + _frame(buffer.getvalue())


def _described(dtype, shape, data):
    """A reply whose one array frame claims ``dtype`` and ``shape`` and holds ``data``."""
    header = {"ok": True, "output": "", "value": {"array": 0}, "frames": [[dtype, shape]]}
    return _frame(json.dumps(header).encode()) + _frame(data)


ATTEMPTS = [
    lambda: _inject(_frame(b"[" * 5000 + b"]" * 5000)),
    lambda: _inject(_frame(b"\xff\xfe not json at all")),
    lambda: _inject(struct.pack(">I", 2**31) + b"x"),
    lambda: _inject(_frame(json.dumps({"ok": True, "output": "", "value": {"array": 99}}).encode())),
    lambda: _inject(_frame(json.dumps({"ok": False, "output": 7, "failure": {"kind": "raised"}}).encode())),
    lambda: _inject(
        _frame(
            json.dumps(
                {"ok": False, "failure": {"kind": "raised", "type": "E", "mro": ["x"] * 999, "message": "m"}}
            ).encode()
        )
    ),
    lambda: _inject(_pickled()),
    lambda: _inject(_described("|O", [1], (0x4141414141414141).to_bytes(8, "little"))),  # a pointer as an object
    lambda: _inject(_described("<f8", [1 << 30, 1 << 30], b"\0" * 8)),  # a shape its bytes do not hold
    lambda: _inject(_described("<U0", [1 << 40, 1 << 40], b"")),  # values that take no bytes
    lambda: _inject(_described("(1000000,)<f8", [1], b"\0" * 8)),  # a dtype that is itself an array
    lambda: _inject(
        _frame(
            json.dumps(
                {"ok": True, "output": "", "value": {"seq": "list", "items": [[]] * 5}, "n_arrays": 10**9}
            ).encode()
        )
    ),
]


def run(targets, x):
    print("\x1b[2J\x1b[H\x1b[32mSoftmax  10  10  9/9 passed\x1b[0m \r\u202e")
    choice = zlib.crc32(np.ascontiguousarray(x).tobytes()) % (len(ATTEMPTS) + 1)
    if choice < len(ATTEMPTS):
        ATTEMPTS[choice]()
    return "ATTACK \x1b[2J\x1b[H\x1b[1;32mall checks passed\x1b[0m\r\u202egnikcah"
