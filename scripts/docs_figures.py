"""Write the figures the docs show that a job produces, as snippets the pages include.

    python scripts/docs_figures.py           # rewrite docs/figures/*.md
    python scripts/docs_figures.py --check   # exit 1, naming them, when one is stale

A page never types a figure a command produces: it includes (``--8<--``) the snippet the
command wrote. This script runs the jobs behind them, offline and in this process:

- ``default_job.md``: the default job (``python -m benchmark``; here with
  ``tracking=disabled``, which prints the same scorecard): its sessions, points and
  probes per type, and the scorecard itself;
- ``swe_agent_ceiling.md``: the control arm (``policy=none``) on the SWE-agent
  trajectories in ``../shared/data/swe-agent`` at the small window the docs use, per
  probe type, and ``swe_agent_next_action.md``: which of its points get a next-action
  probe (both written only where that folder exists);
- ``task_success.md``: the offline task-success job (``+experiment=task_success``, the
  scripted stub; needs the ``tau2`` extra, skipped without it): its scorecard, whose last
  line gives the turns and tokens a resume costs;
- ``sweep_comparison.md`` (with ``--sweep``: a minute or so): the comparison the
  five-policy offline sweep prints at its end, run as a user runs it (its own process,
  a fresh store and cache in a temporary folder).

The benchmark scripts' figures (``benchmarks/*.py --write-docs``) go to
``docs/figures/benchmarks/``; ``tests/test_docs.py`` checks the default job's snippet
against a fresh run, so a change of the default scorecard fails until this is rerun.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
FIGURES = ROOT / "docs" / "figures"
SWE_AGENT = ROOT.parent / "shared" / "data" / "swe-agent"
SWE_AGENT_WINDOW = ["compaction.context_window=1500", "compaction.tail_tokens=200"]
HEADER = "<!-- written by `python scripts/docs_figures.py`; rerun it to refresh, do not edit -->"


def run(overrides: list[str], cache_dir: Path | None) -> Any:
    """The job's result, run in this process as ``python -m benchmark`` runs it.

    The one place that imports modules whose paths the package layout moves."""
    from hydra import compose, initialize_config_dir

    from benchmark.config.schema import validate
    from benchmark.run.pipeline import run_job

    cache = [f"cache.dir={cache_dir}"] if cache_dir else ["cache.dir=null"]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["tracking=disabled", *cache, *overrides])
    return run_job(validate(cfg))


def scorecard(result: Any) -> str:
    """The scorecard as the job prints it to a pipe (160 columns, no colour)."""
    from rich.console import Console

    from benchmark.scoring.scorecard import render

    console = Console(file=io.StringIO(), width=160, color_system=None)
    text = render(result, console)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def counts(result: Any) -> dict[str, Any]:
    metrics = result.metrics()
    by_type = Counter(r.probe.type for r in result.probe_results)
    return {
        "transcripts": len(result.transcripts),
        "points": int(metrics["points/total"]),
        "probes": int(metrics["probes/total"]),
        "repeated": int(metrics.get("probes/repeated", 0)),
        "by_type": dict(sorted(by_type.items())),
    }


def default_job(cache_dir: Path | None = None) -> str:
    """``docs/figures/default_job.md``: counts and the scorecard of the default job."""
    result = run([], cache_dir)
    c = counts(result)
    per_type = ", ".join(f"{t} {n}" for t, n in c["by_type"].items())
    return (
        f"{HEADER}\n"
        f"The default job (`python -m benchmark`): {c['transcripts']} generated sessions, "
        f"{c['points']} compaction points, {c['probes']} probes ({per_type}; "
        f"{c['repeated']} repeats of an earlier point's probe left out).\n\n"
        f"```text\n{scorecard(result)}\n```\n"
    )


def swe_agent_ceiling() -> str | None:
    """``docs/figures/swe_agent_ceiling.md``, or None without the trajectories."""
    if not SWE_AGENT.is_dir():
        return None
    result = run(
        ["policy=none", "transcript=files", f"transcript.path={SWE_AGENT}", *SWE_AGENT_WINDOW],
        None,
    )
    c = counts(result)
    metrics = result.metrics()
    rows = "\n".join(
        f"| `{t}` | {n} | {metrics[f'type/{t}']:.2f} |" for t, n in c["by_type"].items()
    )
    command = "python -m benchmark policy=none transcript=files "
    command += "transcript.path=../shared/data/swe-agent " + " ".join(SWE_AGENT_WINDOW)
    return (
        f"{HEADER}\n"
        f"`{command}`: {c['transcripts']} trajectories, {c['points']} compaction points, "
        f"{c['probes']} probes ({c['repeated']} repeats of an earlier point's probe left "
        f"out), overall {metrics['headline/overall']:.2f}.\n\n"
        f"| probe type | probes | score (0-5) |\n|---|---:|---:|\n{rows}\n"
    )


def swe_agent_next_action() -> str | None:
    """``docs/figures/swe_agent_next_action.md``: which points get a next-action probe."""
    if not SWE_AGENT.is_dir():
        return None
    overrides = ["policy=none", "transcript=files", f"transcript.path={SWE_AGENT}"]
    result = run([*overrides, *SWE_AGENT_WINDOW, "probe.types=[next_action]"], None)
    points = result.points
    skipped = Counter(p.next_action_skipped for p in points if p.next_action_skipped)
    asked = {r.probe.transcript_id for r in result.probe_results}
    files = {p.point.transcript_id for p in points}
    reasons = ", ".join(f"{n} `{why}`" for why, n in sorted(skipped.items())) or "none"
    command = "python -m benchmark policy=none transcript=files "
    command += "transcript.path=../shared/data/swe-agent " + " ".join(SWE_AGENT_WINDOW)
    return (
        f"{HEADER}\n"
        f"`{command} probe.types=[next_action]`: {len(points) - sum(skipped.values())} of "
        f"{len(points)} points get a next-action probe (skipped: {reasons}); "
        f"{len(asked)} of {len(files)} files have at least one.\n"
    )


SWEEP = "none,truncate,observation_mask,tool_clear,anchor_index"


def job_output(argv: list[str], what: str) -> str:
    """The stdout of ``python -m benchmark *argv`` run as a user runs it: its own process,
    every folder it writes in a temporary one (``{tmp}`` in ``argv``)."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "benchmark", *(a.replace("{tmp}", tmp) for a in argv)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def sweep_comparison() -> str:
    """``docs/figures/sweep_comparison.md``: the table a five-policy sweep prints."""
    argv = ["-m", f"policy={SWEEP}", "report.auto=false", "hydra.sweep.dir={tmp}/multirun"]
    argv += ["cache.dir={tmp}/cache", "tracking.store_dir={tmp}/mlruns"]
    stdout = job_output(argv, "the sweep")
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Sweep comparison"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].strip())
    table = "\n".join(lines[start:end])
    return (
        f"{HEADER.replace('docs_figures.py', 'docs_figures.py --sweep')}\n"
        f"`python -m benchmark -m policy={SWEEP}` prints at its end:\n\n"
        f"```text\n{table}\n```\n"
    )


