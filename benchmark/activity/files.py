"""Files as a reader of a session sees them: one file however its path is spelled,
and what the session did to it (created, modified, read)."""

from __future__ import annotations

from benchmark.activity.operations import FileOp


class PathKeys:
    """Maps spellings of one file (``x.py``, ``./x.py``, ``/repo/x.py``, ``C:\\repo\\x.py``)
    to one key."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}  # spelling -> key
        self.by_name: dict[str, list[str]] = {}  # basename -> keys

    def key(self, path: str) -> str:
        """The file's key; Windows separators count as ``/`` (``src\\a.py`` is ``src/a.py``)."""
        path = path.strip().replace("\\", "/").removeprefix("./")
        if path in self.known:
            return self.known[path]
        name = path.rstrip("/").rsplit("/", 1)[-1]
        keys = self.by_name.setdefault(name, [])
        # An absolute path ending in a relative one is that file seen from the working
        # directory; two relative paths (``a.txt``, ``docs/a.txt``) are different files.
        matches = [
            k
            for k in keys
            if (_absolute(k) and not _absolute(path) and k.endswith("/" + path))
            or (_absolute(path) and not _absolute(k) and path.endswith("/" + k))
        ]
        key = matches[0] if len(matches) == 1 else path
        if key == path:
            keys.append(path)
        self.known[path] = key
        return key


def _absolute(path: str) -> bool:
    """``/x`` or a Windows drive path (``C:/x``, separators already made ``/``)."""
    return path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] == "/")


# What a file operation means for the file, as indexes and summaries name it.
STATUS: dict[str, str] = {
    "write": "created",
    "touch": "created",
    "edit": "modified",
    "read": "read",
}
STATUSES: tuple[str, ...] = ("created", "modified", "read")


def file_statuses(ops: list[FileOp]) -> dict[str, list[str]]:
    """Each file (first-seen spelling) -> created / modified / read, in that order.

    Spellings of one file (``x.py``, ``/repo/x.py``) count as one; failed
    operations (an edit the tool rejected) do not count.
    """
    keys = PathKeys()
    found: dict[str, tuple[str, set[str]]] = {}
    for op in ops:
        status = STATUS.get(op.kind)
        if status and not op.failed:
            found.setdefault(keys.key(op.path), (op.path, set()))[1].add(status)
    return {path: [s for s in STATUSES if s in done] for path, done in found.values()}


_GENERATED_SUFFIXES = (".backup", ".bak", ".orig", ".rej", ".old", ".swp", ".pyc", ".pyo", "~")
_GENERATED_DIRS = frozenset(
    {"build", "dist", "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".tox"}
    | {".eggs", ".next", ".nuxt", ".gradle", ".parcel-cache", ".turbo"}
)


def is_generated(path: str) -> bool:
    """A backup (``x.py.bak``, ``x.orig``, ``x~``) or build output (``build/``, ``dist/``,
    ``__pycache__``, ``node_modules/``): copies and products of the work, not its subject."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if not parts:
        return False
    name = parts[-1].lower()
    return (
        name.endswith(_GENERATED_SUFFIXES)
        or ".egg-info" in path
        or any(p in _GENERATED_DIRS for p in parts[:-1])
    )
