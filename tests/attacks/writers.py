"""Attack: write outside the working copy, by every route the issue lists: plain files, sqlite3, FIFOs, device
nodes, extended attributes, readline's history, links, a bytecode cache the grader would import, a .pth file
for every later run (copied into the submission as ``_attack.py``)."""

import ctypes
import importlib.util
import marshal
import os
import site
import struct
import sys

from _attempts import attempt, summary


def _write(path, text="attack"):
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    return path


def _sqlite(path):
    import sqlite3

    connection = sqlite3.connect(path)
    connection.execute("create table t (x)")
    connection.commit()
    return path


def _readline(path):
    import readline

    readline.add_history("attack")
    readline.write_history_file(path)
    return path


def _pyc(reference):
    source = os.path.join(reference, "softmax.py")
    info = os.stat(source)
    code = compile("def softmax(x, axis=-1):\n    return x * 0 + 1\n", source, "exec")
    header = importlib.util.MAGIC_NUMBER + struct.pack("<III", 0, int(info.st_mtime) & 0xFFFFFFFF, info.st_size)
    target = importlib.util.cache_from_source(source)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as file:
        file.write(header + marshal.dumps(code))
    return target


def _pth(name):
    written = []
    for folder in site.getsitepackages() + [p for p in sys.path if p.endswith("site-packages")]:
        written.append(_write(os.path.join(folder, name), "/nonexistent-attack-marker\n"))
    return written


def _libc_creat(path):
    libc = ctypes.CDLL("/lib/x86_64-linux-gnu/libc.so.6", use_errno=True)
    if libc.creat(path.encode(), 0o644) < 0:
        raise OSError(ctypes.get_errno(), "libc creat failed")
    return path


def _fork_exec_touch(path):
    import _posixsubprocess

    errors_read, errors_write = os.pipe()
    pid = _posixsubprocess.fork_exec(
        [b"/usr/bin/touch", path.encode()], [b"/usr/bin/touch"], True, (errors_write,), None, None,
        -1, -1, -1, -1, -1, -1, errors_read, errors_write, True, False, -1, None, None, None, -1, None, False,
    )  # fmt: skip
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        raise OSError("touch failed")
    return path


def _symlink_write(target):
    os.symlink(target, "link_out")
    return _write("link_out")


def _hardlink(target):
    os.link(target, "hard_out")
    return open("hard_out").read()


def _warm_sockets():
    """Take over any warm grading server: remove its socket and listen there instead."""
    import socket

    taken = 0
    for name in os.listdir("/tmp"):
        path = os.path.join("/tmp", name, "grader.sock")
        if name.startswith("attnlab-") and os.path.exists(path):
            os.unlink(path)
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(path)
            taken += 1
    return taken


def run(targets, x=None):
    outside, other, kit = targets["outside"], targets["other"], targets["kit"]
    attempt("open_w", lambda: _write(os.path.join(outside, "written")))
    attempt("sqlite", lambda: _sqlite(os.path.join(outside, "db.sqlite")))
    attempt("mkfifo", lambda: os.mkfifo(os.path.join(outside, "fifo")))
    attempt("mknod", lambda: os.mknod(os.path.join(outside, "node")))
    attempt("setxattr", lambda: os.setxattr(other, "user.attack", b"1"))
    attempt("readline", lambda: _readline(os.path.join(outside, "history")))
    attempt("pyc", lambda: _pyc(targets["reference"]))
    attempt("pth", lambda: _pth(targets["pth"]))
    attempt("libc", lambda: _libc_creat(os.path.join(outside, "creat")))
    attempt("touch", lambda: _fork_exec_touch(os.path.join(outside, "touched")))
    attempt("symlink", lambda: _symlink_write(os.path.join(outside, "via_link")))
    attempt("hardlink", lambda: _hardlink(targets["secret"]))
    attempt("other", lambda: _write(other))
    attempt("kit", lambda: _write(os.path.join(kit, "test_attack_hidden.py")))
    attempt("json", lambda: _write(targets["json"], '{"score": 999}'))
    attempt("rename", lambda: os.rename(other, "stolen"))
    attempt("chmod", lambda: os.chmod(outside, 0o777))
    attempt("warm", _warm_sockets)
    attempt("tmp", lambda: _write(f"/tmp/{targets['scratch']}"))  # private to the child in the namespaces layer
    attempt("shm", lambda: _write(f"/dev/shm/{targets['scratch']}"))
    for folder in ("/run/lock", "/var/tmp", "/dev/mqueue"):  # world-writable too: not private, not cleaned before
        attempt(f"ww{folder.replace('/', '_')}", lambda folder=folder: _write(f"{folder}/{targets['scratch']}"))
    return summary()
