"""What per-probe traces cost an offline job's logging: with and without, side by side.

    python benchmarks/probe_traces.py [--sessions 12 34] [--repeat 2]

Each size is the default offline job (``python -m benchmark``: generated sessions,
extractive answerer, reference judge; 12 sessions give 180 probes) run in its own
process as a user starts it, once cold to fill its session cache, then warm with
``tracking.trace_probes`` on and off, alternating, ``--repeat`` times, each into its
own fresh MLflow store. Per run: the phase after the last probe (scorecard and
logging, from the job's log lines), how much of it the traces took, and the store's
size. Reports only, exit code 0.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from job_throughput import phases, run_job  # noqa: E402
from trace_cost import size  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[12, 34])
    parser.add_argument("--repeat", type=int, default=2)
    docs_snippet.option(parser)
    args = parser.parse_args()
    logging_s: dict[tuple[int, bool], list[float]] = {}
    stores: dict[tuple[int, bool], list[int]] = {}
    probes: dict[int, int | None] = {}
    with tempfile.TemporaryDirectory(prefix="probe-traces-") as tmp:
        for sessions in args.sessions:
            folder = Path(tmp) / f"s{sessions}"
            folder.mkdir()
            _job(folder, sessions, False, "cold")
            for i in range(args.repeat):
                for traced in (True, False):
                    job = _job(folder, sessions, traced, f"{i}-{traced}")
                    probes[sessions] = job.probes()
                    last = phases(job)[-1][1]
                    logging_s.setdefault((sessions, traced), []).append(last or float("nan"))
                    store = folder / f"mlruns-{i}-{traced}"
                    stores.setdefault((sessions, traced), []).append(size(store))
    table = Table(title=f"offline default job, warm, median of {args.repeat}")
    for column in (
        "sessions",
        "probes",
        "scorecard+logging with probe traces",
        "without",
        "traces cost",
        "per 180 probes",
        "store with",
        "without",
    ):
        table.add_column(column)
    for sessions in args.sessions:
        on, off = (statistics.median(logging_s[(sessions, t)]) for t in (True, False))
        big_on, big_off = (statistics.median(stores[(sessions, t)]) for t in (True, False))
        n = probes[sessions] or 0
        table.add_row(
            str(sessions),
            str(n),
            f"{on:.2f} s",
            f"{off:.2f} s",
            f"{on - off:.2f} s",
            f"{(on - off) * 180 / n:.2f} s" if n else "-",
            f"{big_on / 1e6:.1f} MB",
            f"{big_off / 1e6:.1f} MB",
        )
    Console(width=140).print(table)


def _job(folder: Path, sessions: int, traced: bool, name: str):
    argv = [
        sys.executable,
        "-m",
        "benchmark",
        f"transcript.sessions={sessions}",
        f"cache.dir={folder / 'cache'}",
        f"tracking.store_dir={folder / f'mlruns-{name}'}",
        f"hydra.run.dir={folder / 'outputs'}",
        "execution.progress=log",
        f"tracking.trace_probes={str(traced).lower()}",
    ]
    job = run_job(argv, folder)
    if job.code != 0:
        raise SystemExit(f"job exited {job.code}\n{job.output[-2000:]}")
    return job


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
