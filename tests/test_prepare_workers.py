"""Points prepared in worker processes while earlier points' calls run (issue 31).

Real parts: the loopback OpenAI stub, real spawned worker processes, Hydra composition.
The worker path must give exactly the in-process path's results, start calls before the
last point is prepared, log what the workers log, and choose itself only where it pays.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import SMALL, compose_config
from openai_stub import scripted_reply

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.run import prepare_workers
from benchmark.run.parts import build_parts
from benchmark.run.pipeline import run_job
from benchmark.run.prepare_workers import worker_count
from benchmark.transcript.sources import TranscriptStream

SESSIONS = [
    *SMALL,
    "transcript.sessions=5",
    "transcript.target_tokens=40000",
    "probe.per_type=3",
    "execution.progress=off",
]


def llm(base_url: str) -> list[str]:
    out = []
    for stage in ("answerer", "judge"):
        out += [
            f"{stage}=gpt4o",
            f"{stage}.endpoint.base_url={base_url}",
            f"++{stage}.endpoint.preflight=false",
        ]
    return out


def config(*overrides: str):
    return validate(compose_config(list(overrides)))


def outcome(result) -> list[tuple]:
    """Everything a point's result says, in order: contexts, probes, answers, scores."""
    rows = []
    for point in result.points:
        context = [m.model_dump(mode="json") for m in point.context]
        for r in point.probes:
            rows.append(
                (
                    point.point.transcript_id,
                    point.point.ordinal,
                    json.dumps(context, sort_keys=True),
                    r.probe.model_dump_json(),
                    r.survival,
                    r.answer.text,
                    r.score,
                )
            )
    return rows


