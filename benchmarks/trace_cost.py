"""What LLM traces cost a run: logging time and store growth, traced vs not, side by side.

    python benchmarks/trace_cost.py [--sessions 34] [--root OTHER_CHECKOUT ...] [--repeat 2]

The job of ``benchmarks/job_throughput.py`` (answerer and judge on the scripted
loopback stub, 510 probes and 1,020 calls at 34 sessions) is run cold once per
checkout, to fill its reply cache, then warm with traces on (``tracking.trace_llm``
and ``tracking.trace_probes``) and off, alternating, ``--repeat`` times. A warm run
makes no calls, so what differs
between its traced and untraced runs is the traces alone. Per run: the phase
after the last probe (scorecard and logging, from the job's log lines) and how
much the MLflow store grew. ``--root`` adds another checkout (e.g. main) to run
the same way, for a before/after on one machine at one time. Reports only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import docs_snippet
from rich.console import Console
from rich.table import Table

from benchmark.stub import serve_in_subprocess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from job_throughput import ROOT, job_argv, phases, run_job  # noqa: E402


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=34)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--root", type=Path, action="append", default=[], help="another checkout")
    docs_snippet.option(parser)
    args = parser.parse_args()
    roots = [ROOT, *(r.resolve() for r in args.root)]
    logging_s: dict[tuple[Path, bool], list[float]] = {}
    growth: dict[tuple[Path, bool], list[int]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="trace-cost-") as tmp,
        serve_in_subprocess(latency=0.05, scripted=True) as base_url,
    ):
        folders = {root: Path(tmp) / f"r{i}" for i, root in enumerate(roots)}
        for root, folder in folders.items():
            folder.mkdir()
            cold = run_job(_argv(base_url, folder, args.sessions, True), folder, root)
            if cold.code != 0:
                raise SystemExit(f"{root}: cold job exited {cold.code}\n{cold.output[-2000:]}")
        for _ in range(args.repeat):
            for traced in (True, False):
                for root, folder in folders.items():
                    before = size(folder / "mlruns")
                    job = run_job(_argv(base_url, folder, args.sessions, traced), folder, root)
                    if job.code != 0:
                        raise SystemExit(f"{root}: job exited {job.code}\n{job.output[-2000:]}")
                    last = phases(job)[-1][1]
                    logging_s.setdefault((root, traced), []).append(last or float("nan"))
                    growth.setdefault((root, traced), []).append(size(folder / "mlruns") - before)
    table = Table(title=f"warm runs, {args.sessions} sessions, median of {args.repeat}")
    for column in (
        "checkout",
        "scorecard+logging traced",
        "untraced",
        "traces cost",
        "store growth traced",
        "untraced",
    ):
        table.add_column(column)
    for root in roots:
        on, off = (statistics.median(logging_s[(root, t)]) for t in (True, False))
        grown_on, grown_off = (statistics.median(growth[(root, t)]) for t in (True, False))
        table.add_row(
            str(root),
            f"{on:.2f} s",
            f"{off:.2f} s",
            f"{on - off:.2f} s",
            f"{grown_on / 1e6:.1f} MB",
            f"{grown_off / 1e6:.1f} MB",
        )
    Console(width=140).print(table)


def _argv(base_url: str, folder: Path, sessions: int, traced: bool) -> list[str]:
    on = str(traced).lower()
    return [
        *job_argv(base_url, folder, sessions, 64),
        f"tracking.trace_llm={on}",
        f"tracking.trace_probes={on}",
    ]


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
