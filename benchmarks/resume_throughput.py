"""Resumes per second of the task-success arm against the stub, as a ratio of the ideal.

    python benchmarks/resume_throughput.py [--latency 0.2] [--in-flight 64] [--resumes 256]
        [--tasks retail/11,retail/20,mock/create_task_1] [--no-replay-cache]

Sessions are made first (scripted agent and customer, no latency, not timed). Then every
session is resumed from the uncompacted history at a point in its middle, ``--resumes`` in
all, ``--in-flight`` at once, through the arm's own path (``runs.resume``: the environment
rebuilt by replay in a thread over the task's shared copy-on-write database, agent and
customer calls on the shared LLM loop, tool calls on the loop, tau2's evaluator in a
thread) against ``python -m benchmark.stub --scripted`` in a child process with a fixed
latency per call. One resume per session runs first, untimed (the stub's tau2 import, the
domain's frozen database, the gold state); the replay cache is emptied after it, so the
timed run replays each point once and the rest start from that replay, as the control and
the compacted arms of a job do (``--no-replay-cache``: every resume replays).

The ideal is what the latency alone allows: each resume's calls one after another,
``--in-flight`` resumes overlapping fully, i.e. ``in_flight / (calls per resume x latency)``
resumes per second. Resumes start the longest expected first (``runs.longest_first``, as
the job's arm does); with resumes of unequal length the last ones still run with fewer in
flight, so the schedule bound (the same plan, order and slots, every call taking exactly
the latency, no CPU) is printed too. Each part's time (LLM calls, replay, tool calls,
reward: wall summed over resumes, and CPU) shows where the rest goes. Needs the 'tau2'
extra. It reports, it does not gate.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import docs_snippet

from benchmark.llm import Endpoint, UsageLedger, close_all
from benchmark.llm.loop import run
from benchmark.stub import serve_in_subprocess
from benchmark.stub.server import OpenAIStub
from benchmark.task_success import tau2_env
from benchmark.task_success.roles import Role
from benchmark.task_success.runs import (
    Players,
    generate,
    longest_first,
    resume,
    turns_left,
    uncompacted,
)
from benchmark.task_success.scripted import ScriptedTau2

PARTS: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])  # part -> n, wall, CPU


def timed(part: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` counting its wall and its thread's CPU under ``part``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            entry = PARTS[part]
            entry[0] += 1
            entry[1] += time.perf_counter() - wall
            entry[2] += time.thread_time() - cpu

    return wrapper


def timed_async(part: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """An async ``method`` counting its wall (its CPU is the loop's, not its own)."""

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall = time.perf_counter()
        try:
            return await method(*args, **kwargs)
        finally:
            entry = PARTS[part]
            entry[0] += 1
            entry[1] += time.perf_counter() - wall

    return wrapper


def instrument() -> None:
    """Time the arm's parts where they are looked up at call time (module attributes)."""
    tau2_env.replay = timed("replay (thread)", tau2_env.replay)
    tau2_env.call = timed("tool calls (loop)", tau2_env.call)
    tau2_env.reward = timed("reward (thread)", tau2_env.reward)
    Role.act = timed_async("agent calls", Role.act)
    Role.say = timed_async("customer calls", Role.say)


def players(base_url: str, ledger: UsageLedger, in_flight: int) -> Players:
    def endpoint(name: str) -> Endpoint:
        return Endpoint(
            name=name,
            model="scripted",
            base_url=base_url,
            api_key_env=None,
            max_concurrency=in_flight,
            timeout_s=60,
        )

    return Players(
        Role(endpoint("a"), "agent", ledger, None), Role(endpoint("u"), "user", ledger, None)
    )


def schedule_bound(steps: list[int], in_flight: int, latency: float) -> float:
    """The wall of the plan if every call took exactly ``latency`` and nothing else took
    time: resumes start as slots free up, in ``runs.longest_first``'s order."""
    slots = [0.0] * in_flight
    end = 0.0
    for n in steps:
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + n * latency)
        end = max(end, start + n * latency)
    return end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--resumes", type=int, default=256)
    parser.add_argument("--tasks", default="retail/11,retail/20,mock/create_task_1")
    docs_snippet.option(parser)
    parser.add_argument("--no-replay-cache", action="store_true", help="every resume replays")
    args = parser.parse_args()

    refs = [r.partition("/") for r in args.tasks.split(",")]
    found = [(d, tau2_env.task(d, i)) for d, _, i in refs]
    stub = OpenAIStub(record=False)
    stub.reply = ScriptedTau2()
    stub.start()
    try:
        made = players(stub.base_url, UsageLedger(), 64)

        async def sessions_made() -> list:
            return list(await asyncio.gather(*(generate(d, t, made, 60) for d, t in found)))

        sessions = run(sessions_made())
    finally:
        close_all()
        stub.stop()
    plan = []  # (session, task, end): a point in each session's middle, round robin
    for n in range(args.resumes):
        session, (_, task) = sessions[n % len(sessions)], found[n % len(found)]
        turns = session.turns[:-2]  # a point before the conversation's last exchange
        ends = [i + 1 for i, t in enumerate(turns) if t.role in ("tool", "user") and i]
        plan.append((session, task, ends[len(ends) // 2]))

    with serve_in_subprocess(latency=args.latency, scripted=True) as base_url:
        ledger = UsageLedger()
        cast = players(base_url, ledger, args.in_flight)

        async def resumed(plan: list, in_flight: int) -> list:
            jobs = [
                (turns_left(s, end), resume(s, t, end, uncompacted(s.turns[:end]), cast, 40))
                for s, t, end in plan
            ]
            return await longest_first(jobs, in_flight)

        run(resumed(plan[: len(sessions)], len(sessions)))  # warm-up, untimed
        tau2_env.REPLAYS.clear()
        if args.no_replay_cache:
            tau2_env.REPLAYS.size = 0
        warm_calls = sum(u.calls for u in ledger.roles().values())
        instrument()
        start, cpu = time.perf_counter(), time.process_time()
        results = run(resumed(plan, args.in_flight))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        close_all()
    calls = sum(u.calls for u in ledger.roles().values()) - warm_calls
    failed = sum(r.reward is None for r in results)
    per_resume = calls / len(results)
    ideal = args.in_flight / (per_resume * args.latency)
    order = sorted(range(len(plan)), key=lambda i: -turns_left(plan[i][0], plan[i][2]))
    bound = schedule_bound([results[i].steps for i in order], args.in_flight, args.latency)
    rate = len(results) / wall
    print(
        f"tasks: {args.tasks}; {len(results)} resumes, {args.in_flight} in flight, "
        f"{args.latency * 1000:.0f} ms per call; replay cache "
        f"{'off' if args.no_replay_cache else 'on'}"
    )
    print(f"calls per resume: {per_resume:.2f}; failed resumes: {failed}")
    print(f"wall {wall:.2f} s, CPU {cpu:.2f} s ({cpu / wall:.0%} of one core)")
    for part, (n, spent, used) in PARTS.items():
        cpu_text = f", CPU {used:.2f} s" if used else ""
        print(f"  {part}: {n:.0f}, wall {spent:.2f} s ({spent / n * 1000:.1f} ms each){cpu_text}")
    print(f"resumes per second: {rate:.2f}; ideal {ideal:.2f}; ratio of ideal {rate / ideal:.2f}")
    print(
        f"schedule bound {bound:.2f} s ({len(results) / bound:.2f} resumes per second); "
        f"ratio of it {bound / wall:.2f}"
    )


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
