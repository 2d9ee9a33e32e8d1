"""One line for a write that the disk refused under a configured folder.

A full disk, a quota, a read-only mount, a folder the user may not write or a path too
long for the file system raise ``OSError`` wherever a file happens to be written: in a
cache, in Hydra's output folder, in the tracking store, in MLflow's or SQLite's own code.
Caught one by one they were tracebacks (often after the whole job). This is the one
place that maps them: :func:`user_error` finds such an error in an exception (its cause
chain, SQLAlchemy's wrapped SQLite error included) and names the path and the config key
whose folder holds it (``register`` lists the folders of this process). Writers that lose
the path (``file.write`` raises ENOSPC without one) say where with ``writing`` (in
``storage``, which the caches' writer shares).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from benchmark.errors import UserError
from benchmark.run.storage import WRITE_ERRNOS

# SQLite reports the same conditions in words, without an errno or a path.
_SQLITE_WORDS = (
    ("database or disk is full", errno.ENOSPC),
    ("attempt to write a readonly database", errno.EROFS),
)
_ADVICE = {
    errno.ENOSPC: "free space on its disk or set {key} to another folder",
    errno.EDQUOT: "free space in your quota or set {key} to another folder",
    errno.ENAMETOOLONG: "give a shorter {key}",
}
# A disk with less free than this when a write failed for space is the one that is full.
FULL_BYTES = 1 << 20
_DEFAULT_ADVICE = "make it writable or set {key} to a writable folder"

# config key -> folder, for this process (``register``); most specific folder wins.
_FOLDERS: dict[str, Path] = {}


def register(key: str, folder: str | os.PathLike[str] | None) -> None:
    """``folder`` is where ``key`` makes this process write (None: nowhere)."""
    if folder is None or not str(folder):
        _FOLDERS.pop(key, None)
        return
    _FOLDERS[key] = Path(os.path.abspath(Path(folder).expanduser()))


def registered() -> dict[str, Path]:
    return dict(_FOLDERS)


def write_error(exc: BaseException) -> OSError | None:
    """The refused write behind ``exc`` (itself, its causes, SQLAlchemy's ``orig``), as an
    ``OSError`` with one of ``WRITE_ERRNOS``; None when there is none."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in WRITE_ERRNOS:
            return current
        if isinstance(current, sqlite3.Error):
            text = str(current).lower()
            for words, code in _SQLITE_WORDS:
                if words in text:
                    return OSError(code, os.strerror(code))
        todo += [getattr(current, "orig", None), current.__cause__, current.__context__]
    return None


def user_error(
    exc: BaseException, key: str | None = None, path: str | os.PathLike[str] | None = None
) -> UserError | None:
    """``exc`` as one line naming the path and the config key at fault (``key`` and
    ``path`` when the caller knows them and the error does not), or None when ``exc`` is
    no refused write."""
    found = write_error(exc)
    if found is None:
        return None
    return UserError(message(found, key, path))


def message(
    err: OSError, key: str | None = None, path: str | os.PathLike[str] | None = None
) -> str:
    """``config key '<key>': cannot write <path> (<reason>); <what to do>``."""
    code = err.errno if err.errno is not None else errno.EIO
    reason = err.strerror or os.strerror(code)
    path = _path_of(err) or (None if path is None else os.fspath(path))
    keys = [key] if key else _keys_for(path, code)
    where = f" {path}" if path else ""
    if not keys:  # under no folder of the config: maybe not even a write
        return f"cannot use{where} ({reason}); free space or make it writable"
    advice = _ADVICE.get(code, _DEFAULT_ADVICE).format(key=" or ".join(keys))
    if not path:
        where = f" under {_FOLDERS[keys[0]]}" if keys[0] in _FOLDERS else ""
    named = ", ".join(f"'{k}'" for k in keys)
    return f"config key {named}: cannot write{where} ({reason}); {advice}"


def _path_of(err: OSError) -> str | None:
    name = err.filename
    if name is None:
        return None
    return os.fsdecode(name) if isinstance(name, bytes | str) else str(name)


def _keys_for(path: str | None, code: int) -> list[str]:
    """The registered keys whose folder holds ``path``; without a path, those whose disk is
    full (ENOSPC, EDQUOT) or read-only (EROFS), as the file system tells now."""
    if path is not None:
        target = Path(os.path.abspath(path))
        holding = [(len(f.parts), k) for k, f in _FOLDERS.items() if target.is_relative_to(f)]
        return [max(holding)[1]] if holding else []
    found = []
    for key, folder in _FOLDERS.items():
        stats = _statvfs(folder)
        if stats is None:
            continue
        read_only = bool(stats.f_flag & os.ST_RDONLY)
        full = stats.f_bavail * stats.f_frsize < FULL_BYTES
        if (code == errno.EROFS and read_only) or (code in (errno.ENOSPC, errno.EDQUOT) and full):
            found.append(key)
    return found


def _statvfs(folder: Path) -> os.statvfs_result | None:
    """The file system of ``folder``, or of its nearest existing parent."""
    for candidate in (folder, *folder.parents):
        try:
            return os.statvfs(candidate)
        except OSError:
            continue
    return None
