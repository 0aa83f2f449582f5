"""The functions that start or signal processes without an audit event, replaced in a sandbox child before any
student code runs; and where the loaded modules hold them, found once in a fork server.

``_posixsubprocess.fork_exec``, ``os.fork``, ``os.forkpty``, ``os.pidfd_open``, ``os.mkfifo``, ``os.mknod`` and
``signal.pidfd_send_signal`` raise no audit event (or one the hook cannot tell apart), so the audit hook of
:mod:`autograder.sandbox.policy` would never hear of them: every reference a loaded module holds to one of them is
replaced by a stand-in that raises (``subprocess`` keeps its own ``_fork_exec``, ``os`` its own names).

Finding those references means reading every name of every loaded module: about 47,500 names in 1,100 modules
once torch is loaded. In a child forked from a fork server that read touches every object's reference count, so
the child copied about 8,000 of its parent's pages (29 ms of CPU in every torch child, seven of them a student).
So a fork server finds them once, before it forks (:func:`prepare`); a child then replaces those, and reads in
full only the modules that were not loaded then, or a module noted as holding one that another module object has
replaced since (:func:`disarm`). Between the two only the kit's own code runs (the fork server's loop, the
keeper, the child's set-up), and none of it binds one of these functions to a module's name. A child started
without a fork server (``ATTNLAB_FORKSERVER=0``) has nothing prepared and reads every module, as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

# module -> its functions that start or signal a process without an audit event
UNAUDITED = (
    ("_posixsubprocess", ("fork_exec",)),
    ("posix", ("pidfd_open", "mkfifo", "mknod", "fork", "forkpty")),
    ("signal", ("pidfd_send_signal",)),
)

# Found by prepare(): the loaded modules that hold none of the functions, and those that do (name -> (the module,
# the names in it that hold one)).
_CLEAR: frozenset[str] = frozenset()
_FOUND: dict[str, tuple[ModuleType, tuple[str, ...]]] = {}


def _functions() -> dict[int, str]:
    """``id`` -> name of each unaudited function this Python has."""
    found = {}
    for module_name, names in UNAUDITED:
        module = __import__(module_name)
        for name in names:
            if hasattr(module, name):
                found[id(getattr(module, name))] = name
    return found


def _holding(namespace: dict, functions: dict[int, str]) -> tuple[str, ...]:
    """The names in ``namespace`` bound to one of ``functions``."""
    return tuple(name for name, value in list(namespace.items()) if callable(value) and id(value) in functions)


def prepare() -> None:
    """In a fork server, after its imports and before it forks: note where every loaded module holds an
    unaudited function, so that each child it forks replaces just those (see :func:`disarm`)."""
    global _CLEAR
    functions = _functions()
    clear, found = set(), {}
    for name, module in list(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict):
            holding = _holding(namespace, functions)
            if holding:
                found[name] = (module, holding)
            else:
                clear.add(name)
    _CLEAR = frozenset(clear)
    _FOUND.clear()
    _FOUND.update(found)


def disarm(violation: type[BaseException]) -> None:
    """Replace every reference a loaded module holds to an unaudited function with a stand-in raising
    ``violation``: the names :func:`prepare` found (every name of such a module, when another module object has
    taken its place), and every name of each module loaded since (all of them, where nothing was prepared)."""
    functions = _functions()
    stand_ins = {key: _refused(name, violation) for key, name in functions.items()}
    # A module noted by prepare() is not read again unless it held one (reading it touches its pages): nothing
    # but the kit's own code has run since, and none of it rebinds a module's names to these functions.
    for name in sys.modules.keys() - _CLEAR:
        module = sys.modules.get(name)
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        found = _FOUND.get(name)
        holding = found[1] if found is not None and found[0] is module else _holding(namespace, functions)
        for held in holding:
            value = namespace.get(held)
            if callable(value) and id(value) in stand_ins:
                namespace[held] = stand_ins[id(value)]


def _refused(name: str, violation: type[BaseException]) -> Callable[..., None]:
    def stand_in(*args: object, **kwargs: object) -> None:
        raise violation(f"the grading sandbox does not allow {name}")

    return stand_in
