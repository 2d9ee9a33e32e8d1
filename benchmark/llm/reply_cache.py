"""Persistent, content-addressed cache of LLM replies in one SQLite file.

A rerun of the same config replays every reply from here and makes no call;
a job killed at any point resumes from what it had stored, because each
:meth:`ResponseCache.put` is committed before it returns. Entries are keyed by
``(request_key, attempt)``: attempt ``n`` is the reply to the ``n``-th retry of
the same request after the earlier replies proved invalid, so a rerun replays
the same sequence, invalid replies included, and never loops on one.

Several jobs may share the file at once: SQLite's WAL journal lets readers and
one writer proceed together, and a 30 s busy timeout queues the writers.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from benchmark.errors import UserError
from benchmark.llm.encoded import dumps as json_text
from benchmark.llm.endpoint import normalise_base_url

CacheMode = Literal["use", "refresh", "off"]
FILENAME = "llm_responses.sqlite"
KEY_VERSION = 1
# Settings that change how a reply is fetched, never what it says: keying on them
# would turn a rerun with another timeout or concurrency into a cold cache.
TRANSPORT_KEYS = frozenset(
    {
        "api_key",
        "concurrency",
        "extra_headers",
        "headers",
        "http_client",
        "max_retries",
        "retries",
        "timeout",
        "timeout_s",
    }
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key     TEXT    NOT NULL,
    attempt INTEGER NOT NULL,
    value   TEXT    NOT NULL,
    model   TEXT    NOT NULL DEFAULT '',
    role    TEXT    NOT NULL DEFAULT '',
    created REAL    NOT NULL,
    PRIMARY KEY (key, attempt)
) WITHOUT ROWID
"""
_BUSY_TIMEOUT_S = 30.0


class CacheCorruptError(UserError):
    """The cache file is not a readable SQLite database (deleting it loses only cache)."""


class CacheStats(BaseModel):
    """What the cache holds; ``created`` times are for display only."""

    path: Path
    entries: int = 0
    bytes: int = 0
    by_model: dict[str, int] = {}
    by_role: dict[str, int] = {}
    oldest: float | None = None
    newest: float | None = None


def request_key(
    *,
    api: str,
    model: str,
    base_url: str | None,
    body: Mapping[str, Any],
    text: str | None = None,
    data: bytes | None = None,
) -> str:
    """SHA-256 hex of a request: the same request always maps to the same entry.

    ``api`` names the wire API (e.g. ``"chat.completions"``). ``body`` holds only
    what changes the reply: messages or input, instructions, temperature,
    max_tokens, response_format, tools, seed... It must never hold transport
    settings (timeouts, retries, concurrency), keys or headers; top-level keys
    from :data:`TRANSPORT_KEYS` raise ``ValueError``. Dict order does not matter;
    value types do (``0`` and ``0.0`` differ), so pass typed config values.
    ``text``: ``body_text(body)`` when the caller has it already (it is not encoded again);
    ``data``: its UTF-8 bytes (what the chat path sends), hashed as they are.
    """
    leaked = sorted(TRANSPORT_KEYS.intersection(body))
    if leaked:
        raise ValueError(f"transport settings do not belong in a cache key: {', '.join(leaked)}")
    if data is None:
        data = (body_text(body) if text is None else text).encode()
    # Hashed in pieces, not joined: a body is ~100 KB (hashlib lets go of the GIL on it).
    digest = hashlib.sha256(_key_head(api, base_url))
    digest.update(data)
    digest.update(_key_tail(model))
    return digest.hexdigest()


# The key hashes the canonical JSON of {"api", "base_url", "body", "model", "v"}, keys in
# that order: what comes before the body and after it, encoded once per endpoint.
@lru_cache(maxsize=256)
def _key_head(api: str, base_url: str | None) -> bytes:
    head = _canonical({"api": api, "base_url": normalise_base_url(base_url)})[:-1]
    return f'{head},"body":'.encode()


@lru_cache(maxsize=256)
def _key_tail(model: str) -> bytes:
    return f",{_canonical({'model': model, 'v': KEY_VERSION})[1:]}".encode()


def body_text(body: Mapping[str, Any]) -> str:
    """A request body's canonical JSON (sorted keys, no spaces): what its key hashes, and
    a valid body to send as is, so a large prompt is encoded once per request."""
    return _canonical(body)


def _canonical(value: Any) -> str:
    return str(json_text(value, sort_keys=True, separators=(",", ":")))


