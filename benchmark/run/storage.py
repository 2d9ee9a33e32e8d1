"""Files of the content-addressed caches under ``cache.dir`` (probe sets, generated sessions).

Each entry is ``<folder>/<sha256 of its key>.json``, written through a temp
file and ``os.replace`` so a reader never sees half a file. The names are
fixed here, so ``python -m benchmark.cache`` can list and delete exactly what
the caches wrote and nothing else.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_DIR = ".cache/benchmark"  # the default ``cache.dir`` of conf/config.yaml
# ``<sha256>.json``, and ``.<16 hex>.<random>.tmp`` while a write is in flight (left
# behind only if that process died mid-write).
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json|\.[0-9a-f]{16}\..+\.tmp")
# The caches' folders under ``cache.dir``.
PROBE_DIR = "probes"
SESSION_DIR = "sessions"


# What a write can meet that the user, not the code, must fix (``benchmark.run.disk_errors``).
WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENAMETOOLONG}
)


@contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Writes in the block are under ``path``: an ``OSError`` without a file name (a
    ``write`` or ``close`` on a full disk) is raised again naming it."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno in WRITE_ERRNOS:
            raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path)) from exc
        raise


def entry_key(depends_on: dict[str, Any]) -> str:
    """An entry's key: sha256 of the canonical JSON of everything the entry depends on."""
    return hashlib.sha256(json.dumps(depends_on, sort_keys=True).encode()).hexdigest()


class CacheConfig(BaseModel):
    """Where cached probe sets and LLM replies live, and whether a job reads them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    dir: str | None = Field(DEFAULT_DIR, min_length=1, description="null disables every cache")
    mode: Literal["use", "refresh", "off"] = Field(
        "use", description="use: read and write; refresh: write only; off: neither"
    )


def entry_path(cache_dir: Path, folder: str, key: str) -> Path:
    """Where entry ``key`` of cache ``folder`` (``PROBE_DIR``, ``SESSION_DIR``) lives."""
    return Path(cache_dir) / folder / f"{key}.json"


def entries(folder: Path) -> list[Path]:
    """The cache files in ``folder``, sorted (other files there are not ours)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and ENTRY_NAME.fullmatch(p.name))


def write_atomic(path: Path, body: str) -> None:
    """Write ``body`` to ``path`` via a temp file in the same folder and ``os.replace``
    (a full disk names ``path``: ``writing``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}.", suffix=".tmp", dir=path.parent)
    try:
        with writing(path), os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@lru_cache(maxsize=8)
def source_digest(folder: Path, pattern: str = "*.py") -> str:
    """sha256 over the ``pattern`` files of ``folder`` (names and bytes, in name order): part
    of a cache key, so an entry made by other code (or data) is never read back."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob(pattern)):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