@pytest.fixture
def stubbed(openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.reply = scripted_reply
    return openai_stub


def test_workers_give_the_in_process_results(stubbed, caplog):
    inline = run_job(config(*SESSIONS, *llm(stubbed.base_url), "execution.prepare_workers=0"))
    caplog.set_level(logging.INFO)
    pooled = run_job(config(*SESSIONS, *llm(stubbed.base_url), "execution.prepare_workers=2"))
    assert outcome(pooled) == outcome(inline)
    assert len(outcome(pooled)) > 20
    assert pooled.transcripts == inline.transcripts
    assert pooled.repeated_probes == inline.repeated_probes
    assert pooled.metrics()["headline/overall"] == inline.metrics()["headline/overall"]
    # What the workers logged is in the job's log, in the transcripts' order.
    compacted = [r.getMessage() for r in caplog.records if " -> " in r.getMessage()]
    assert list(dict.fromkeys(line.split()[0] for line in compacted)) == inline.transcripts
    assert any("worker process" in r.getMessage() for r in caplog.records)


def test_calls_start_before_the_last_point_is_prepared(stubbed, caplog):
    caplog.set_level(logging.INFO)
    result = run_job(
        config(
            *SESSIONS,
            "transcript.sessions=6",
            *llm(stubbed.base_url),
            "execution.prepare_workers=1",  # one at a time: the last comes well after the first
        )
    )
    prepared = next(r.created for r in caplog.records if r.getMessage().startswith("prepared "))
    first_call = stubbed.stats().first_request_at
    assert first_call is not None and first_call < prepared
    assert len(result.transcripts) == 6 and result.points


def test_a_file_that_cannot_be_read_fails_the_job_in_one_line(stubbed, tmp_path):
    """A worker's UserError (``transcript.on_error=fail``) reaches the job as it is."""
    logs = tmp_path / "logs"
    logs.mkdir()
    good = Path(__file__).parent / "fixtures" / "transcripts" / "chat"
    for i, source in enumerate(sorted(good.glob("*.jsonl"))[:2]):
        (logs / f"a{i}.jsonl").write_text(source.read_text())
    (logs / "b_broken.jsonl").write_text('{"role": "user", "content": [1, 2\n')
    overrides = [
        *[o for o in SESSIONS if not o.startswith("transcript.")],
        "transcript=files",
        f"transcript.path={logs}",
        "transcript.on_error=fail",
        *llm(stubbed.base_url),
        "execution.prepare_workers=2",
    ]
    with pytest.raises(UserError, match="b_broken.jsonl"):
        run_job(config(*overrides))


def counted(*overrides: str, concurrent: bool = True) -> int:
    cfg = config(*overrides)
    stream = TranscriptStream(cfg.transcript, None, None)
    return worker_count(cfg, build_parts(cfg), concurrent, stream)


def test_auto_uses_workers_only_where_they_pay(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setattr(prepare_workers, "_cpus", lambda: 4)
    calls = llm("http://127.0.0.1:9/v1")
    big = ["transcript.sessions=12", "transcript.target_tokens=160000"]
    assert counted(*big, *calls) == 4  # a CPU each
    assert counted(*big, *calls, concurrent=False) == 0  # offline: nothing to overlap
    assert counted("transcript.sessions=3", *calls) == 0  # too little to prepare
    assert counted("transcript.sessions=1", "transcript.target_tokens=2000000", *calls) == 0
    assert counted(*big, *calls, "execution.prepare_workers=0") == 0
    assert counted("transcript.sessions=3", *calls, "execution.prepare_workers=2") == 2
    assert counted("transcript.sessions=2", *calls, "execution.prepare_workers=8") == 2
    # A policy whose summarizer calls a model keeps preparing in the job's LLM loop.
    summarizing = [
        "policy=regenerative",
        "summarizer=gpt4o",
        "summarizer.endpoint.base_url=http://127.0.0.1:9/v1",
    ]
    assert counted(*big, *calls, *summarizing) == 0
    assert counted(*big, *calls, *summarizing, "execution.prepare_workers=3") == 0


def test_a_worker_killed_ends_the_job_in_one_line(openai_stub, tmp_path):
    """A worker the kernel kills (out of memory, say) is one error line, exit 2."""
    import os
    import signal
    import time

    import psutil
    from conftest import start_benchmark

    openai_stub.latency = 3600  # calls never answer: the job is preparing or waiting
    args = [
        *[o for o in SESSIONS if o != "transcript.sessions=5"],
        "transcript.sessions=12",
        "transcript.target_tokens=160000",
        f"cache.dir={tmp_path / 'cache'}",
        *llm(openai_stub.base_url),
        "execution.prepare_workers=2",
    ]
    proc = start_benchmark(args, tmp_path, {**os.environ, "OPENAI_API_KEY": "sk-test"})
    try:
        deadline = time.monotonic() + 60
        workers: list = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            children = psutil.Process(proc.pid).children()
            workers = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
            time.sleep(0.05)
        assert len(workers) == 2, "no workers"
        workers[0].send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, err[-2000:]
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "execution.prepare_workers=0" in errors[0], err[-2000:]
    assert "Traceback" not in err
    assert not psutil.wait_procs(workers, timeout=10)[1]


def test_held_requests_go_when_released_and_fail_unsent_on_a_store_error():
    """``send_gate``: a request waits while held, goes once released; released with an
    error, it fails without being sent (the cache's replies never wait: see the client)."""
    import asyncio

    from benchmark.llm import send_gate
    from benchmark.llm.loop import submit

    async def request() -> str:
        await send_gate.passed()
        return "sent"

    assert submit(request()).result(timeout=5) == "sent"  # nothing held
    send_gate.hold()
    try:
        waiting = submit(request())
        with pytest.raises(TimeoutError):
            waiting.result(timeout=0.3)
        send_gate.release()
        assert waiting.result(timeout=5) == "sent"
        send_gate.hold()
        refused = submit(request())
        send_gate.release(error="the store cannot take the run")
        with pytest.raises(send_gate.StoreNotReady, match="cannot take"):
            refused.result(timeout=5)
    finally:
        send_gate.reset_gate()
    assert submit(request()).result(timeout=5) == "sent"
    assert asyncio  # the loop is the job's own (benchmark.llm.loop)
