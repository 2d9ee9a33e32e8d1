"""inspect_ai's equivalent of our job's LLM phase, timed at the same loopback server.

    python benchmarks/peer_inspect.py [--samples 500] [--latency 0.2] [--concurrency 64]
        [--context-tokens 20000] [--python PATH] [--log-samples]

Each sample is about ``--context-tokens`` tokens of a synthetic agent session and a
question; inspect answers it with ``generate()`` and grades the answer with
``model_graded_qa()`` (2 calls per sample, like our answerer then judge), at
``--max-connections``. inspect_ai is not a dependency of this package: it runs as
``inspect eval`` in its own interpreter (``--python``, else ``$INSPECT_PYTHON``, else
``/work/inspect-venv/bin/python``), keeping no samples in its log unless ``--log-samples``
(the faster peer, so the stricter comparison). A bare ``openai`` client over aiohttp sends
the same number of calls to the same stub in the same run, as the reference of what the
server allows. Figures are taken at the server (``GET /stub/stats``), so start-up and logging
are outside the span; the ratio is ``calls x latency / concurrency / span``.
``benchmarks/job_throughput.py`` imports :func:`run_peer` to put it beside our job.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import docs_snippet

TASK_FILE = Path(__file__).resolve().with_name("peer_task.py")
DEFAULT_PYTHON = Path("/work/inspect-venv/bin/python")
SAMPLES_PER_CONTEXT = 45  # a job's 540 probes over 12 compaction points
QUESTIONS = (
    "Which file did the agent change last, and why?",
    "What command did the agent run to check its work, and what did it report?",
    "What was the most recent error in this session, and was it fixed?",
    "What did the user ask for that is not done yet?",
    "Which decision did the agent make about the design, and what did it rule out?",
    "What exact value or identifier did a tool output report most recently?",
)
# What the peer process runs to read its own log: completed samples, status, first error.
_READ_LOG = """
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log
log = read_eval_log(list_eval_logs(sys.argv[1])[0], header_only=True)
results = log.results
print(json.dumps({
    "status": log.status,
    "completed": results.completed_samples if results else 0,
    "error": log.error.message.splitlines()[0] if log.error else None,
}))
"""


def _children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class PeerUnavailable(RuntimeError):
    """inspect_ai cannot be run here; the message is one line saying why."""


def peer_python(python: str | None = None) -> str:
    """The interpreter with inspect_ai: ``python``, ``$INSPECT_PYTHON`` or the default venv."""
    chosen = python or os.environ.get("INSPECT_PYTHON")
    if chosen is None and DEFAULT_PYTHON.exists():
        chosen = str(DEFAULT_PYTHON)
    if chosen is None:
        raise PeerUnavailable(
            f"inspect_ai not found: set INSPECT_PYTHON or --python (no {DEFAULT_PYTHON})"
        )
    probe = subprocess.run(
        [chosen, "-c", "import inspect_ai; print(inspect_ai.__version__)"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise PeerUnavailable(f"inspect_ai is not importable by {chosen}")
    return chosen


@lru_cache(maxsize=2)
def sample_inputs(samples: int, context_tokens: int) -> tuple[str, ...]:
    """``samples`` prompts: a rendered synthetic session of ``context_tokens`` tokens (one
    per :data:`SAMPLES_PER_CONTEXT` samples, as probes share a point) and a distinct question."""
    from benchmark.llm.prompting import render_messages
    from benchmark.transcript.synthetic import generate

    count = max(1, -(-samples // SAMPLES_PER_CONTEXT))
    contexts = [
        render_messages(generate(seed, int(context_tokens * 1.2)).messages, context_tokens)
        for seed in range(count)
    ]
    return tuple(
        f"{contexts[i % count]}\n\nQuestion {i}: {QUESTIONS[i % len(QUESTIONS)]}"
        for i in range(samples)
    )


def stub_root(base_url: str) -> str:
    return base_url.rstrip("/").removesuffix("/v1")


def stub_stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(stub_root(base_url) + "/stub/stats", timeout=30) as reply:
        return json.load(reply)


def at_server(base_url: str, action: Callable[[], None], latency: float, in_flight: int):
    """Run ``action`` and time it at the stub: ``{"span_s", "calls", "wall_s", "ratio"}``.

    On a stub that served nothing before, the span starts at its ``first_request_at``. On a
    used one (our job ran first), a watcher polls ``/stub/stats`` until the count moves and
    takes that reply's arrival as the start, then stops polling: the start is late by at
    most one poll, so the span errs short and the peer's ratio high.
    """
    before = stub_stats(base_url)
    started: list[float] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if stub_stats(base_url)["requests"] > before["requests"]:
                started.append(time.time())
                return
            done.wait(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    if before["requests"]:
        watcher.start()
    wall = time.perf_counter()
    action()
    wall = time.perf_counter() - wall
    done.set()
    if watcher.is_alive():
        watcher.join()
    after = stub_stats(base_url)
    calls = after["requests"] - before["requests"]
    served = after["served"] - before["served"]
    if calls == 0 or after["last_reply_at"] is None:
        raise RuntimeError("the stub saw no calls")
    start = started[0] if before["requests"] else after["first_request_at"]
    span = after["last_reply_at"] - start
    return {
        "span_s": span,
        "calls": calls,
        "served": served,
        "wall_s": wall,
        "ratio": calls * latency / in_flight / span,
    }


def run_peer(
    base_url: str,
    samples: int,
    max_connections: int,
    context_tokens: int,
    latency: float = 0.2,
    python: str | None = None,
    log_samples: bool = False,
) -> dict[str, Any]:
    """inspect_ai's LLM phase against ``base_url`` (an OpenAI-compatible ``.../v1``), in a
    child process: ``{"span_s", "calls", "served", "wall_s", "ratio", "cpu_s", "completed"}``.

    ``wall_s`` and ``cpu_s`` (user + system) are the whole ``inspect eval`` process. Raises
    :class:`PeerUnavailable` when no interpreter has inspect_ai, ``RuntimeError`` when the
    eval did not run every sample. Unless ``log_samples``, inspect keeps no samples or
    realtime events in its log, which halved its span here: the stricter peer to beat.
    """
    interpreter = peer_python(python)
    inputs = sample_inputs(samples, context_tokens)
    with tempfile.TemporaryDirectory(prefix="peer-inspect-") as folder:
        dataset = Path(folder) / "samples.jsonl"
        with dataset.open("w") as out:
            for i, text in enumerate(inputs):
                row = {"id": i, "input": text, "target": "names what the session shows"}
                out.write(json.dumps(row) + "\n")
        logs = Path(folder) / "logs"
        command = [
            interpreter, "-m", "inspect_ai", "eval", f"{TASK_FILE}@llm_phase",
            "-T", f"dataset={dataset}", "--model", "openai/gpt-4o",
            "--max-connections", str(max_connections), "--no-fail-on-error",
            "--display", "none", "--log-dir", str(logs),
        ]  # fmt: skip
        if not log_samples:
            command += ["--no-log-samples", "--no-log-realtime"]
        cpu: list[float] = []
        env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "stub-key"}

        def evaluate() -> None:
            cpu.append(_children_cpu())
            ran = subprocess.run(command, env=env, capture_output=True, text=True)
            cpu.append(_children_cpu())
            if ran.returncode != 0:
                last = (ran.stderr.strip() or ran.stdout.strip() or "?").splitlines()[-1]
                raise RuntimeError(f"inspect eval exited with {ran.returncode}: {last}")

        figures = at_server(base_url, evaluate, latency, max_connections)
        read = subprocess.run(
            [interpreter, "-c", _READ_LOG, str(logs)], capture_output=True, text=True, check=True
        )
    log = json.loads(read.stdout)
    if log["completed"] != samples or log["status"] != "success":
        raise RuntimeError(
            f"inspect ran {log['completed']} of {samples} samples ({log['status']}): {log['error']}"
        )
    return {**figures, "cpu_s": cpu[1] - cpu[0], "completed": log["completed"]}


def bare_burst(
    base_url: str, inputs: tuple[str, ...], calls: int, in_flight: int, latency: float
) -> dict[str, Any]:
    """``calls`` chat completions with the ``openai`` SDK over aiohttp, ``in_flight`` at once,
    cycling through ``inputs``: the reference for what the server allows. ``cpu_s`` is this
    process's (the stats polls included)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    async def send_all() -> None:
        async with AsyncOpenAI(
            base_url=base_url, api_key="stub-key", http_client=DefaultAioHttpClient()
        ) as client:
            slots = asyncio.Semaphore(in_flight)

            async def one(i: int) -> None:
                async with slots:
                    text = inputs[i % len(inputs)]
                    await client.chat.completions.create(
                        model="gpt-4o", messages=[{"role": "user", "content": text}]
                    )

            await asyncio.gather(*(one(i) for i in range(calls)))

    cpu = time.process_time()
    figures = at_server(base_url, lambda: asyncio.run(send_all()), latency, in_flight)
    return {**figures, "cpu_s": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500, help="inspect samples (2 calls each)")
    parser.add_argument("--latency", type=float, default=0.2, help="server delay per call, s")
    parser.add_argument("--concurrency", type=int, default=64, help="calls in flight")
    parser.add_argument("--context-tokens", type=int, default=20_000, help="tokens per context")
    parser.add_argument("--python", default=None, help="interpreter with inspect_ai")
    parser.add_argument(
        "--log-samples", action="store_true", help="inspect logs samples and events (its default)"
    )
    docs_snippet.option(parser)
    args = parser.parse_args()

    from benchmark.stub import serve_in_subprocess

    try:
        python = peer_python(args.python)
    except PeerUnavailable as missing:
        sys.exit(f"peer_inspect: {missing}")
    inputs = sample_inputs(args.samples, args.context_tokens)
    with serve_in_subprocess(latency=args.latency) as base_url:
        peer = run_peer(
            base_url,
            args.samples,
            args.concurrency,
            args.context_tokens,
            args.latency,
            python,
            args.log_samples,
        )
        bare = bare_burst(base_url, inputs, peer["calls"], args.concurrency, args.latency)
    rows = [("inspect_ai", peer), ("bare openai, aiohttp", bare)]
    print(
        f"{args.samples} samples, {args.context_tokens} tokens each, "
        f"{args.latency * 1000:.0f} ms/call, {args.concurrency} in flight"
    )
    head = ("calls", "span at server", "ratio to ideal", "whole process", "its CPU")
    print(f"{'':<22}{head[0]:>7}{head[1]:>16}{head[2]:>16}{head[3]:>15}{head[4]:>10}")
    for name, row in rows:
        print(
            f"{name:<22}{row['calls']:>7}{row['span_s']:>14.2f} s"
            f"{row['ratio']:>16.3f}{row['wall_s']:>13.2f} s{row['cpu_s']:>8.2f} s"
        )


if __name__ == "__main__":
    docs_snippet.run(main, __file__)
