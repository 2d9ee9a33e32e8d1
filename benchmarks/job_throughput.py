"""A real job against a loopback server: its LLM phase at the server, and the whole process.

    python benchmarks/job_throughput.py [--latency 0.2] [--sessions 36] [--concurrency 64]
                                        [--workers auto] [--compare 0] [--peer] [--write-docs]

The stub runs in its own process (scripted replies, a fixed latency, no faults); the
job runs in its own process exactly as a user starts it: ``python -m benchmark
answerer=gpt4o judge=gpt4o`` with both endpoints at the stub, a fresh cache and a
fresh MLflow store under a temporary folder, the preflight off so the server's span
starts at the first real call. Figures are taken at the server (``GET /stub/stats``):
calls, span from first request to last reply, and the ratio to ideal, the ideal span over
that span. The ideal span is the larger of ``calls x latency / concurrency`` and the time
from the first request to two latencies after the job's last probe was ready (its
``prepared`` line): with worker processes, calls start while later points are prepared.
The whole process is split by the job's own log lines (``benchmark.run.pipeline``):
startup, preparation (sessions, probes, compaction), the LLM phase (``calls start`` to
``evaluated``, beside the preparation when workers prepare), logging. A warm rerun on the
same cache must make 0 calls. Side by side from the same run: the ratio to ideal (target
>= 0.85) and the warm whole process over the warm LLM phase (goal <= 2), each part's time
and the load average. ``--compare 0`` also runs a cold job preparing in its own process
(``execution.prepare_workers=0``) on a fresh stub and cache, first. ``--write-docs`` also
writes the table as a markdown snippet to ``docs/figures/benchmarks/`` (naming the
command). ``--peer`` also runs inspect_ai's equivalent (``benchmarks/peer_inspect.py``)
against a fresh stub with the same settings. It reports, it does not gate: exit code 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import docs_snippet
from rich.console import Console
from rich.table import Table

from benchmark.stub import serve_in_subprocess

ROOT = Path(__file__).resolve().parents[1]
LLM_PHASE = "LLM phase (answers and judgments)"
_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]\[([\w.]+)\]\[\w+\] - (.*)$")
# The job's own log lines that end each phase (benchmark.run.pipeline, benchmark.__main__).
_MARKS = {
    "started": re.compile(r"^loading transcripts"),
    "calls": re.compile(r"^calls start:"),
    "prepared": re.compile(r"^prepared \d+ probe"),
    "answered": re.compile(r"^evaluated \d+ probe"),
}


_POINT = re.compile(r"point \d+: \d+ -> (\d+) tokens$")


@dataclass(frozen=True)
class JobRun:
    """One job process: its wall time, exit code, log lines (time, logger, text), probes."""

    wall: float
    started: float
    code: int
    lines: list[tuple[float, str, str]]
    output: str

    def mark(self, name: str) -> float | None:
        return next((t for t, _, text in self.lines if _MARKS[name].match(text)), None)

    def context_tokens(self) -> int:
        """The mean compacted context, from the job's ``point N: a -> b tokens`` lines."""
        kept = [int(m[1]) for _, _, text in self.lines if (m := _POINT.search(text))]
        return sum(kept) // len(kept) if kept else 0

    def probes(self) -> int | None:
        found = [text for _, _, text in self.lines if _MARKS["answered"].match(text)]
        return int(found[0].split()[1]) if found else None


def stats(base_url: str) -> dict[str, Any]:
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/stub/stats", timeout=10) as reply:
        return json.load(reply)


def job_argv(
    base_url: str, folder: Path, sessions: int, concurrency: int, workers: str = "auto"
) -> list[str]:
    """The job as a user would start it, both endpoints at the stub, everything under ``folder``."""
    argv = [sys.executable, "-m", "benchmark", "answerer=gpt4o", "judge=gpt4o"]
    for role in ("answerer", "judge"):
        argv += [
            f"{role}.endpoint.base_url={base_url}",
            f"{role}.endpoint.max_concurrency={concurrency}",
            f"++{role}.endpoint.preflight=false",
        ]
    return argv + [
        f"transcript.sessions={sessions}",
        f"cache.dir={folder / 'cache'}",
        f"tracking.store_dir={folder / 'mlruns'}",
        f"hydra.run.dir={folder / 'outputs'}",
        "execution.progress=log",
        f"execution.prepare_workers={workers}",
    ]


