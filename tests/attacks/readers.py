"""Attack: read the reference, the hidden graders, the course secret, the grader's environment, another
student's folder, by every route the issue lists (copied into the submission as ``_attack.py``)."""

import ctypes
import os

from _attempts import attempt, summary


def _nonempty(text):
    if not text:
        raise FileNotFoundError("nothing was read")
    return text


def _cat(path):
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()


def _libc(path):
    libc = ctypes.CDLL("/lib/x86_64-linux-gnu/libc.so.6", use_errno=True)
    fd = libc.open(path.encode(), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "libc open failed")
    buffer = ctypes.create_string_buffer(200)
    if libc.read(fd, buffer, 200) <= 0:
        raise OSError(ctypes.get_errno(), "libc read failed")
    return buffer.value.decode(errors="replace")


def _pythonapi(path):
    code = f"import builtins; builtins.LEAK = open({path!r}).read()".encode()
    ctypes.pythonapi.PyRun_SimpleString(code)
    import builtins

    return builtins.LEAK


def _chdir_proc(path):
    here = os.getcwd()
    os.chdir("/proc/self")
    try:
        return _cat("root" + path)
    finally:
        os.chdir(here)


def _dir_fd(path):
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    inner = os.open(os.path.basename(path), os.O_RDONLY, dir_fd=fd)
    return os.read(inner, 200).decode(errors="replace")


def _fork_exec(path):
    import _posixsubprocess

    read, write = os.pipe()
    errors_read, errors_write = os.pipe()
    _posixsubprocess.fork_exec(
        [b"/bin/cat", path.encode()], [b"/bin/cat"], True, tuple(sorted((write, errors_write))), None, None,
        -1, -1, -1, write, -1, -1, errors_read, errors_write, True, False, -1, None, None, None, -1, None, False,
    )  # fmt: skip
    os.close(write)
    return _nonempty(os.read(read, 200).decode(errors="replace"))


def _subprocess(path):
    import subprocess

    return _nonempty(subprocess.run(["/bin/cat", path], capture_output=True, text=True).stdout)


def _readline(path):
    import readline

    readline.read_history_file(path)
    return readline.get_history_item(1)


def _replaced_policy(path):
    import sys

    policy = sys.modules["autograder.sandbox.policy"]
    policy.Policy.check = lambda *args, **kwargs: None
    policy._decider = lambda *args, **kwargs: lambda *a, **k: None
    policy.DENIED_EVENTS = frozenset()
    import builtins

    real_any = builtins.any
    builtins.any = lambda items: False
    try:
        return _cat(path)
    finally:
        builtins.any = real_any


def _grader(kind):
    pid, seen = os.getppid(), []
    for _ in range(4):  # the keeper, the fork server, the grader...
        try:
            seen.append(_cat(f"/proc/{pid}/{kind}").replace("\0", " "))
        except OSError:
            pass
        try:
            pid = int(_cat(f"/proc/{pid}/stat").rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return " | ".join(seen)


def _scan_environ(secret):
    found = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                found += secret in _cat(f"/proc/{name}/environ")
            except OSError:
                pass
    return found


def _other_copies():
    """How many other working copies' softmax.py this process can read."""
    own = os.path.realpath("softmax.py")
    readable = 0
    parent = os.path.dirname(os.getcwd())
    for top in ("/tmp", "/var/attnlab/works") + ((parent,) if parent != "/" else ()):
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            if top == "/tmp" and not name.startswith(("attnlab-sandbox-", "attnlab-zygote-")):
                continue  # only the grader's working copies (this machine's /tmp holds other people's files)
            for parent, _, files in os.walk(os.path.join(top, name)):
                if parent.count("/") > 6:
                    break
                path = os.path.join(parent, "softmax.py")
                if "softmax.py" in files and os.path.realpath(path) != own:
                    try:
                        readable += bool(_cat(path))
                    except OSError:
                        pass
    return readable


def _instructor_module():
    """The nbgrader course writer (its notebook source holds the model answers): not part of the student wheel."""
    import autograder

    folder = os.path.dirname(autograder.__file__)
    return _cat(os.path.join(folder, "nbgrader_course", "notebook.py"))[:20]


def _in_a_thread(function):
    import threading

    found = []

    def target():
        try:
            found.append(("ok", function()))
        except BaseException as error:
            found.append(("error", error))

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    kind, value = found[0]
    if kind == "error":
        raise value
    return value


def _compiled_elsewhere(path):
    """libc's open and read from code compiled under a file name outside the working copy (no student frame)."""
    namespace = {"path": path}
    source = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None)\n"
        "fd = libc.open(path.encode(), 0)\n"
        "buffer = ctypes.create_string_buffer(200)\n"
        "libc.read(fd, buffer, 200)\n"
        "value = buffer.value.decode(errors='replace')\n"
    )
    exec(compile(source, "/usr/lib/python3/dist-packages/innocent.py", "exec"), namespace)
    return _nonempty(namespace["value"])


def _hook_state(path):
    """Reach the audit hook's own frames through a refusal's traceback and change what they hold."""
    try:
        _cat(path)
    except PermissionError as error:
        tb = error.__traceback__
        while tb is not None:
            for value in list(tb.tb_frame.f_locals.values()):
                if hasattr(value, "on"):
                    value.on = True  # a re-entrancy flag
                if type(value).__name__ == "function" and getattr(value, "__defaults__", None):
                    value.__defaults__ = tuple(None for _ in value.__defaults__)
                for cell in getattr(value, "__closure__", None) or ():
                    cell.cell_contents = None
            tb = tb.tb_next
    return _cat(path)


def run(targets, x=None):
    for label, path in targets["secrets"].items():
        attempt(f"open_{label}", lambda path=path: _cat(path))
    hidden = targets["secrets"]["hidden"]
    attempt("libc", lambda: _libc(hidden))
    attempt("pyapi", lambda: _pythonapi(hidden))
    attempt("chdir_proc", lambda: _chdir_proc(hidden))
    attempt("proc_root", lambda: _cat("/proc/self/root" + hidden))
    attempt("proc1_root", lambda: _cat("/proc/1/root" + hidden))
    attempt("dir_fd", lambda: _dir_fd(hidden))
    attempt("fork_exec", lambda: _fork_exec(hidden))
    attempt("subprocess", lambda: _subprocess(hidden))
    attempt("readline", lambda: _readline(hidden))
    attempt("link", lambda: _cat("link_to_hidden"))
    attempt("policy", lambda: _replaced_policy(targets["secrets"]["reference"]))
    attempt("environ", lambda: _grader("environ"))
    attempt("cmdline", lambda: _grader("cmdline"))
    attempt("scan_env", lambda: _scan_environ(targets["token"]))
    attempt("copies", _other_copies)
    attempt("instructor", _instructor_module)
    attempt("thread_libc", lambda: _in_a_thread(lambda: _libc(hidden)))
    attempt("exec_libc", lambda: _compiled_elsewhere(hidden))
    attempt("thread_exec", lambda: _in_a_thread(lambda: _compiled_elsewhere(hidden)))
    attempt("hook_state", lambda: _hook_state(hidden))
    return summary()
