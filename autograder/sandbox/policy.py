"""What student code in the child may touch, enforced with a CPython audit hook (on in every isolation layer).

The hook is installed before the first student import and cannot be removed
from Python. It keeps the child inside its working copy: files are written only
there (and in the private ``/tmp`` of the namespaces layer); files are read only
there, in Python's own installation and in the system's read-only places; no
processes, no sockets, no signals to other processes, no raising of resource
limits, no symbolic or hard links, no folder opened outside the working copy
(so no ``dir_fd`` can point outside it). From the moment it is installed (before
any student code runs, and after numpy and torch have loaded their libraries)
no native library is loaded and no native symbol is looked up or called through
``ctypes`` at all, whatever the call stack: a thread, code compiled under another
file name, ``exec`` of a string.

Paths are resolved the way the kernel resolves them, component by component
with ``lstat`` and ``readlink`` (``/proc/self/root``, ``/proc/self/fd/N``,
``chdir`` tricks and links resolve exactly as the real call will), against the
real current folder. Those calls raise no audit event, so the hook never runs
inside itself and keeps no state: there is no flag, cell or dictionary for
student code to reach (through a traceback's frames, say) and change. Every
decision is a function whose code reads only its own arguments, rebuilt at
installation with its data as default values (immutable tuples, frozensets and
the C functions of ``os``) and no globals; replacing these functions' code or
defaults and making new functions from code objects are refused. The functions
that start processes or signal them without an audit event
(``_posixsubprocess.fork_exec``, ``os.pidfd_open``, ``signal.pidfd_send_signal``,
``os.mkfifo``, ``os.mknod``) are replaced before student code runs, and modules
that write files without an audit event (``readline``, ``sqlite3``, ``dbm``)
cannot be imported.

What an audit hook cannot see stays possible: memory read and written through
``ctypes`` pointer objects (indexing a pointer raises no event), and whatever a
compiled extension does (numpy's and torch's own native code included). That is
why this is the second wall, behind the namespaces or the separate uid of
:mod:`autograder.sandbox.isolation`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.sandbox import bwrap, unaudited

DENIED_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.symlink",
        "os.link",
        "os.setxattr",
        "os.removexattr",
        "pty.spawn",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.sethostname",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "resource.prlimit",
        "os.setuid",
        "os.setgid",
        "os.chroot",
        "sqlite3.connect",
        "webbrowser.open",
        "function.__new__",  # a new function around one of the hook's code objects, with other defaults
    }
)
ALLOWED_CTYPES = frozenset({"ctypes.create_string_buffer", "ctypes.create_unicode_buffer"})  # plain buffers
PROTECTED_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__"})  # of the hook's own functions
# write events: (index of dir_fd in the event's arguments or None, whether the call follows a final link)
WRITE_EVENTS = {
    "os.remove": (1, False),
    "os.rmdir": (1, False),
    "os.mkdir": (2, False),
    "os.chmod": (2, True),
    "os.chown": (3, True),
    "os.utime": (3, True),
    "os.truncate": (None, True),
}
TWO_PATH_EVENTS = frozenset({"os.rename"})  # (src, dst, src_dir_fd, dst_dir_fd)
READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.getxattr", "os.listxattr"})
DENIED_IMPORTS = frozenset(
    {
        "readline",
        "sqlite3",
        "_sqlite3",
        "dbm",
        "_dbm",
        "_gdbm",
        "_posixsubprocess",
        "_ctypes",
        "posix",
        "_signal",
        "_testcapi",
        "_testinternalcapi",
        "_xxsubinterpreters",
        "_xxinterpchannels",
    }
)  # re-imports too: a fresh _posixsubprocess would bring back fork_exec
SYSTEM_READ_ROOTS = ("/usr", "/lib", "/lib64", "/etc", "/sys/devices/system/cpu", "/sys/fs/cgroup")
PROC_FILES = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys/vm/overcommit_memory")
PROC_SELF_DENIED = ("root", "cwd", "fd", "map_files", "task", "mem")  # of /proc/<own pid>/
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
MAX_LINKS = 40  # the kernel's limit on links followed in one lookup
WATCHED_PREFIXES = ("os.", "ctypes.", "signal.", "socket.", "sys.", "gc.", "resource.", "sqlite3.")
WATCHED = frozenset(
    {"open", "import", "glob.glob", "subprocess.Popen", "pty.spawn", "webbrowser.open", "function.__new__"}
    | {"object.__setattr__"}
)
NO_GLOBALS: dict[str, Any] = {"__builtins__": {}}  # the rebuilt functions look nothing up by name


class SandboxViolation(PermissionError):
    """Student code tried something the sandbox does not allow."""


# -- the decisions: each reads only its arguments (its data arrives as defaults, see _bind) ---------------------
def _refuse(what: str, violation: type = SandboxViolation) -> None:
    raise violation("the grading sandbox does not allow " + what)


def _text(
    path: Any, refuse: Callable = _refuse, str_: type = str, bytes_: type = bytes, int_: type = int, type_: type = type
) -> Any:
    """``path`` as a string; None for a descriptor or nothing."""
    kind = type_(path)
    if kind is str_:
        return path
    if kind is bytes_:
        return path.decode("utf-8", "surrogateescape")
    if path is None or kind is int_:
        return None
    refuse("a path of type " + kind.__name__ + " here")


def _fd_path(fd: int, readlink: Callable = os.readlink, str_: type = str) -> str:
    return readlink("/proc/self/fd/" + str_(fd))


def _resolve(
    name: str,
    follow: bool,
    getcwd: Callable = os.getcwd,
    lstat: Callable = os.lstat,
    readlink: Callable = os.readlink,
    is_link: Callable = stat.S_ISLNK,
    is_dir: Callable = stat.S_ISDIR,
    refuse: Callable = _refuse,
    not_found: type = FileNotFoundError,
    os_error: type = OSError,
    loop: int = errno.ELOOP,
    max_links: int = MAX_LINKS,
    list_: type = list,
    len_: Callable = len,
    reversed_: Callable = reversed,
) -> tuple[Any, bool]:
    """``(real path, is a folder)`` as the kernel would find ``name``; ``(None, False)`` for an open pipe or socket
    named through ``/proc/self/fd``. A missing final name resolves to where it would be created; a missing folder
    on the way raises FileNotFoundError; a dangling link is refused."""
    if not name.startswith("/"):
        name = getcwd() + "/" + name
    todo = list_(reversed_(name.split("/")))
    done: list = []
    links = 0
    while todo:
        part = todo.pop()
        if part == "" or part == ".":
            continue
        if part == "..":
            if done:
                done.pop()
            continue
        final = True
        for rest in todo:
            if rest != "" and rest != ".":
                final = False
                break
        here = "/" + "/".join(done) + ("/" if done else "") + part
        try:
            info = lstat(here)
        except not_found:
            if final:
                return here, False
            raise
        if is_link(info.st_mode) and (follow or not final):
            links += 1
            if links > max_links:
                raise os_error(loop, "too many levels of symbolic links", name)
            target = readlink(here)
            if not target.startswith("/") and ":[" in target and here.startswith("/proc/"):
                return None, False  # pipe:[123], socket:[456]: a descriptor already open, not a file
            if final:
                try:  # the link's own target must exist: writing through a dangling link creates a file elsewhere
                    lstat(target if target.startswith("/") else "/" + "/".join(done) + "/" + target)
                except not_found:
                    refuse("following the dangling link " + here[:120])
            if target.startswith("/"):
                done = []
            todo.extend(reversed_(target.split("/")))
            continue
        done.append(part)
    path = "/" + "/".join(done)
    try:
        return path, is_dir(lstat(path).st_mode)
    except os_error:
        return path, False


def _check_path(
    path: Any,
    writing: bool,
    follow: bool,
    dir_fd: Any,
    opening: bool,
    read_exact: frozenset = frozenset(),
    read_prefixes: tuple = (),
    write_exact: frozenset = frozenset(),
    write_prefixes: tuple = (),
    denied_prefixes: tuple = (),
    denied_exact: frozenset = frozenset(),
    kernel_paths: bool = False,
    text: Callable = _text,
    fd_path: Callable = _fd_path,
    resolve: Callable = _resolve,
    refuse: Callable = _refuse,
    violation: type = SandboxViolation,
    os_error: type = OSError,
    type_: type = type,
    str_: type = str,
    int_: type = int,
) -> None:
    """Refuse reading (or ``writing``) ``path`` unless it resolves inside the allowed folders."""
    if type_(path) is int_:
        if not kernel_paths:
            return
        name = fd_path(path)
        if not name.startswith("/"):
            return  # a pipe or socket already open
        shown = "descriptor " + str_(path)
    else:
        name = text(path)
        if name is None:
            return
        shown = name
        if type_(dir_fd) is int_ and dir_fd >= 0 and not name.startswith("/"):
            if not kernel_paths:
                refuse("paths relative to a folder descriptor here")
            name = fd_path(dir_fd) + "/" + name
    try:
        resolved, folder = resolve(name, follow)
    except violation:
        raise
    except os_error:
        resolved, folder = "", False
    if resolved is None:
        return  # an open pipe or socket named through /proc/self/fd
    verb = "write " if writing else "read "
    exact, prefixes = (write_exact, write_prefixes) if writing else (read_exact, read_prefixes)
    if not resolved.startswith("/") or not (resolved in exact or resolved.startswith(prefixes)):
        refuse("code to " + verb + shown[:120])
    if resolved in denied_exact or resolved.startswith(denied_prefixes):
        refuse("code to " + verb + shown[:120])
    if opening and folder and not (resolved in write_exact or resolved.startswith(write_prefixes)):
        refuse("opening the folder " + shown[:120] + " (only folders of the working copy can be opened)")


def _check(
    event: str,
    args: tuple,
    caller: Any,
    check_path: Callable = _check_path,
    refuse: Callable = _refuse,
    denied: frozenset = DENIED_EVENTS,
    writes: tuple = (),
    two_paths: frozenset = TWO_PATH_EVENTS,
    reads: frozenset = READ_EVENTS,
    denied_imports: frozenset = DENIED_IMPORTS,
    allowed_ctypes: frozenset = ALLOWED_CTYPES,
    protected: frozenset = PROTECTED_ATTRIBUTES,
    own_code: frozenset = frozenset(),
    callers: tuple = (),
    pid: int = 0,
    write_flags: int = WRITE_FLAGS,
    len_: Callable = len,
    type_: type = type,
    int_: type = int,
    str_: type = str,
    getattr_: Callable = getattr,
) -> None:
    """Raise :class:`SandboxViolation` if ``event`` with ``args`` is not allowed."""
    if event in denied:
        refuse(event)
    if event.startswith("ctypes."):
        if event not in allowed_ctypes:
            refuse("native code through ctypes (" + event + ")")
        return
    if event == "object.__setattr__":
        if len_(args) > 1 and args[1] in protected and getattr_(args[0], "__code__", None) in own_code:
            refuse("replacing the sandbox's own " + str_(args[1]))  # namedtuple sets __defaults__: others may
        return
    if event == "resource.setrlimit":
        if caller not in callers:
            refuse("changing resource limits")
        return
    if event == "open":
        padded = (*args, None, None, None)
        path, mode, flags = padded[0], padded[1], padded[2]
        writing = False
        if type_(mode) is str_:
            for char in "wax+":
                if char in mode:
                    writing = True
        if type_(flags) is int_ and flags & write_flags:
            writing = True
        check_path(path, writing, True, None, True)
        return
    for name, dir_fd_at, follow in writes:
        if event == name:
            dir_fd = args[dir_fd_at] if dir_fd_at is not None and len_(args) > dir_fd_at else None
            check_path(args[0], True, follow, dir_fd, False)
            return
    if event in two_paths:
        check_path(args[0], True, False, args[2] if len_(args) > 2 else None, False)
        check_path(args[1], True, False, args[3] if len_(args) > 3 else None, False)
    elif event in reads:
        check_path(args[0] if args else ".", False, True, None, False)
    elif event == "os.chdir":
        check_path(args[0] if args else ".", True, True, None, False)  # only within the working copy
    elif event == "os.kill" or event == "os.killpg":
        if args and args[0] != 0 and args[0] != pid:
            refuse("signalling other processes")
    elif event == "import":
        if args and args[0] in denied_imports:
            refuse("importing " + str_(args[0]))


def _hook(
    event: str,
    args: tuple,
    check: Callable = _check,
    watched: frozenset = WATCHED,
    prefixes: tuple = WATCHED_PREFIXES,
    getframe: Callable = sys._getframe,
) -> None:
    if event in watched or event.startswith(prefixes):
        check(event, args, getframe(1).f_code if event == "resource.setrlimit" else None)


def _bind(template: Callable, **values: Any) -> Callable:
    """A new function running ``template``'s code with ``values`` as its defaults, and no globals at all."""
    code = template.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = template.__defaults__ or ()
    first = len(names) - len(defaults)
    merged = tuple(values.get(name, default) for name, default in zip(names[first:], defaults))
    return types.FunctionType(code, NO_GLOBALS, template.__name__, merged)


