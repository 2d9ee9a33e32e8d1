"""Does the real job scale? N and 10N sessions, cold and warm: wall time and peak RSS.

    python benchmarks/job_scale.py [--sessions N] [--factor 10] [--repeat 1] [-- OVERRIDES...]

Runs ``python -m benchmark transcript.sessions=N`` (the offline default otherwise) as its
own process, in a fresh temp folder per size (its own session/probe cache and MLflow
store), twice: cold (empty caches) then warm (the same job again: read back from the
caches). Then the same at ``factor x N``. For each run it prints the wall time and the
peak RSS of the job process (``os.wait4``: that child's own ``ru_maxrss``), and for each
warmth the time ratio of the large job to the small one, which should be at most the
factor (the job does no work that grows faster than the sessions), and the RSS ratio,
which should stay near 1: transcripts stream in one at a time, and contexts and results
go to files as each point is done. What still grows is the per-probe scores the job
keeps for its metrics and table, and the answerer's line-term memos until they reach
their bounds (``answerer/extractive._line``, ``answerer/query._terms``).

Not a test: the machine is shared and noisy, so both sizes run side by side in one
sitting; read the ratios. Exit 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docs_snippet

ROOT = Path(__file__).resolve().parents[1]


def run_job(sessions: int, folder: Path, overrides: list[str]) -> tuple[float, float, int]:
    """One job in its own process: (wall seconds, peak RSS in MiB, exit code)."""
    command = [
        sys.executable,
        "-m",
        "benchmark",
        f"transcript.sessions={sessions}",
        f"cache.dir={folder / 'cache'}",
        f"tracking.store_dir={folder / 'mlruns'}",
        f"hydra.run.dir={folder / 'run'}",
        "execution.progress=off",
        *overrides,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    with open(folder / "job.log", "ab") as log:
        child = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    rss_kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    return wall, rss_kib / 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2, help="the small job's sessions (N)")
    parser.add_argument("--factor", type=int, default=10, help="the large job has factor x N")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size and warmth (best)")
    parser.add_argument("overrides", nargs="*", help="more job overrides, e.g. policy=truncate")
    docs_snippet.option(parser)
    args = parser.parse_args()

    sizes = (args.sessions, args.sessions * args.factor)
    figures: dict[tuple[int, str], tuple[float, float]] = {}
    print(f"job: python -m benchmark {' '.join(args.overrides)} (sessions {sizes[0]}, {sizes[1]})")
    print(f"{'sessions':>8} {'warmth':>6} {'wall s':>8} {'peak RSS MiB':>13}")
    for sessions in sizes:
        with tempfile.TemporaryDirectory(prefix="job_scale_") as tmp:
            folder = Path(tmp)
            for warmth in ("cold", "warm"):
                runs = []
                for attempt in range(args.repeat):
                    if warmth == "cold" and attempt:  # cold again: empty the caches
                        _reset(folder)
                    runs.append(run_job(sessions, folder, args.overrides))
                wall, _, code = min(runs)
                if any(r[2] for r in runs):
                    print(f"  job failed (exit {code}); its log: {folder / 'job.log'}")
                    print((folder / "job.log").read_text()[-2000:])
                rss = max(r[1] for r in runs)
                figures[sessions, warmth] = (wall, rss)
                print(f"{sessions:>8} {warmth:>6} {wall:>8.1f} {rss:>13.0f}")
    small, large = sizes
    for warmth in ("cold", "warm"):
        (t1, m1), (t2, m2) = figures[small, warmth], figures[large, warmth]
        verdict = "ok" if t2 / t1 <= args.factor else "OVER"
        added = large - small
        print(
            f"{warmth}: {args.factor}x sessions -> time x{t2 / t1:.2f} ({verdict}, at most "
            f"x{args.factor}), peak RSS {m1:.0f} -> {m2:.0f} MiB (x{m2 / m1:.2f}); per added "
            f"session {(t2 - t1) / added:.2f} s, {(m2 - m1) / added:+.2f} MiB"
        )


def _reset(folder: Path) -> None:
    """Empty a size's folder so the next run is cold again."""
    import shutil

    for child in folder.iterdir():
        if child.is_dir():
            shutil.rmtree(child)


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
