"""CPU seconds of each offline stage of the default job, and a digest of everything it scored.

    python benchmarks/offline_stages.py [--cache DIR] [--rounds 3] [-- OVERRIDES]

Runs ``benchmark.run.pipeline.run_job`` on the default config (``tracking=disabled``, plus
any overrides), once to fill the session and probe caches in ``--cache`` (a temporary
folder unless given), then ``--rounds`` times warm, each in a fresh process (as a warm
``python -m benchmark`` starts with nothing in memory). Each round prints the CPU time
spent in sessions (cache), probe sets (cache), compaction, answering, judging and fact
survival, and a sha256 over every probe's question, answer, judgment (criterion,
score, reasoning), score and survival. Two checkouts give the same digest when a change
left every output as it was: run this script from each (``PYTHONPATH`` selects the
code) and compare the figures side by side.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docs_snippet
from hydra import compose, initialize_config_dir

CONF = Path(__file__).resolve().parents[1] / "conf"
# (module, class or None, function, stage): what is timed, by the stage it belongs to.
STAGES = [
    ("benchmark.transcript.sources", None, "load_or_generate", "sessions (cache)"),
    ("benchmark.run.pipeline", None, "load_or_generate", "probe sets (cache)"),
    ("benchmark.run.pipeline", None, "compact_point", "compaction"),
    ("benchmark.answerer.extractive", "ExtractiveAnswerer", "answer", "answering"),
    ("benchmark.judge.reference", "ReferenceJudge", "judge", "judging"),
    ("benchmark.scoring.survival", "ContextFacts", "__init__", "fact survival"),
    ("benchmark.scoring.survival", "ContextFacts", "survival", "fact survival"),
]


def _timed(totals: dict[str, float]) -> None:
    """Wrap each stage function so its CPU time adds to ``totals[stage]``."""
    for module, owner_name, name, stage in STAGES:
        mod = importlib.import_module(module)
        owner = getattr(mod, owner_name) if owner_name else mod
        fn = getattr(owner, name)

        def timed(*args: Any, _fn: Any = fn, _stage: str = stage, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return _fn(*args, **kwargs)
            finally:
                totals[_stage] = totals.get(_stage, 0.0) + time.process_time() - start

        setattr(owner, name, functools.wraps(fn)(timed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="session and probe cache (default: temporary)")
    parser.add_argument("--rounds", type=int, default=3, help="warm rounds")
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help="Hydra overrides after --")
    docs_snippet.option(parser)
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="offline_stages_"))
    if args.round:  # one round, in this process
        _round(args.round, cache, args.overrides)
        return
    for round_ in range(args.rounds + 1):  # round 0 fills the caches
        cmd = [sys.executable, __file__, "--cache", str(cache), "--round", str(round_ or -1)]
        done = subprocess.run(
            [*cmd, "--", *args.overrides], check=True, stdout=subprocess.PIPE, text=True
        )
        print(done.stdout, end="", flush=True)  # through this process's stdout (--write-docs)


def _round(round_: int, cache: Path, overrides: list[str]) -> None:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            config_name="config", overrides=["tracking=disabled", f"cache.dir={cache}", *overrides]
        )
    from benchmark.config.schema import validate
    from benchmark.run.pipeline import run_job

    config = validate(cfg)
    if round_ < 0:
        run_job(config)  # fills the caches (a cold run is not what this measures)
        return
    totals: dict[str, float] = {}
    _timed(totals)
    outputs = _Digest()
    start = time.process_time()
    run_job(config, sink=outputs.point)
    whole = time.process_time() - start
    stages = "  ".join(f"{stage} {seconds:.3f}" for stage, seconds in totals.items())
    print(f"round {round_}: {stages}  run_job {whole:.3f} s CPU")
    print(f"round {round_}: {outputs.probes} probes, sha256 {outputs.sha.hexdigest()}")


class _Digest:
    """A job sink hashing every probe's question, answer, judgment, score and survival."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.probes = 0

    def point(self, point: Any) -> Any:
        for r in point.probes:
            self.probes += 1
            judged = [(c.criterion, c.score, c.reasoning) for c in r.judgment.results]
            row = [r.probe.question, r.answer.text, r.answer.failed, judged, r.score, r.survival]
            self.sha.update(json.dumps(row, default=str).encode())
        return point


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