def _roots(paths: Any) -> tuple[frozenset, tuple]:
    """Exact paths and ``/``-terminated prefixes of ``paths`` (``str.startswith`` takes a tuple)."""
    exact = frozenset(p.rstrip("/") or "/" for p in paths)
    return exact, tuple(p.rstrip("/") + "/" for p in exact)


def _decider(
    work: Path, allowed_callers: tuple, writable: tuple[str, ...], protected: tuple = ()
) -> Callable[[str, tuple, Any], None]:
    """The check, built now: every function it runs is rebuilt with its data as defaults and no globals, so
    nothing student code later rebinds (``os.path.realpath``, ``builtins.type``, this module) is looked up again."""
    real = os.path.realpath
    work_root = real(work)
    pid = os.getpid()
    own_proc = f"/proc/{pid}"
    kernel_paths = os.path.isdir("/proc/self/fd")
    read_exact, read_prefixes = _roots(
        (work_root, *writable, *bwrap.python_roots(), *SYSTEM_READ_ROOTS, "/dev", own_proc, *PROC_FILES)
    )
    write_exact, write_prefixes = _roots((work_root, *writable, "/dev/null"))
    denied_exact, denied_prefixes = _roots(f"{own_proc}/{name}" for name in PROC_SELF_DENIED)
    refuse = _bind(_refuse)
    text = _bind(_text, refuse=refuse)
    fd_path = _bind(_fd_path)
    resolve = _bind(_resolve, refuse=refuse)
    check_path = _bind(
        _check_path,
        read_exact=read_exact,
        read_prefixes=read_prefixes,
        write_exact=write_exact,
        write_prefixes=write_prefixes,
        denied_exact=denied_exact,
        denied_prefixes=denied_prefixes,
        kernel_paths=kernel_paths,
        text=text,
        fd_path=fd_path,
        resolve=resolve,
        refuse=refuse,
    )
    return _bind(
        _check,
        check_path=check_path,
        refuse=refuse,
        writes=tuple((name, at, follow) for name, (at, follow) in WRITE_EVENTS.items()),
        own_code=frozenset(t.__code__ for t in (_refuse, _text, _fd_path, _resolve, _check_path, _check, _hook))
        | frozenset(protected),
        callers=tuple(allowed_callers),
        pid=pid,
    )


class Policy:
    """The decisions, as data fixed at creation; kept apart from the hook so tests can ask it directly.

    Args:
        work: the working copy (readable and writable).
        writable: more writable folders (the namespaces layer's private ``/tmp``).
        allowed_callers: code objects that may change resource limits (the child's own CPU limit).
    """

    __slots__ = ("_check",)

    def __init__(self, work: Path, allowed_callers: tuple = (), writable: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "_check", _decider(work, allowed_callers, writable))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a sandbox policy cannot be changed")

    def check(self, event: str, args: tuple, caller: Any = None) -> None:
        """Raise :class:`SandboxViolation` if ``event`` with ``args`` is not allowed."""
        self._check(event, args, caller)


def install(work: Path, allowed_callers: tuple = (), writable: tuple[str, ...] = (), protected: tuple = ()) -> None:
    """Install the hook for the rest of this process's life (nothing of it is reachable from Python, and nothing
    it holds can be changed). ``protected``: code objects of more functions (the child's serving loop, the probes)
    whose code and defaults student code may not replace."""
    hook = _bind(_hook, check=_decider(work, allowed_callers, writable, protected))
    unaudited.disarm(SandboxViolation)
    sys.addaudithook(hook)
