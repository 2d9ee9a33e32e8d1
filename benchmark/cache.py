"""Inspect or empty the benchmark's caches: ``python -m benchmark.cache [--dir DIR] [info|clear]``.

``info`` shows the LLM reply store (entries by role and model, size), the
probe sets and the generated sessions; ``clear`` removes all three. Only what
the benchmark wrote is touched: the SQLite reply store and the file caches' own
files, never other files that happen to live in the folder.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmark.arg_parser import OneLineParser
from benchmark.errors import UserError, print_error
from benchmark.llm.reply_cache import CacheCorruptError, CacheStats, ResponseCache
from benchmark.llm.reply_cache import cache_files as reply_store_files
from benchmark.run.storage import DEFAULT_DIR, PROBE_DIR, SESSION_DIR, entries

# The file caches under the folder: (what they hold, what their files are, sub-folder).
FILE_CACHES = (
    ("probe sets", "probe cache files", PROBE_DIR),
    ("generated sessions", "session cache files", SESSION_DIR),
)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def cache_files(folder: Path, sub: str) -> list[Path]:
    """The files one file cache wrote under ``folder / sub``, sorted."""
    return entries(folder / sub)


def info(folder: Path, console: Console) -> None:
    stats = ResponseCache(folder).stats() if folder.is_dir() else None
    files = {sub: cache_files(folder, sub) for _, _, sub in FILE_CACHES}
    if stats is None or (not stats.path.exists() and not any(files.values())):
        console.print(f"cache folder {folder} is empty")
        return
    summary = Table(title=f"cache folder {folder}", show_header=True)
    summary.add_column("store")
    summary.add_column("path")
    summary.add_column("entries", justify="right")
    summary.add_column("size", justify="right")
    summary.add_row("LLM replies", str(stats.path), str(stats.entries), human_size(stats.bytes))
    for name, _, sub in FILE_CACHES:
        size = human_size(sum(p.stat().st_size for p in files[sub]))
        summary.add_row(name, str(folder / sub), str(len(files[sub])), size)
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
        for path in reply_store_files(folder):
            if path.exists():
                path.unlink()
                console.print(f"removed corrupt {path}")
    for _, noun, sub in FILE_CACHES:
        removed_files = cache_files(folder, sub)
        for path in removed_files:
            path.unlink(missing_ok=True)
        sub_dir = folder / sub
        if sub_dir.is_dir() and not any(sub_dir.iterdir()):
            sub_dir.rmdir()
        if removed_files:
            console.print(f"removed {len(removed_files)} {noun} from {sub_dir}")
        else:
            console.print(f"no {noun} in {sub_dir}")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m benchmark.cache",
        description="Show or clear the benchmark's LLM reply, probe and session caches.",
    )
    parser.add_argument("--dir", default=DEFAULT_DIR, help=f"cache folder (default: {DEFAULT_DIR})")
    parser.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    args = parser.parse_args(argv)
    folder = Path(args.dir)
    console = Console(highlight=False)
    try:
        (info if args.action == "info" else clear)(folder, console)
    except UserError as exc:
        print_error(exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
