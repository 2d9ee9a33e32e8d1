"""Feature requests around the upstream client: cache, retries, exports."""

from __future__ import annotations

import random

from benchmark.transcript.synthetic.feature_model import Feature, finish, test_module
from benchmark.transcript.synthetic.project import Project, SourceFile


def cache(project: Project, rng: random.Random) -> Feature:
    pkg, e, vendor = project.pkg, project.main, project.theme.vendor
    ttl = rng.choice((60, 120, 300, 600))
    path = project.src("cache")
    bug_line = "            if age > self._ttl:"
    module = f'''"""Read-through cache in front of the {vendor} client.

Entries expire after a TTL; the backend is pluggable so tests use a dict while
production shares one Redis between the {project.workers} API workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from cachetools import TTLCache

DEFAULT_TTL_SECONDS = {ttl}
KEY_PREFIX = "{pkg}:v1:"


class Backend(Protocol):
    def get(self, key: str) -> tuple[float, Any] | None: ...
    def set(self, key: str, value: tuple[float, Any]) -> None: ...
    def delete(self, key: str) -> None: ...


class LocalBackend:
    """Process-local backend for tests and single-worker development."""

    def __init__(self, maxsize: int = 1024):
        self._data: TTLCache[str, tuple[float, Any]] = TTLCache(maxsize, DEFAULT_TTL_SECONDS)

    def get(self, key: str) -> tuple[float, Any] | None:
        return self._data.get(key)

    def set(self, key: str, value: tuple[float, Any]) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)


class ReadThroughCache:
    """get_or_load() returns a cached value or calls the loader once and stores it."""

    def __init__(self, backend: Backend, ttl: int = DEFAULT_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self._backend = backend
        self._ttl = ttl
        self._clock = clock

    def get_or_load(self, key: str, loader: Callable[[], Any]) -> Any:
        """Serve from the cache while fresh; entries at exactly the TTL count as expired."""
        entry = self._backend.get(KEY_PREFIX + key)
        now = self._clock()
        if entry is not None:
            stored_at, value = entry
            age = now - stored_at
{bug_line}
                self._backend.delete(KEY_PREFIX + key)
            else:
                return value
        value = loader()
        self._backend.set(KEY_PREFIX + key, (now, value))
        return value

    def invalidate(self, key: str) -> None:
        """Drop one entry, e.g. after a webhook says the {e.name} changed."""
        self._backend.delete(KEY_PREFIX + key)
'''
    tests = test_module(
        project.test_path(path),
        f"{pkg}.cache",
        [
            f"from {pkg}.cache import LocalBackend, ReadThroughCache",
            "",
            "",
            "class FakeClock:",
            "    def __init__(self):",
            "        self.now = 1000.0",
            "",
            "    def __call__(self) -> float:",
            "        return self.now",
            "",
            "",
            "def make_cache(ttl: int = 60):",
            "    clock = FakeClock()",
            "    return ReadThroughCache(LocalBackend(), ttl=ttl, clock=clock), clock",
        ],
        {
            "test_loader_called_once_while_fresh": [
                "cache, clock = make_cache()",
                "calls = []",
                "for _ in range(3):",
                "    cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "assert len(calls) == 1",
            ],
            "test_entry_expires_exactly_at_ttl": [
                "cache, clock = make_cache(ttl=60)",
                "calls = []",
                "cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "clock.now += 60",
                "cache.get_or_load('k', lambda: calls.append(1) or 'v')",
                "assert len(calls) == 2",
            ],
            "test_invalidate_forces_reload": [
                "cache, clock = make_cache()",
                "cache.get_or_load('k', lambda: 'old')",
                "cache.invalidate('k')",
                "assert cache.get_or_load('k', lambda: 'new') == 'new'",
            ],
            "test_keys_are_prefixed": [
                "backend = LocalBackend()",
                "ReadThroughCache(backend).get_or_load('k', lambda: 1)",
                "assert backend.get('k') is None",
            ],
        },
    )
    client = project.file(project.src("client"))
    fetch = next(f for f in client.funcs if f.name == f"fetch_{e.name}")
    body = f'        return self._request("GET", f"/{e.plural}/{{{e.name}_id}}")'
    old = f"{fetch.head}\n{body}"
    new = (
        f"{fetch.head}\n        return self._cache.get_or_load(\n            "
        f'f"{e.name}:{{{e.name}_id}}",\n'
        f'            lambda: self._request("GET", f"/{e.plural}/{{{e.name}_id}}"),\n        )'
    )
    fixed = "            if age >= self._ttl:"
    wiring = (project.src("client"), old, new)
    return finish(
        project, "cache", {"ttl": ttl}, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def retry(project: Project, rng: random.Random) -> Feature:
    pkg, vendor = project.pkg, project.theme.vendor
    base = rng.choice(("0.5", "1.0"))
    path = project.src("retry")
    bug_line = "    return min(BASE_DELAY_SECONDS * 2 ** attempt, MAX_DELAY_SECONDS)"
    module = f'''"""Retry policy for {vendor} calls: backoff with jitter on 429 and 5xx."""

from __future__ import annotations

import random

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from {pkg}.exceptions import UpstreamError

BASE_DELAY_SECONDS = {base}
MAX_DELAY_SECONDS = 30.0
MAX_ATTEMPTS = 5
RETRYABLE = frozenset({{429, 500, 502, 503, 504}})


def is_retryable(exc: BaseException) -> bool:
    """Only upstream throttling and server errors; a 4xx other than 429 is our bug."""
    return isinstance(exc, UpstreamError) and exc.status in RETRYABLE


def backoff_seconds(attempt: int) -> float:
    """Delay before retry number ``attempt`` (1-based), capped at MAX_DELAY_SECONDS."""
{bug_line}


def jittered(attempt: int, rng: random.Random = random.Random()) -> float:
    """Full jitter: spreads retries from all workers over the whole window."""
    return rng.uniform(0, backoff_seconds(attempt))


retry_upstream = retry(
    retry=retry_if_exception(is_retryable),
    wait=wait_random_exponential(multiplier=BASE_DELAY_SECONDS, max=MAX_DELAY_SECONDS),
    stop=stop_after_attempt(MAX_ATTEMPTS),
    reraise=True,
)
'''
    tests = test_module(
        project.test_path(path),
        f"{pkg}.retry",
        [
            "import random",
            "",
            "import pytest",
            "",
            f"from {pkg}.exceptions import UpstreamError",
            f"from {pkg}.retry import BASE_DELAY_SECONDS, MAX_DELAY_SECONDS, backoff_seconds, "
            "is_retryable, jittered",
        ],
        {
            "test_backoff_starts_at_base_delay": [
                "assert backoff_seconds(1) == BASE_DELAY_SECONDS"
            ],
            "test_backoff_doubles": ["assert backoff_seconds(3) == BASE_DELAY_SECONDS * 4"],
            "test_backoff_is_capped": ["assert backoff_seconds(40) == MAX_DELAY_SECONDS"],
            "test_retries_throttling_only": [
                "assert is_retryable(UpstreamError(429, 'slow down'))",
                "assert not is_retryable(UpstreamError(404, 'missing'))",
            ],
            "test_jitter_stays_in_window": [
                "rng = random.Random(7)",
                "assert all(0 <= jittered(2, rng) <= backoff_seconds(2) for _ in range(50))",
            ],
        },
    )
    client = project.file(project.src("client"))
    req = next(f for f in client.funcs if f.name == "_request")
    values = {"base": base, "doubled": float(base) * 2}
    fixed = "    return min(BASE_DELAY_SECONDS * 2 ** (attempt - 1), MAX_DELAY_SECONDS)"
    wiring = (project.src("client"), req.def_line, f"    @retry_upstream\n{req.def_line}")
    return finish(
        project, "retry", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )


def export(project: Project, rng: random.Random) -> Feature:
    pkg, e = project.pkg, project.main
    cols = ["id"] + [f.name for f in e.fields[:4]]
    path = project.src("exporters/csv_export")
    bug_line = "    written = 1"
    module = f'''"""Streaming CSV export of {e.plural}: constant memory, one row at a time."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

import orjson

from {pkg}.models import {e.cls}

COLUMNS = {tuple(cols)!r}


def export_csv({e.plural}: Iterable[{e.cls}], target: Path) -> int:
    """Write a header and one row per {e.name}; returns the number of data rows."""
{bug_line}
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for item in {e.plural}:
            record = item.to_dict()
            writer.writerow([record[column] for column in COLUMNS])
            written += 1
    return written


def export_jsonl({e.plural}: Iterable[{e.cls}], target: Path) -> int:
    """JSON lines for the data team; orjson handles dates and is much faster here."""
    written = 0
    with target.open("wb") as handle:
        for item in {e.plural}:
            handle.write(orjson.dumps(item.to_dict()) + b"\\n")
            written += 1
    return written
'''
    tests = test_module(
        project.test_path(path),
        f"{pkg}.exporters.csv_export",
        [
            "import csv",
            "",
            f"from {pkg}.exporters.csv_export import COLUMNS, export_csv, export_jsonl",
            f"from tests.conftest import make_{e.name}",
        ],
        {
            "test_export_returns_row_count": [
                "(tmp_path)",
                f"rows = [make_{e.name}(id=1), make_{e.name}(id=2)]",
                "assert export_csv(rows, tmp_path / 'out.csv') == 2",
            ],
            "test_export_writes_header_first": [
                "(tmp_path)",
                f"export_csv([make_{e.name}()], tmp_path / 'out.csv')",
                "with (tmp_path / 'out.csv').open() as handle:",
                "    assert tuple(next(csv.reader(handle))) == COLUMNS",
            ],
            "test_export_of_nothing_writes_only_header": [
                "(tmp_path)",
                "assert export_csv([], tmp_path / 'out.csv') == 0",
            ],
            "test_jsonl_one_line_per_record": [
                "(tmp_path)",
                f"export_jsonl([make_{e.name}(), make_{e.name}(id=9)], tmp_path / 'o.jsonl')",
                "assert (tmp_path / 'o.jsonl').read_text().count('\\n') == 2",
            ],
        },
    )
    anchor = 'if __name__ == "__main__":\n    cli()'
    command = (
        f'@cli.command("export-csv")\n@click.argument("target", type=click.Path())\n'
        f"def export_csv_command(target: str):\n"
        f'    """Write every {e.name} to TARGET as CSV."""\n'
        f"    from {pkg}.exporters.csv_export import export_csv\n\n"
        f"    service = {e.cls}Service.from_settings(load_settings())\n"
        f"    count = export_csv(service.iter_all(), Path(target))\n"
        f'    click.echo(f"exported {{count}} {e.plural} to {{target}}")\n\n\n'
    )
    values = {"largest": rng.choice((80, 150, 400))}
    wiring = (project.src("cli"), anchor, command + anchor)
    fixed = "    written = 0"
    return finish(
        project, "export", values, SourceFile(path, module), tests, wiring, (bug_line, fixed)
    )
