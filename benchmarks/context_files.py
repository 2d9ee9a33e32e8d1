"""Disk and time of a run's context files for ``policy=none``: every point written whole
(as before) next to the session written once and each point a pointer (``ContextFiles``).

    python benchmarks/context_files.py [--tokens 270000] [--window 200000] [--cache DIR]

Generates one session of ``--tokens`` tokens (seed 0; the session cache in ``--cache``),
finds its compaction points under the default compaction settings and that window, and
writes the uncompacted prefix of each point (``policy=none``'s context) both ways into
temporary folders, printing bytes, files and seconds side by side.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import docs_snippet

from benchmark.llm.prompting import render_all
from benchmark.redaction import build_redactor
from benchmark.run.compaction import CompactionConfig, find_points
from benchmark.run.context_files import ContextFiles
from benchmark.run.results import PointResult
from benchmark.transcript.generated import load_or_generate, session_seed


def _whole(folder: Path, point: PointResult) -> None:
    """The writer before: the point's context in full, JSON and text."""
    where = folder / point.point.transcript_id
    where.mkdir(parents=True, exist_ok=True)
    body = {
        "point": point.point.model_dump(),
        "tokens_after": point.tokens_after,
        "messages": [m.model_dump(exclude_none=True) for m in point.context],
    }
    (where / f"point_{point.point.ordinal}.json").write_text(json.dumps(body, indent=1))
    (where / f"point_{point.point.ordinal}.txt").write_text(render_all(point.context) + "\n")


def _measure(write, points: list[PointResult]) -> tuple[int, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        for point in points:
            write(folder, point)
        seconds = time.perf_counter() - start
        files = [p for p in folder.rglob("*") if p.is_file()]
        return sum(p.stat().st_size for p in files), len(files), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=270_000)
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument("--cache", type=Path, default=None)
    docs_snippet.option(parser)
    args = parser.parse_args()
    transcript, _ = load_or_generate(
        session_seed(0, 0), args.tokens, "synthetic-s0-0", build_redactor(), args.cache
    )
    config = CompactionConfig(context_window=args.window)
    points = [
        PointResult(
            point=p,
            tokens_after=sum(m.tokens for m in transcript.messages[: p.end]),
            context=transcript.messages[: p.end],
            probes=[],
        )
        for p in find_points(transcript, config)
    ]
    writer: ContextFiles | None = None

    def shared(folder: Path, point: PointResult) -> None:
        nonlocal writer
        if writer is None or writer.folder != folder:
            writer = ContextFiles(folder)
        writer.write(point)

    print(
        f"session: {transcript.total_tokens:,} tokens, {len(transcript.messages)} messages, "
        f"{len(points)} points (context_window={args.window:,})"
    )
    print(f"{'':28}{'bytes':>14}{'files':>8}{'seconds':>10}")
    for label, write in (("before: every point whole", _whole), ("after: session once", shared)):
        size, files, seconds = _measure(write, points)
        print(f"{label:28}{size:>14,}{files:>8}{seconds:>10.2f}")


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
