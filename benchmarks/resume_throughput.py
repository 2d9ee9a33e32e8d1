"""Resumes per second of the task-success arm against the stub, as a ratio of the ideal.

    python benchmarks/resume_throughput.py [--latency 0.2] [--in-flight 64] [--resumes 256]
        [--tasks retail/11,retail/20,mock/create_task_1]

Sessions are made first (scripted agent and customer, no latency, not timed). Then every
session is resumed from the uncompacted history at a point in its middle, ``--resumes`` in
all, ``--in-flight`` at once, through the arm's own path (``runs.resume``: the environment
rebuilt by replay in a thread, agent and customer calls on the shared LLM loop, tau2's
evaluator in a thread) against ``python -m benchmark.stub --scripted`` in a child process
with a fixed latency per call. The ideal is what the latency alone allows: each resume's
calls one after another, ``--in-flight`` resumes overlapping fully, i.e.
``in_flight / (calls per resume x latency)`` resumes per second. Needs the 'tau2' extra.
It reports, it does not gate.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import docs_snippet

from benchmark.llm import Endpoint, UsageLedger, close_all
from benchmark.llm.loop import run
from benchmark.stub import serve_in_subprocess
from benchmark.stub.server import OpenAIStub
from benchmark.task_success import tau2_env
from benchmark.task_success.roles import Role
from benchmark.task_success.runs import Players, generate, resume, uncompacted
from benchmark.task_success.scripted import ScriptedTau2


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--resumes", type=int, default=256)
    parser.add_argument("--tasks", default="retail/11,retail/20,mock/create_task_1")
    docs_snippet.option(parser)
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

        async def everything() -> list:
            slots = asyncio.Semaphore(args.in_flight)

            async def one(session, task, end):
                async with slots:
                    return await resume(
                        session, task, end, uncompacted(session.turns[:end]), cast, 40
                    )

            return await asyncio.gather(*(one(*p) for p in plan))

        start, cpu = time.perf_counter(), time.process_time()
        results = run(everything())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        close_all()
    calls = sum(u.calls for u in ledger.roles().values())
    failed = sum(r.reward is None for r in results)
    per_resume = calls / len(results)
    ideal = args.in_flight / (per_resume * args.latency)
    rate = len(results) / wall
    print(
        f"tasks: {args.tasks}; {len(results)} resumes, {args.in_flight} in flight, "
        f"{args.latency * 1000:.0f} ms per call"
    )
    print(f"calls per resume: {per_resume:.2f}; failed resumes: {failed}")
    print(f"wall {wall:.2f} s, CPU {cpu:.2f} s ({cpu / wall:.0%} of one core)")
    print(f"resumes per second: {rate:.2f}; ideal {ideal:.2f}; ratio of ideal {rate / ideal:.2f}")


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
