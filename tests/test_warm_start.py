"""The warm grading server's start fails fast: a socket path no Unix socket can hold, or a server that ends as
it starts, sends the caller to a fresh grader at once instead of after the start timeout (a long ``TMPDIR``
under pytest-xdist once cost a batch seven minutes of waiting)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

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
