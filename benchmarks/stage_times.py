"""Where the time of one default job goes, stage by stage, measured side by side in one run.

    python benchmarks/stage_times.py [--sessions N] [--target-tokens T] [--policies all]

Defaults to the default job's sessions and probes (conf/transcript/synthetic.yaml,
conf/probe/default.yaml; seed 0). Prints wall and CPU time per stage (CPU time
is steadier on a busy machine), cold (empty caches: sessions generated,
redacted and counted, probes extracted) and warm (read back from the caches,
as a second run does), and compaction plus answering and judging for
``anchor_index`` (``--policies all``: every LLM-free policy). Not a test:
machines here are shared and noisy, so read the ratios, not the absolute seconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import docs_snippet
import yaml

from benchmark.answerer import ExtractiveAnswerer
from benchmark.judge import ReferenceJudge
from benchmark.policy import (
    AnchorIndex,
    NoCompaction,
    ObservationMask,
    ToolResultClearing,
    Truncate,
)
from benchmark.probe.config import ProbeConfig
from benchmark.probe.set_cache import load_or_generate as load_probes
from benchmark.redaction import build_redactor
from benchmark.rubric import Rubric
from benchmark.run.compaction import CompactionConfig, find_points, segments
from benchmark.run.evaluation import evaluate
from benchmark.run.scheduling import compact
from benchmark.transcript.generated import load_or_generate as load_session
from benchmark.transcript.generated import session_seed

CONF = Path(__file__).resolve().parents[1] / "conf"
POLICIES = {
    "anchor_index": AnchorIndex(),
    "none": NoCompaction(),
    "truncate": Truncate(recent_tokens=20_000),
    "observation_mask": ObservationMask(),
    "tool_clear": ToolResultClearing(),
}


def main() -> None:
    default = yaml.safe_load((CONF / "transcript" / "synthetic.yaml").read_text())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=default["sessions"])
    parser.add_argument("--target-tokens", type=int, default=default["target_tokens"])
    parser.add_argument("--policies", choices=("anchor_index", "all"), default="anchor_index")
    docs_snippet.option(parser)
    args = parser.parse_args()

    rubric = Rubric.model_validate(yaml.safe_load((CONF / "rubric" / "seed.yaml").read_text()))
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(stage: str, fn, *a):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn(*a)
        times[stage] = times.get(stage, 0.0) + time.perf_counter() - start
        cpu[stage] = cpu.get(stage, 0.0) + time.process_time() - start_cpu
        return out

    seeds = [session_seed(0, i) for i in range(args.sessions)]
    tokens = args.target_tokens
    redactor = build_redactor()
    probe = yaml.safe_load((CONF / "probe" / "default.yaml").read_text())
    config = ProbeConfig(types=probe["types"], per_type=probe["per_type"])
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder)
        for warmth in ("cold", "warm"):
            transcripts = [
                timed(f"sessions ({warmth})", load_session, s, tokens, f"s{i}", redactor, cache)[0]
                for i, s in enumerate(seeds)
            ]
            points = [
                (t, p)
                for t in transcripts
                for p in timed("find points", find_points, t, CompactionConfig())
            ]
            probes = [
                timed(f"probes ({warmth})", load_probes, t, p, config, cache) for t, p in points
            ]
    answerer, judge = ExtractiveAnswerer(), ReferenceJudge()
    n_probes = sum(len(ps) for ps in probes)
    chosen = POLICIES if args.policies == "all" else {"anchor_index": POLICIES["anchor_index"]}
    for name, policy in chosen.items():
        for (t, p), ps in zip(points, probes, strict=True):
            context = timed(f"{name}: compact", compact, policy, segments(t, p))
            for probe in ps:
                timed(f"{name}: answer+judge", evaluate, probe, context, answerer, judge, rubric)

    total = sum(t.total_tokens for t in transcripts)
    print(
        f"{args.sessions} session(s), {total:,} tokens, {len(points)} point(s), "
        f"{n_probes} probes per policy"
    )
    width = max(map(len, times))
    print(f"  {'stage':<{width}}  {'wall':>9}  {'CPU':>9}")
    for stage, seconds in times.items():
        print(f"  {stage:<{width}}  {seconds:7.3f} s  {cpu[stage]:7.3f} s")
    cold = times["sessions (cold)"] + times["probes (cold)"]
    warm = times["sessions (warm)"] + times["probes (warm)"]
    print(f"sessions + probes: warm/cold = {warm / cold:.3f}")


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