def run_job(argv: list[str], folder: Path, root: Path = ROOT) -> JobRun:
    """``argv`` run in ``folder`` with the package of checkout ``root``."""
    env = {**os.environ, "OPENAI_API_KEY": "stub-key", "PYTHONPATH": str(root)}
    started = time.time()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)
    wall = time.time() - started
    lines = []
    for line in (done.stdout + done.stderr).splitlines():
        found = _STAMP.match(line)
        if found:
            stamp = datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            lines.append((stamp, found[2], found[3]))
    lines.sort(key=lambda x: x[0])
    return JobRun(wall, started, done.returncode, lines, done.stdout + done.stderr)


def phases(job: JobRun) -> list[tuple[str, float | None]]:
    """Seconds per phase, from the job's log lines (None when a line is missing). With
    worker processes the LLM phase (first call to last judgment) overlaps preparation."""
    start, end = job.started, job.started + job.wall
    started, calls, prepared, answered = (
        job.mark(name) for name in ("started", "calls", "prepared", "answered")
    )

    def span(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    overlap = span(calls, prepared)
    return [
        ("startup (imports, config, parts, store)", span(start, started)),
        ("sessions, probes and compaction (streamed)", span(started, prepared)),
        (LLM_PHASE, span(calls, answered)),
        ("  of which beside the preparation", max(0.0, overlap) if overlap is not None else None),
        ("scorecard and logging", span(answered, end)),
    ]


def peer(args: argparse.Namespace, samples: int, context_tokens: int) -> dict[str, Any] | str:
    """inspect_ai's equivalent run on a fresh stub, or why it was not run."""
    try:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from peer_inspect import run_peer  # type: ignore[import-not-found]
    except ImportError as exc:
        return f"not run: benchmarks/peer_inspect.py not importable ({exc})"
    with serve_in_subprocess(latency=args.latency, scripted=True) as base_url:
        try:
            return run_peer(base_url, samples, args.concurrency, context_tokens)
        except Exception as exc:  # a missing inspect_ai is a report line, not a crash
            return f"not run: {type(exc).__name__}: {exc}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server delay per call, s")
    parser.add_argument(
        "--sessions", type=int, default=36, help="generated sessions (36 give >= 500 probes)"
    )
    parser.add_argument("--concurrency", type=int, default=64, help="max_concurrency of both")
    parser.add_argument("--peer", action="store_true", help="also run inspect_ai's equivalent")
    parser.add_argument(
        "--workers",
        default="auto",
        help="execution.prepare_workers of the jobs (auto: the job's default; 0: in-process)",
    )
    parser.add_argument(
        "--compare",
        default=None,
        help="also run a cold job with this execution.prepare_workers (e.g. 0), side by side",
    )
    docs_snippet.option(parser)
    args = parser.parse_args()
    console = Console(width=max(Console().width, 110))

    with tempfile.TemporaryDirectory(prefix="job-throughput-") as tmp:
        folder = Path(tmp)
        compared = None
        if args.compare is not None:  # first, on a fresh stub and cache of its own
            other = folder / "compare"
            other.mkdir()
            with serve_in_subprocess(latency=args.latency, scripted=True) as base_url:
                argv = job_argv(base_url, other, args.sessions, args.concurrency, args.compare)
                compared = (run_job(argv, other), stats(base_url))
        with serve_in_subprocess(latency=args.latency, scripted=True) as base_url:
            argv = job_argv(base_url, folder, args.sessions, args.concurrency, args.workers)
            cold = run_job(argv, folder)
            after_cold = stats(base_url)
            warm = run_job(argv, folder)
            after_warm = stats(base_url)
    for name, job in (("cold", cold), ("warm", warm), ("compared", compared and compared[0])):
        if job is not None and job.code != 0:
            console.print(f"[red]{name} job exited with {job.code}[/red]\n{job.output[-3000:]}")

    served = Served.of(after_cold, cold, args)
    warm_calls = after_warm["requests"] - after_cold["requests"]
    probes = cold.probes()

    rows = figures(args, cold, warm, served, warm_calls)
    if compared is not None:
        rows += comparison(args, compared[0], Served.of(compared[1], compared[0], args), cold)
    table = Table(
        title=f"Real job vs loopback stub: {args.latency * 1000:.0f} ms/call, "
        f"{args.concurrency} in flight, {args.sessions} sessions"
    )
    for column in ("figure", "value", "target", "result"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    if args.peer:
        result = peer(args, probes or 500, cold.context_tokens())
        if isinstance(result, str):
            table.add_row("inspect_ai", result)
        else:
            their = result["calls"] * args.latency / args.concurrency / result["span_s"]
            table.add_row(
                "inspect_ai: calls, span at the server",
                f"{result['calls']}, {result['span_s']:.2f} s",
            )
            table.add_row("inspect_ai: ratio to ideal", f"{their:.3f}")
            table.add_row("inspect_ai: whole process", f"{result['wall_s']:.2f} s")
            table.add_row(
                "our rate / inspect_ai's (calls per span second)",
                f"{served.ratio / their:.2f}x",
                "≥ 2.5x",
                _ok(served.ratio / their >= 2.5),
            )
    console.print(table)


@dataclass(frozen=True)
class Served:
    """A cold job's calls as the server saw them, and its ideal span.

    The ideal is the earliest the last reply could come: no sooner than the calls at full
    concurrency (``calls x latency / concurrency`` after the first request), nor than two
    latencies (an answer, then its judgment) after the job had its last probe to call
    (its ``prepared`` line: with worker processes, calls start while points are still
    being prepared, so the server cannot be kept busy before they are)."""

    calls: int
    span: float
    ideal: float
    by_concurrency: float

    @classmethod
    def of(cls, after: dict[str, Any], job: JobRun, args: argparse.Namespace) -> Served:
        first, last = after["first_request_at"] or 0.0, after["last_reply_at"] or 0.0
        by_concurrency = after["served"] * args.latency / args.concurrency
        released = job.mark("prepared")
        by_release = (released - first + 2 * args.latency) if released is not None else 0.0
        return cls(after["served"], last - first, max(by_concurrency, by_release), by_concurrency)

    @property
    def ratio(self) -> float:
        return self.ideal / self.span if self.span > 0 else float("nan")


def figures(
    args: argparse.Namespace, cold: JobRun, warm: JobRun, served: Served, warm_calls: int
) -> list[tuple[str, ...]]:
    """The table's rows (figure, value, target, result), the headline pair first."""
    probes = cold.probes()
    llm = {name: dict(phases(job)).get(LLM_PHASE) for name, job in (("cold", cold), ("warm", warm))}
    rows: list[tuple[str, ...]] = [
        (
            "LLM phase: ratio to ideal (ideal span / span at the server)",
            f"{served.ideal:.2f} / {served.span:.2f} = {served.ratio:.3f}",
            "≥ 0.85",
            _ok(served.ratio >= 0.85),
        ),
        (
            "  calls x latency / concurrency / span",
            f"{served.by_concurrency:.2f} / {served.span:.2f} = "
            f"{served.by_concurrency / served.span if served.span > 0 else float('nan'):.3f}",
            "",
            "",
        ),
    ]
    for name, job in (("warm", warm), ("cold", cold)):  # the figure: warm over warm
        if llm[name]:
            over = job.wall / llm[name]  # type: ignore[operator]
            rows.append(
                (
                    f"{name} whole process / {name} LLM phase",
                    f"{job.wall:.2f} / {llm[name]:.2f} = {over:.1f}",
                    "≤ 2" if name == "warm" else "",
                    _ok(over <= 2) if name == "warm" else "",
                )
            )
    rows += [
        ("probes", str(probes), "≥ 500", _ok(probes is not None and probes >= 500)),
        ("calls at the server (cold)", str(served.calls), "", ""),
        ("span at the server, first request to last reply", f"{served.span:.2f} s", "", ""),
        ("calls at the server (warm rerun)", str(warm_calls), "0", _ok(warm_calls == 0)),
    ]
    for name, job in (("cold", cold), ("warm", warm)):
        rows += parts(name, job)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    rows.append(("load average (1 / 5 / 15 min) at the end", load, "", ""))
    return rows


def parts(name: str, job: JobRun) -> list[tuple[str, ...]]:
    rows = [(f"whole process ({name})", f"{job.wall:.2f} s", "", "")]
    for phase, seconds in phases(job):
        rows.append((f"  {phase}", "-" if seconds is None else f"{seconds:.2f} s", "", ""))
    return rows


def comparison(
    args: argparse.Namespace, job: JobRun, served: Served, cold: JobRun
) -> list[tuple[str, ...]]:
    """The ``--compare`` job's rows: its whole time beside the cold job's, its ratio."""
    label = f"prepare_workers={args.compare}"
    return [
        (f"cold whole process, {label} / {args.workers}", f"{job.wall:.2f} / {cold.wall:.2f} s"),
        (
            f"{label}: ratio to ideal",
            f"{served.ideal:.2f} / {served.span:.2f} = {served.ratio:.3f}",
        ),
        *parts(f"cold, {label}", job),
    ]


def _ok(passed: bool) -> str:
    return "PASS" if passed else "MISS"


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