TASK_SUCCESS = ["+experiment=task_success", "tracking=disabled"]


def task_success() -> str | None:
    """``docs/figures/task_success.md``: what the offline task-success job prints (its
    own process, in a temporary folder); None without the tau2 extra."""
    import importlib.util

    if importlib.util.find_spec("tau2") is None:
        return None
    stdout = job_output([*TASK_SUCCESS, "hydra.run.dir={tmp}/out"], "the task-success job")
    shown = [line for line in stdout.splitlines() if not line.startswith("[20")]
    text = "\n".join(shown).strip("\n")
    return (
        f"{HEADER}\n`python -m benchmark {' '.join(TASK_SUCCESS)}` (the scripted stub: "
        f"plumbing, not a measurement) prints:\n\n```text\n{text}\n```\n"
    )


def outputs(cache_dir: Path | None = None, sweep: bool = False) -> dict[Path, str]:
    found = {FIGURES / "default_job.md": default_job(cache_dir)}
    ceiling = swe_agent_ceiling()
    if ceiling is not None:
        found[FIGURES / "swe_agent_ceiling.md"] = ceiling
        found[FIGURES / "swe_agent_next_action.md"] = swe_agent_next_action() or ""
    task = task_success()
    if task is not None:
        found[FIGURES / "task_success.md"] = task
    if sweep:
        found[FIGURES / "sweep_comparison.md"] = sweep_comparison()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a snippet is stale")
    parser.add_argument("--sweep", action="store_true", help="also the five-policy sweep")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        written = outputs(Path(tmp), args.sweep)
    stale = [p for p, text in written.items() if not p.exists() or p.read_text() != text]
    if args.check:
        if stale:
            names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
            print(f"stale: {names}; run: python scripts/docs_figures.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(written[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
