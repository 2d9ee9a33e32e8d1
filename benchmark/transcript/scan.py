"""Which files ``transcript.path`` names: files as given, globs, folders scanned; and what
was passed over, and why. Reads names and file kinds only, never a file's content."""

from __future__ import annotations

import glob
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.errors import UserError
from benchmark.transcript.formats._document import not_regular

HIDDEN = "hidden (name starts with '.')"
OTHER_EXTENSION = "not a transcript.extensions file"


@dataclass
class Found:
    """What ``transcript.path`` names: the files to read (``True``: named as a file, not met
    in a folder scan or a glob), the entries passed over that look like transcripts (why),
    and the rest passed over, counted by why."""

    files: dict[Path, bool] = field(default_factory=dict)
    passed: list[tuple[Path, str]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)


def scan(spec: str | list[str], extensions: list[str] | None) -> Found:
    """Files named by ``spec`` (files as given, globs with ``**`` recursive, folders scanned
    recursively for ``extensions``), in order, each once; and what was passed over, why."""
    suffixes = {e.lower() if e.startswith(".") else f".{e.lower()}" for e in extensions or []}
    found = Found()
    for item in [spec] if isinstance(spec, str) else spec:
        path = Path(item).expanduser()
        named = False
        part = Found()
        # A name that exists as written is that file or folder, whatever it holds
        # ("run[1].json", "a*b"); only a path that does not exist is read as a glob.
        if not os.path.lexists(path) and glob.has_magic(str(path)):
            for match in map(Path, sorted(glob.glob(_pattern(path), recursive=True))):
                if _is_folder(match):
                    _scan(match, suffixes, part)
                else:
                    _classify(match, part)
            if not part.files and not part.passed:
                raise UserError(f"transcript.path: {item!r} matches no file")
        elif _is_folder(path):
            _scan(path, suffixes, part)
            if not part.files and not part.passed:
                raise UserError(
                    f"transcript.path: folder {item!r} has no {'/'.join(sorted(suffixes))} file"
                )
        elif os.path.lexists(path):  # a file, or a FIFO, a link...: refused by name on import
            part.files, named = {path: True}, True
        else:
            raise UserError(f"transcript.path: no such file or folder: {item!r}")
        if not part.files:
            where, why = part.passed[0]
            more = f"; {len(part.passed) - 1} more passed over" if len(part.passed) > 1 else ""
            raise UserError(
                f"transcript.path: {item!r} has no readable file ({where}: {why}{more})"
            )
        for file in part.files:
            found.files[file] = found.files.get(file, False) or named
        found.passed += [p for p in part.passed if p not in found.passed]
        found.ignored.update(part.ignored)
    return found


def expand_paths(spec: str | list[str], extensions: list[str] | None = None) -> list[Path]:
    """Files named by ``spec``: files as given, globs (``**`` recursive), folders scanned
    recursively for ``extensions``; in order, each once."""
    return list(expand_found(spec, extensions))


def expand_found(spec: str | list[str], extensions: list[str] | None) -> dict[Path, bool]:
    """``expand_paths`` with, per file, whether it was named as a file (``True``) or met in a
    folder scan or a glob (``False``)."""
    return scan(spec, extensions).files


def _pattern(path: Path) -> str:
    """``path`` as a glob pattern whose longest leading part that exists as written is
    taken literally: in ``runs[1]/*.json`` with a folder ``runs[1]``, ``[1]`` is its name,
    not a character class."""
    parts = path.parts
    for end in range(len(parts) - 1, 0, -1):
        prefix = Path(*parts[:end])
        if os.path.lexists(prefix):
            return os.path.join(glob.escape(str(prefix)), *parts[end:])
    return str(path)


def _is_folder(path: Path) -> bool:
    return os.path.isdir(path)  # False for a symbolic link loop or a broken link


def _classify(path: Path, found: Found) -> None:
    """A file met by a glob or a scan: read when regular, else passed over with why."""
    why = not_regular(path)
    if why is None:
        found.files[path] = False
    else:
        found.passed.append((path, why))


def _scan(folder: Path, suffixes: set[str], found: Found) -> None:
    """Every file of ``folder`` and its subfolders with one of ``suffixes``, sorted; hidden
    entries are not entered, and symbolic links to folders not followed (no cycles)."""
    files: list[Path] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            found.passed.append((current, f"cannot list this folder ({exc.strerror or exc})"))
            continue
        for entry in entries:
            path = Path(entry.path)
            named_like = path.suffix.lower() in suffixes
            if entry.name.startswith("."):
                found.ignored[HIDDEN] += 1
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
                if named_like:
                    found.passed.append(
                        (path, "a folder, not a file (its own files are scanned as a folder's)")
                    )
            elif entry.is_symlink() and _is_folder(path):
                found.passed.append(
                    (path, "a symbolic link to a folder, not followed; name its target instead")
                )
            elif named_like:
                why = not_regular(path)
                if why is None:
                    files.append(path)
                else:
                    found.passed.append((path, why))
            else:
                found.ignored[OTHER_EXTENSION] += 1
    for path in sorted(files):
        found.files[path] = False


def counted(ignored: Counter[str]) -> str:
    return ", ".join(f"{n} {why}" for why, n in sorted(ignored.items()))
