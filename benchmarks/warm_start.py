"""How long the offline default takes on a warm store, and where that time goes.

    python benchmarks/warm_start.py [--warm 3] [--keep]

Runs ``python -m benchmark`` (the default config, no overrides) in its own process in
a fresh temporary working directory: once cold (no session or probe cache, no MLflow
store), then ``--warm`` times warm (caches and store there), then once warm with
``tracking=disabled`` (what MLflow costs is the difference) and once with MLflow
imported before the job (so it logs in-process, as before the logging child of
``benchmark.tracking.logger_process``). Prints each run's wall and CPU time (user +
system of the process and its children), then one more warm run, instrumented, split
into phases by CPU time: interpreter and imports, Hydra composition and validation, the
tracking store checked, sessions loaded from the cache, probe sets from the cache,
compaction, answering/judging (with fact survival), the scorecard and run record, and
MLflow logging (the wait for the child's reply), then the child's own CPU. Baselines
(``python -c pass``, ``import benchmark``, ``import benchmark.run.job`` (no ``openai`` in it),
``import openai``,
``import mlflow`` and its SQLite store) are timed side by side in the same sitting.
Machines here are shared: read CPU seconds and ratios, and say what else was running
(the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docs_snippet

ROOT = Path(__file__).resolve().parents[1]

# The instrumented run: the real entry point, with CPU-time marks around each phase.
# Phases are wrapped only where the named function exists, so a renamed one is skipped.
_PHASES = r"""
import functools, importlib, sys, time
marks = [("interpreter start", 0.0)]
def mark(label):
    marks.append((label, time.process_time()))
import benchmark.__main__ as entry
mark("imports: hydra + entry point")
WRAP = [
    ("benchmark.config.schema", "validate", "validate"),
    ("benchmark.tracking.mlflow_store", "prepare_tracking", "tracking store ready (MLflow)"),
    ("benchmark.tracking.mlflow_store", "check_tracking", "tracking store checked (no MLflow)"),
    ("benchmark.transcript.sources", "load_or_generate", "sessions (cache)"),
    ("benchmark.run.pipeline", "load_or_generate", "probe sets (cache)"),
    ("benchmark.run.pipeline", "compact_point", "compaction"),
    ("benchmark.run.job", "run_job", "answer + judge + survival"),
    ("benchmark.run.job", "job_record", "scorecard + run record"),
    ("benchmark.__main__", "_log", "MLflow logging (and waiting for its child)"),
]
totals = {}
def wrap(module, name, label):
    mod = importlib.import_module(module)
    fn = getattr(mod, name, None)
    if fn is None:
        return
    @functools.wraps(fn)
    def timed(*a, **k):
        start = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            totals[label] = totals.get(label, 0.0) + time.process_time() - start
    setattr(mod, name, timed)
for module, name, label in WRAP:
    wrap(module, name, label)
mark("imports: job modules")
sys.argv = ["benchmark"]
try:
    entry.main()
finally:
    end = time.process_time()
    nested = {"answer + judge + survival": ("sessions (cache)", "probe sets (cache)", "compaction")}
    for outer, inner in nested.items():
        if outer in totals:
            totals[outer] -= sum(totals.get(i, 0.0) for i in inner)
    startup = marks[-1][1]
    print(f"PHASE imports (entry point + job modules)\t{startup:.3f}", file=sys.stderr)
    for label, seconds in totals.items():
        print(f"PHASE {label}\t{seconds:.3f}", file=sys.stderr)
    rest = end - startup - sum(totals.values())
    print(f"PHASE other (Hydra compose and run set-up, lazy imports)\t{rest:.3f}", file=sys.stderr)
    print(f"PHASE total CPU in process\t{end:.3f}", file=sys.stderr)
    import resource
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"PHASE MLflow child process, beside the job\t{child.ru_utime + child.ru_stime:.3f}",
          file=sys.stderr)
"""


# The job with MLflow imported before it starts: it then logs in its own process, as
# before the logging child (``benchmark.tracking.logger_process.wanted``).
_IN_PROCESS = (
    "import sys, runpy, mlflow; sys.argv = ['benchmark']; "
    "runpy.run_module('benchmark', run_name='__main__', alter_sys=True)"
)


def _run(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``cmd`` (CPU from the children's rusage), and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, cpu, done.stderr


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=3, help="warm runs after the cold one")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    docs_snippet.option(parser)
    args = parser.parse_args()
    py = sys.executable
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="warm_start_"))
    rows: list[tuple[str, float, float]] = []
    for name, code in [
        ("python -c pass", "pass"),
        ("import benchmark", "import benchmark"),
        ("import benchmark.run.job", "import benchmark.run.job"),
        ("import openai", "import openai"),
        ("import mlflow", "import mlflow"),
        ("import mlflow + its SQLite store", "import mlflow.store.tracking.sqlalchemy_store"),
    ]:
        wall, cpu, _ = _run([py, "-c", code], work)
        rows.append((name, wall, cpu))
    job = [py, "-m", "benchmark"]
    wall, cpu, _ = _run(job, work)
    rows.append(("python -m benchmark (cold)", wall, cpu))
    for i in range(args.warm):
        wall, cpu, _ = _run(job, work)
        rows.append((f"python -m benchmark (warm {i + 1})", wall, cpu))
    wall, cpu, _ = _run([*job, "tracking=disabled"], work)  # the same job without MLflow
    rows.append(("python -m benchmark tracking=disabled (warm)", wall, cpu))
    wall, cpu, _ = _run([py, "-c", _IN_PROCESS], work)  # MLflow loaded first: no child
    rows.append(("python -m benchmark, MLflow in-process (warm)", wall, cpu))
    _, _, phases = _run([py, "-c", _PHASES], work)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    width = max(len(r[0]) for r in rows)
    print(f"{'command':<{width}}  {'wall':>8}  {'CPU':>8}")
    for name, wall, cpu in rows:
        print(f"{name:<{width}}  {wall:6.2f} s  {cpu:6.2f} s")
    warm = [r for r in rows if r[0].startswith("python -m benchmark (warm")]
    if warm:
        best = min(warm, key=lambda r: r[1])
        print(f"best warm: {best[1]:.2f} s wall, {best[2]:.2f} s CPU (target: 5 s wall)")
    print("warm run, CPU seconds by phase (instrumented run):")
    for line in phases.splitlines():
        if line.startswith("PHASE "):
            label, seconds = line[6:].split("\t")
            print(f"  {label:<58} {float(seconds):6.2f} s")
    if args.keep:
        print(f"working directory kept: {work}")
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
