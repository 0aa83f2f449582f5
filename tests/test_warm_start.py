"""The warm grading server's start fails fast: a socket path no Unix socket can hold, or a server that ends as
it starts, sends the caller to a fresh grader at once instead of after the start timeout (a long ``TMPDIR``
under pytest-xdist once cost a batch seven minutes of waiting). A server that ends removes its folder, unless a
client is starting the next one there; a client that waited for the start lock of a removed folder makes it
again (199 such folders had gathered in one machine's ``/tmp``)."""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from autograder.deliver.warm import address, client


@pytest.fixture
def tempdir(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder with a short path, as this process's temporary folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    return short_tmp


def test_a_socket_path_too_long_for_a_unix_socket_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("long-folder-name-" * 6)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    path = address.socket_path("autograder.deliver.warm.job")
    assert len(str(path)) > address.LONGEST_SOCKET_PATH
    started = time.monotonic()
    with pytest.raises(address.WarmUnavailable, match="longer than a Unix socket allows"):
        client._warm("autograder.deliver.warm.job", {}, None, deadline_s=5, stop_grace_s=1)
    assert time.monotonic() - started < 2, "it waited for a server that could never listen"
    assert not path.parent.exists(), "nothing is made for a server that cannot start"


def test_a_path_that_fits_is_kept(tempdir: Path) -> None:
    path = address.socket_path("autograder.deliver.warm.job")
    assert address.short_enough(path) == path


def test_a_server_that_ends_as_it_starts_is_not_waited_for(tempdir: Path) -> None:
    handler = "autograder.no_such_handler"  # the server imports it after the kit, then ends with ImportError
    path = address.socket_path(handler)
    address.private_folder(path)
    started = time.monotonic()
    with pytest.raises(address.WarmUnavailable, match="ended as it started"):
        client._start(path, handler)
    assert time.monotonic() - started < client.START_TIMEOUT_S / 2


JOB = "autograder.deliver.warm.job"


def _locked(path: Path) -> IO[str]:
    """The start lock beside ``path``, open and held."""
    lock = open(path.with_name(address.START_LOCK), "a")  # the caller closes it
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def test_an_ending_server_removes_its_folder(tempdir: Path) -> None:
    path = address.socket_path(JOB)
    address.private_folder(path)
    client._start_and_connect(path, JOB).close()
    assert path.exists()
    assert client.stop(JOB)
    deadline = time.monotonic() + 60
    while path.parent.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not path.parent.exists(), f"left behind: {sorted(p.name for p in path.parent.iterdir())}"


def test_the_folder_stays_while_a_client_holds_its_start_lock_or_a_server_listens(tempdir: Path) -> None:
    path = address.socket_path(JOB)
    address.private_folder(path)
    with _locked(path):
        assert not address.remove_if_unused(path)
        assert path.parent.is_dir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener:
        listener.bind(str(path))  # a newer server
        assert not address.remove_if_unused(path)
        assert path.exists()
    path.unlink()
    assert address.remove_if_unused(path)
    assert not path.parent.exists()
    assert not address.remove_if_unused(path), "nothing left to remove"


def test_a_client_that_waited_for_the_lock_of_a_removed_folder_makes_it_again(
    tempdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = address.socket_path(JOB)
    address.private_folder(path)
    seen: list[bool] = []
    started = object()

    def start(where: Path, handler: str) -> object:  # what the client found when it went to start a server
        seen.append(where.parent.is_dir() and where.with_name(address.START_LOCK).is_file())
        return started

    monkeypatch.setattr(client, "_start", start)
    held = _locked(path)  # an ending server's, between its check and the folder's removal
    result: list[object] = []
    waiting = threading.Thread(target=lambda: result.append(client._start_and_connect(path, JOB)))
    waiting.start()
    time.sleep(0.3)  # the client opened the old lock and waits for it
    assert not seen
    path.with_name(address.START_LOCK).unlink()
    path.parent.rmdir()
    held.close()
    waiting.join(10)
    assert result == [started]
    assert seen == [True], "the server was started in a folder that was gone"


def test_the_sweep_removes_only_what_no_server_or_client_uses(tempdir: Path) -> None:
    def folder(name: str, mode: int = 0o700) -> Path:
        made = tempdir / f"attnlab-{os.getuid()}-{name}"
        made.mkdir(mode=mode)
        made.chmod(mode)
        (made / address.START_LOCK).touch()
        return made

    killed = folder("killed")  # a server that was killed: its socket is there, nothing listens on it
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(killed / address.SOCKET))
    stale.close()
    live = folder("live")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(live / address.SOCKET))
    listener.listen(1)
    starting = folder("starting")
    answers = folder("answers")
    (answers / "kept.json").write_text("{}")
    shared = folder("shared", 0o755)
    old = tempdir / f"attnlab-{os.getuid()}-old"
    old.mkdir(mode=0o700)  # an older kit's, without a start lock, its server killed
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(old / address.SOCKET))
    stale.close()
    with listener, _locked(starting / address.SOCKET):
        assert address.sweep() == 2
    assert not killed.exists() and not old.exists()
    assert (live / address.SOCKET).exists(), "a live server's folder was touched"
    assert starting.is_dir() and answers.is_dir() and (answers / "kept.json").is_file() and shared.is_dir()
