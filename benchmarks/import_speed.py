"""Importing agent logs: each format's importer against parsing the same bytes as JSON.

    python benchmarks/import_speed.py [--mb 10]

Builds a session of about ``--mb`` MB in each format from the test fixtures
(their turns repeated with fresh ids), then times, side by side in one run:
``json.loads`` of the file (the floor: any importer parses the JSON), the
import (``import_file``: read, detect, convert, validate), and the import plus
counting every message's tokens (what a job does next). Prints MB/s and the
ratio to the JSON floor; the best of 3 runs each. Machines here are shared
and noisy: read ratios, not the last digit.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docs_snippet

from benchmark.transcript.formats import import_file

_ID = re.compile(r'(":\s*"(?:call_|toolu_))')  # a call id value: made unique per repeat
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "transcripts"
SOURCES = {
    "chat": FIXTURES / "chat" / "ledger_fix.jsonl",
    "claude_code": FIXTURES / "claude_code" / "session.jsonl",
    "codex": FIXTURES / "codex" / "rollout-2025-10-14T09-12-03-tinyq.jsonl",
    "swe_agent": FIXTURES / "swe_agent" / "slugify_function_calls.traj",
}


def _grow(fmt: str, source: Path, target: int, out: Path) -> None:
    """Repeat the fixture's conversation until the file is ``target`` bytes; ids made unique."""
    if fmt == "swe_agent":
        data = json.loads(source.read_text())
        turns, history = data["history"][2:], data["history"][:2]
        n = 0
        while len(json.dumps(history)) < target:
            history.extend(json.loads(json.dumps(turns).replace("slug", f"slug{n}")))
            n += 1
        data["history"] = history
        out.write_text(json.dumps(data, indent=2))
        return
    lines = source.read_text().splitlines()
    head, body = (lines[:2], lines[2:]) if fmt == "codex" else (lines[:1], lines[1:])
    chunks, size, n = list(head), sum(map(len, head)), 0
    while size < target:
        for line in body:
            line = _ID.sub(rf"\g<1>{n}_", line)
            chunks.append(line)
            size += len(line) + 1
        n += 1
    out.write_text("\n".join(chunks) + "\n")


def _best(fn: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _json_floor(path: Path) -> None:
    text = path.read_text()
    if path.suffix == ".traj":
        json.loads(text)
    else:
        [json.loads(line) for line in text.split("\n") if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=10)
    docs_snippet.option(parser)
    args = parser.parse_args()
    target = int(args.mb * 2**20)
    print(
        f"{'format':<12} {'MB':>6} {'messages':>9} {'json MB/s':>10} {'import MB/s':>12} "
        f"{'x json':>7} {'+tokens MB/s':>13} {'x json':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, source in SOURCES.items():
            path = Path(tmp) / f"big{source.suffix}"
            _grow(fmt, source, target, path)
            mb = path.stat().st_size / 2**20
            floor = _best(lambda p=path: _json_floor(p))
            imported = _best(lambda p=path: import_file(p))
            messages = len(import_file(path).transcript.messages)
            counted = _best(lambda p=path: import_file(p).transcript.total_tokens)
            print(
                f"{fmt:<12} {mb:>6.1f} {messages:>9,} {mb / floor:>10.1f} {mb / imported:>12.1f} "
                f"{imported / floor:>7.1f} {mb / counted:>13.1f} {counted / floor:>7.1f}"
            )


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