class ResponseCache:
    """The reply store of one cache folder (``<folder>/llm_responses.sqlite``).

    ``mode``: ``use`` reads and writes; ``refresh`` never reads but overwrites,
    so every request is sent again; ``off`` neither reads nor writes (and
    creates no file). :meth:`stats` and :meth:`clear` work in every mode and
    never create the file either. Safe across threads (one connection behind a
    lock: as fast as a connection per thread here, and closable from anywhere)
    and across processes.
    """

    def __init__(self, folder: str | Path, mode: CacheMode = "use") -> None:
        if mode not in ("use", "refresh", "off"):
            raise UserError(f"cache.mode must be use, refresh or off, not '{mode}'")
        self.folder = Path(folder)
        self.path = self.folder / FILENAME
        self.mode: CacheMode = mode
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str, attempt: int = 0) -> dict[str, Any] | None:
        """The stored reply, or ``None`` on a miss (always ``None`` unless mode is ``use``)."""
        if self.mode != "use":
            return None
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return None
            row = self._run(
                conn, "SELECT value FROM responses WHERE key = ? AND attempt = ?", (key, attempt)
            ).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise CacheCorruptError(f"LLM response cache {self.path}: bad entry {key}") from exc
        return value if isinstance(value, dict) else None

    def put(
        self, key: str, attempt: int, value: Mapping[str, Any], *, model: str = "", role: str = ""
    ) -> None:
        """Store (or overwrite) one reply, committed before this returns; no-op when ``off``."""
        if self.mode == "off":
            return
        if not isinstance(value, Mapping):
            raise TypeError(f"a cached reply must be a mapping, not {type(value).__name__}")
        text = json.dumps(dict(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            conn = self._connect(create=True)
            assert conn is not None
            self._run(
                conn,
                "INSERT OR REPLACE INTO responses (key, attempt, value, model, role, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (key, attempt, text, model, role, time.time()),
            )

    def stats(self) -> CacheStats:
        """Entry counts by model and role, and the size on disk (database plus WAL)."""
        stats = CacheStats(path=self.path)
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return stats
            stats.entries, stats.oldest, stats.newest = self._run(
                conn, "SELECT COUNT(*), MIN(created), MAX(created) FROM responses"
            ).fetchone()
            for column, counts in (("model", stats.by_model), ("role", stats.by_role)):
                rows = self._run(
                    conn,
                    f"SELECT {column}, COUNT(*) FROM responses GROUP BY {column} ORDER BY {column}",
                )
                counts.update({name: count for name, count in rows})
        stats.bytes = self.size_on_disk()
        return stats

    def size_on_disk(self) -> int:
        return sum(
            p.stat().st_size for p in (self.path, _sidecar(self.path, "-wal")) if p.is_file()
        )

    def clear(self) -> int:
        """Delete every entry and give the space back; returns how many were removed.

        The file stays (emptied), so a job using it meanwhile keeps working.
        """
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return 0
            removed = self._run(conn, "DELETE FROM responses").rowcount
            self._run(conn, "VACUUM")
            self._run(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def close(self) -> None:
        """Close the connection; the next call reopens it."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        """The open connection (caller holds the lock); ``None`` if there is no file yet."""
        if self._pid != os.getpid():
            # A forked child must not touch its parent's SQLite handle: open its own.
            self._conn, self._pid = None, os.getpid()
        if self._conn is not None:
            return self._conn
        if not create and not self.path.is_file():
            return None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the cache folder {self.folder}: {exc}") from exc
        conn = self._open()
        self._conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise UserError(f"cannot open the LLM response cache {self.path}: {exc}") from exc
        try:
            self._run(conn, f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            self._run(conn, "PRAGMA synchronous = NORMAL")
            self._setup(conn)
            self._check_table(conn)
        except UserError:
            conn.close()
            raise
        return conn

    def _setup(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL and create the table, waiting while another process does the same.

        SQLite answers a journal-mode change or a schema race with an immediate
        "database is locked" that the busy timeout does not cover.
        """
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        delay = 0.002
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise self._error(exc) from exc
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _check_table(self, conn: sqlite3.Connection) -> None:
        """A table of the same name written by something else is not ours to use."""
        columns = {row[1] for row in self._run(conn, "PRAGMA table_info(responses)")}
        expected = {"key", "attempt", "value", "model", "role", "created"}
        if columns != expected:
            raise CacheCorruptError(
                f"LLM response cache {self.path} has an unexpected layout; delete it "
                "(python -m benchmark.cache clear)"
            )

    def _run(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """Execute one statement; SQLite failures become one-line errors naming the file."""
        try:
            return conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.DatabaseError) -> UserError:
        if isinstance(exc, sqlite3.OperationalError):  # locked, I/O, permissions
            return UserError(f"LLM response cache {self.path}: {exc}")
        return CacheCorruptError(
            f"LLM response cache {self.path} is corrupt or not a cache ({exc}); delete it "
            "(python -m benchmark.cache clear)"
        )


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def cache_files(folder: str | Path) -> list[Path]:
    """The SQLite file and its WAL/shared-memory sidecars, as written by this module."""
    path = Path(folder) / FILENAME
    return [path, _sidecar(path, "-wal"), _sidecar(path, "-shm")]
