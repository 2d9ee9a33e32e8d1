"""Where the time of one default job goes, stage by stage, measured side by side in one run.

    python benchmarks/stage_times.py [--sessions 2] [--target-tokens 240000]

Prints wall time per stage for every LLM-free policy, and the ratio of a warm
probe cache to a cold one. Not a test: machines here are shared and noisy, so
read the ratios, not the absolute seconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmark.answerer import ExtractiveAnswerer
from benchmark.compaction import CompactionConfig, find_points, segments
from benchmark.judge import ReferenceJudge
from benchmark.pipeline import compact, evaluate
from benchmark.policy import (
    AnchorIndex,
    NoCompaction,
    ObservationMask,
    ToolResultClearing,
    Truncate,
)
from benchmark.probe.cache import load_or_generate
from benchmark.probe.config import ProbeConfig
from benchmark.rubric import Rubric
from benchmark.transcript.synthetic import generate

POLICIES = {
    "none": NoCompaction(),
    "truncate": Truncate(recent_tokens=20_000),
    "observation_mask": ObservationMask(),
    "tool_clear": ToolResultClearing(),
    "anchor_index": AnchorIndex(),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--target-tokens", type=int, default=240_000)
    args = parser.parse_args()

    import yaml

    rubric_file = Path(__file__).resolve().parents[1] / "conf" / "rubric" / "seed.yaml"
    rubric = Rubric.model_validate(yaml.safe_load(rubric_file.read_text()))
    times: dict[str, float] = {}

    def timed(stage: str, fn, *a):
        start = time.perf_counter()
        out = fn(*a)
        times[stage] = times.get(stage, 0.0) + time.perf_counter() - start
        return out

    transcripts = [
        timed("generate", generate, seed, args.target_tokens) for seed in range(args.sessions)
    ]
    tokens = sum(timed("count tokens", lambda t: t.total_tokens, t) for t in transcripts)
    points = [
        (t, p)
        for t in transcripts
        for p in timed("find points", find_points, t, CompactionConfig())
    ]
    config = ProbeConfig()
    with tempfile.TemporaryDirectory() as cache:
        probes = [
            timed("probes (cold cache)", load_or_generate, t, p, config, Path(cache))
            for t, p in points
        ]
        for t, p in points:
            timed("probes (warm cache)", load_or_generate, t, p, config, Path(cache))
    answerer, judge = ExtractiveAnswerer(), ReferenceJudge()
    n_probes = sum(len(ps) for ps in probes)
    for name, policy in POLICIES.items():
        for (t, p), ps in zip(points, probes, strict=True):
            context = timed(f"{name}: compact", compact, policy, segments(t, p))
            for probe in ps:
                timed(f"{name}: answer+judge", evaluate, probe, context, answerer, judge, rubric)

    print(
        f"{args.sessions} session(s), {tokens:,} tokens, {len(points)} point(s), "
        f"{n_probes} probes per policy"
    )
    width = max(map(len, times))
    for stage, seconds in times.items():
        print(f"  {stage:<{width}}  {seconds:7.3f} s")
    cold, warm = times["probes (cold cache)"], times["probes (warm cache)"]
    print(f"probe cache: warm/cold = {warm / cold:.3f}")


if __name__ == "__main__":
    main()
