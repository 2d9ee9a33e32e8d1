"""How close our LLM client gets to the ideal call rate, against a loopback server.

    python benchmarks/llm_throughput.py [--latency 0.2] [--calls 640] [--seq-calls 128]
        [--probes 320] [--no-pipeline]

The stub runs in a child process with a fixed per-call latency and no faults,
so everything measured here in this process is our own code: the client, the
SDK over aiohttp, the retry loop, the ledger, the cache. Each figure is a ratio
against what the latency alone allows; targets come from issue 4. It reports,
it does not gate: the exit code is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docs_snippet
from rich.console import Console
from rich.table import Table

from benchmark.llm import Endpoint, LLMClient, UsageLedger, close_all
from benchmark.llm.loop import run
from benchmark.llm.reply_cache import ResponseCache
from benchmark.probe.models import Probe
from benchmark.stub import serve_in_subprocess


@dataclass(frozen=True)
class Burst:
    """One timed batch of calls: wall and CPU seconds of this process, calls actually sent."""

    calls: int
    sent: int
    wall: float
    cpu: float

    @property
    def rate(self) -> float:
        return self.calls / self.wall


@dataclass(frozen=True)
class Row:
    figure: str
    value: str
    target: str = "-"
    ok: bool | None = None


def endpoint(base_url: str, concurrency: int) -> Endpoint:
    return Endpoint(
        name="stub",
        model="stub-model",
        base_url=base_url,
        api_key_env=None,
        max_concurrency=concurrency,
        max_tokens=16,
        max_retries=0,  # a failure here is a broken benchmark, not something to smooth over
        timeout_s=60,
    )


def burst(client: LLMClient, n: int, tag: str, sequential: bool = False) -> Burst:
    """``n`` short chat calls with distinct prompts, all at once (the endpoint's limit
    applies) or one after another; times them from this thread."""

    def prompt(i: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"{tag} call {i}: reply with one word"}]

    async def together() -> None:
        await asyncio.gather(*(client.acomplete(prompt(i)) for i in range(n)))

    async def in_turn() -> None:
        for i in range(n):
            await client.acomplete(prompt(i))

    before = client.ledger.metrics().get("llm/calls", 0)
    wall, cpu = time.perf_counter(), time.process_time()
    run(in_turn() if sequential else together())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sent = int(client.ledger.metrics().get("llm/calls", 0) - before)
    return Burst(calls=n, sent=sent, wall=wall, cpu=cpu)


def fresh_client(base_url: str, concurrency: int, cache: ResponseCache | None = None) -> LLMClient:
    """A client with its own ledger and an open pool: one warm-up wave is sent first, so
    connection setup is not timed."""
    client = LLMClient(endpoint(base_url, concurrency), "bench", UsageLedger())
    burst(client, concurrency, f"warm-up c={concurrency}")
    client.cache = cache
    return client


def throughput(
    base_url: str, latency: float, calls: int, repeats: int = 3
) -> tuple[list[Row], Burst]:
    """(a) calls/s against ``c / latency`` at c = 1, 16, 64: the median of ``repeats``
    bursts (this machine is shared and noisy), with the range; the median c=64 burst
    is kept for (d)."""
    rows, last = [], None
    for c in (1, 16, 64):
        n = max(20, calls * c // 64)
        client = fresh_client(base_url, c)
        bursts = sorted(
            (burst(client, n, f"rate c={c} #{k}") for k in range(repeats)), key=lambda b: b.rate
        )
        close_all()
        last = bursts[len(bursts) // 2]
        ideal = c / latency
        ratio = last.rate / ideal
        spread = f"{bursts[0].rate / ideal:.3f}-{bursts[-1].rate / ideal:.3f}"
        target, ok = ("≥ 0.90", ratio >= 0.9) if c == 64 else ("-", None)
        rows.append(
            Row(
                f"(a) calls/s at c={c}, median of {repeats} x {n} calls",
                f"{last.rate:.1f} / {ideal:.0f} = {ratio:.3f} (range {spread})",
                target,
                ok,
            )
        )
    assert last is not None
    return rows, last


def overlap(base_url: str, calls: int) -> list[Row]:
    """(b) the same workload sequential vs 64 at once: ratio of wall times."""
    client = fresh_client(base_url, 64)
    seq = burst(client, calls, "overlap sequential", sequential=True)
    conc = burst(client, calls, "overlap concurrent")
    close_all()
    ratio = seq.wall / conc.wall
    value = f"{seq.wall:.2f} s / {conc.wall:.3f} s = {ratio:.1f}x"
    return [Row(f"(b) sequential / concurrent wall, {calls} calls", value, "≥ 30x", ratio >= 30)]


def caching(base_url: str, calls: int) -> list[Row]:
    """(c) a cold run filling a reply cache, then the same calls again from it."""
    with tempfile.TemporaryDirectory() as folder, ResponseCache(folder) as cache:
        client = fresh_client(base_url, 64, cache)
        cold = burst(client, calls, "cache")
        warm = burst(client, calls, "cache")
        close_all()
    ratio = warm.wall / cold.wall
    return [
        Row("(c) calls sent on the warm rerun", f"{warm.sent} of {calls}", "0", warm.sent == 0),
        Row(
            "(c) warm / cold wall",
            f"{warm.wall:.3f} s / {cold.wall:.2f} s = {ratio:.3f}",
            "≤ 0.10",
            ratio <= 0.10,
        ),
    ]


def cpu_cost(run64: Burst, latency: float) -> list[Row]:
    """(d) CPU of this process per call at c=64; a core is saturated at ``latency / 64``."""
    per_call = run64.cpu / run64.calls * 1000
    budget = latency / 64 * 1000
    share = run64.cpu / run64.wall
    return [
        Row(
            "(d) client CPU per call at c=64",
            f"{per_call:.2f} ms ({share:.0%} of a core)",
            f"≤ {budget:.2f} ms (a core at ideal)",
            per_call <= budget,
        )
    ]


def pipeline(base_url: str, latency: float, probes: int, in_flight: int = 64) -> list[Row]:
    """(e) probes through ``aevaluate`` (LLM answerer, then LLM judge) against the scripted
    stub: two calls per probe in turn, so the ideal is ``in_flight / (2 * latency)``."""
    import yaml

    from benchmark.answerer.llm import LLMAnswerer
    from benchmark.judge.llm import LLMJudge
    from benchmark.policy import Truncate
    from benchmark.probe.config import ProbeConfig
    from benchmark.probe.set_cache import load_or_generate
    from benchmark.rubric import Rubric
    from benchmark.run.compaction import CompactionConfig, find_points, segments
    from benchmark.run.evaluation import aevaluate
    from benchmark.run.scheduling import compact
    from benchmark.transcript.synthetic import generate

    rubric_file = Path(__file__).resolve().parents[1] / "conf" / "rubric" / "seed.yaml"
    rubric = Rubric.model_validate(yaml.safe_load(rubric_file.read_text()))
    transcript = generate(seed=0, target_tokens=30_000)
    config = CompactionConfig(context_window=16_000, tail_tokens=2_500)
    point = find_points(transcript, config)[0]
    found = load_or_generate(transcript, point, ProbeConfig(), None)
    context = compact(Truncate(recent_tokens=4_000), segments(transcript, point))
    # A distinct question per probe: the same request twice would be another workload.
    chosen = [
        found[i % len(found)].model_copy(
            update={"question": f"{found[i % len(found)].question} (#{i})"}
        )
        for i in range(probes)
    ]
    ledger = UsageLedger()
    ep = endpoint(base_url, in_flight)
    answerer = LLMAnswerer(ep, ledger=ledger)
    judge = LLMJudge(ep, ledger=ledger)

    async def evaluate_all() -> list[bool]:
        slots = asyncio.Semaphore(in_flight)

        async def one(probe: Probe) -> bool:
            async with slots:
                result = await aevaluate(probe, context, answerer, judge, rubric)
                return result.failed

        return await asyncio.gather(*(one(p) for p in chosen))

    wall, cpu = time.perf_counter(), time.process_time()
    failed = run(evaluate_all())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    close_all()
    sent = int(ledger.metrics().get("llm/calls", 0))
    rate, ideal = probes / wall, in_flight / (2 * latency)
    return [
        Row(
            f"(e) probes/s via aevaluate, {probes} probes, {in_flight} in flight",
            f"{rate:.1f} / {ideal:.0f} = {rate / ideal:.3f}",
        ),
        Row(
            "(e) client CPU per probe (answer + judge)",
            f"{cpu / probes * 1000:.2f} ms; {sent} calls, {sum(failed)} failed",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="server delay per call, s")
    parser.add_argument("--calls", type=int, default=640, help="calls at c=64 (fewer at lower c)")
    parser.add_argument("--seq-calls", type=int, default=128, help="workload of (b)")
    parser.add_argument("--probes", type=int, default=320, help="probes of (e)")
    parser.add_argument("--no-pipeline", action="store_true", help="skip (e)")
    docs_snippet.option(parser)
    args = parser.parse_args()

    rows: list[Row] = []
    with serve_in_subprocess(latency=args.latency) as base_url:
        found, run64 = throughput(base_url, args.latency, args.calls)
        rows += found
        rows += overlap(base_url, args.seq_calls)
        rows += caching(base_url, args.calls)
        rows += cpu_cost(run64, args.latency)
    if not args.no_pipeline:
        with serve_in_subprocess(latency=args.latency, scripted=True) as base_url:
            rows += pipeline(base_url, args.latency, args.probes)

    table = Table(title=f"LLM client throughput, loopback stub, {args.latency * 1000:.0f} ms/call")
    for column in ("figure", "value", "target", "result"):
        table.add_column(column)
    for row in rows:
        result = "-" if row.ok is None else ("PASS" if row.ok else "MISS")
        table.add_row(row.figure, row.value, row.target, result)
    Console(width=max(Console().width, 110)).print(table)


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
