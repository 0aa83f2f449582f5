"""What ``--force`` may replace: a folder the kit wrote, as it wrote it, and nothing that holds anything else.

A folder is never removed when it is (or is a parent of) the instructor kit, a git repository, the current
folder or a home folder, and never when it holds a file the kit did not write there or one changed since: the
kit writes a manifest (:data:`MANIFEST`, each file's SHA-256) into every folder it may replace later, and only a
folder whose files all match it is replaced. Every check reads; nothing is removed here.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

MANIFEST = ".attnlab-manifest.json"  # {"written_by": "attnlab <command>", "files": {relative path: sha256}}
MOST_ENTRIES = 20_000  # a folder the kit wrote holds a few hundred files: more is not one of its folders


class Refused(Exception):
    """The folder may not be replaced; the message says why, in one sentence."""


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _homes() -> list[Path]:
    homes = [Path.home()]
    if os.environ.get("HOME"):
        homes.append(Path(os.environ["HOME"]))
    return homes


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def never_removed(folder: Path, kit_root: Path | None = None) -> str | None:
    """Why ``folder`` may never be removed (it holds the kit, a git repository, the current folder or a home), in
    one sentence; None when none of these applies."""
    folder = Path(folder).resolve()
    named = [("the instructor kit", kit_root), ("the current folder", Path.cwd())]
    named += [("a home folder", home) for home in _homes()]
    for what, path in named:
        if path is not None and _inside(Path(path).resolve(), folder):
            return f"{folder} holds {what} ({Path(path).resolve()})"
    for count, (root, dirs, files) in enumerate(os.walk(folder)):
        if ".git" in dirs or ".git" in files:
            return f"{folder} holds a git repository ({Path(root) / '.git'})"
        if count > MOST_ENTRIES:
            return f"{folder} holds more than {MOST_ENTRIES} folders: not a folder the kit wrote"
    return None


def files_of(folder: Path) -> dict[str, str]:
    """Every regular file under ``folder`` (relative POSIX path -> SHA-256), the manifest itself left out."""
    found = {}
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if relative != MANIFEST and path.is_file() and not path.is_symlink():
                found[relative] = _digest(path)
    return found


def write_manifest(folder: Path, command: str) -> Path:
    """Record every file now under ``folder`` as written by ``command``; the manifest's path."""
    manifest = Path(folder) / MANIFEST
    body = {"written_by": f"attnlab {command}", "files": files_of(Path(folder))}
    manifest.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def replaceable(folder: Path, command: str, kit_root: Path | None = None) -> None:
    """Raise :class:`Refused` unless ``folder`` may be replaced: ``command`` wrote it (its manifest) and every
    entry in it is a file the manifest lists, unchanged, and it holds nothing :func:`never_removed` guards."""
    folder = Path(folder).resolve()
    reason = never_removed(folder, kit_root)
    if reason:
        raise Refused(f"{reason}: --force never removes it; give a new or empty folder")
    manifest = folder / MANIFEST
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))
        files, writer = dict(listed["files"]), listed["written_by"]
    except (OSError, ValueError, KeyError, TypeError):
        raise Refused(
            f"{folder} was not written by attnlab {command} (it has no {MANIFEST}): --force replaces only a folder "
            "the kit wrote; give a new or empty folder"
        ) from None
    if writer != f"attnlab {command}":
        raise Refused(f"{folder} was written by {writer}, not attnlab {command}: --force does not replace it")
    for root, dirs, names in os.walk(folder):
        for name in sorted(names) + sorted(d for d in dirs if (Path(root) / d).is_symlink()):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if relative == MANIFEST:
                continue
            if path.is_symlink() or not path.is_file() or files.get(relative) != _digest(path):
                raise Refused(
                    f"{path} was not written by attnlab {command} (or changed since): --force would remove it; "
                    "move it away first, or give a new or empty folder"
                )
