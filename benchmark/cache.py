"""Inspect or empty the benchmark's caches: ``python -m benchmark.cache [--dir DIR] [info|clear]``.

``info`` shows the LLM reply store (entries by role and model, size) and the
probe sets; ``clear`` removes both. Only what the benchmark wrote is touched:
the SQLite reply store and the probe cache's own files, never other files that
happen to live in the folder.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.table import Table

from benchmark.errors import UserError
from benchmark.llm.cache import CacheCorruptError, CacheStats, ResponseCache, cache_files

DEFAULT_DIR = ".cache/benchmark"  # the default ``cache.dir`` of conf/config.yaml
PROBE_DIR = "probes"
# What benchmark.probe.cache writes: ``<sha256>.json``, and ``.<16 hex>.<random>.tmp``
# while a write is in flight (left behind only if that process died mid-write).
_PROBE_FILE = re.compile(r"[0-9a-f]{64}\.json|\.[0-9a-f]{16}\..+\.tmp")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def probe_files(folder: Path) -> list[Path]:
    """The probe cache's files under ``folder``, sorted (nothing else in ``probes/``)."""
    probes = folder / PROBE_DIR
    if not probes.is_dir():
        return []
    return sorted(p for p in probes.iterdir() if p.is_file() and _PROBE_FILE.fullmatch(p.name))


def info(folder: Path, console: Console) -> None:
    stats = ResponseCache(folder).stats() if folder.is_dir() else None
    probes = probe_files(folder)
    if stats is None or (not stats.path.exists() and not probes):
        console.print(f"cache folder {folder} is empty")
        return
    probe_bytes = sum(p.stat().st_size for p in probes)
    summary = Table(title=f"cache folder {folder}", show_header=True)
    summary.add_column("store")
    summary.add_column("path")
    summary.add_column("entries", justify="right")
    summary.add_column("size", justify="right")
    summary.add_row("LLM replies", str(stats.path), str(stats.entries), human_size(stats.bytes))
    probe_dir = str(folder / PROBE_DIR)
    summary.add_row("probe sets", probe_dir, str(len(probes)), human_size(probe_bytes))
    console.print(summary)
    if stats.entries:
        console.print(_breakdown(stats))
        console.print(f"replies stored from {_when(stats.oldest)} to {_when(stats.newest)}")


def _breakdown(stats: CacheStats) -> Table:
    table = Table(title="LLM replies by role and model")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("entries", justify="right")
    for kind, counts in (("role", stats.by_role), ("model", stats.by_model)):
        for name, count in counts.items():
            table.add_row(kind, name or "(unnamed)", str(count))
    return table


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def clear(folder: Path, console: Console) -> None:
    if not folder.is_dir():
        console.print(f"cache folder {folder} is empty; nothing removed")
        return
    cache = ResponseCache(folder)
    try:
        with cache:
            removed = cache.clear()
        if cache.path.exists():
            size = human_size(cache.size_on_disk())
            console.print(f"removed {removed} LLM replies from {cache.path} (now {size})")
        else:
            console.print(f"no LLM reply store in {folder}")
    except CacheCorruptError:
        # A corrupt store holds nothing usable: delete its files outright.
        for path in cache_files(folder):
            if path.exists():
                path.unlink()
                console.print(f"removed corrupt {path}")
    probes = probe_files(folder)
    for path in probes:
        path.unlink(missing_ok=True)
    probe_dir = folder / PROBE_DIR
    if probe_dir.is_dir() and not any(probe_dir.iterdir()):
        probe_dir.rmdir()
    if probes:
        console.print(f"removed {len(probes)} probe cache files from {probe_dir}")
    else:
        console.print(f"no probe cache files in {probe_dir}")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m benchmark.cache",
        description="Show or clear the benchmark's LLM reply and probe caches.",
    )
    parser.add_argument("--dir", default=DEFAULT_DIR, help=f"cache folder (default: {DEFAULT_DIR})")
    parser.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    args = parser.parse_args(argv)
    folder = Path(args.dir)
    console = Console(highlight=False)
    try:
        (info if args.action == "info" else clear)(folder, console)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
