"""A job's probe traces streamed to its tracking child as points finish
(``benchmark.tracking.trace_stream``, ``streamed``): what the child writes while the job
runs plus what the record leaves is what one written at the end holds, no probe twice; a
job killed (or stopped by SIGTERM) mid-stream leaves its run KILLED with the traces written
so far; and a key an LLM server echoes reaches no streamed trace. Real children, real
SQLite stores, real ``python -m benchmark`` jobs, a real loopback server."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import SMALL, run_benchmark, start_benchmark
from test_cli import OFFLINE_ENV
from test_configs import scripted_llm
from test_tracking_child import store_copy

from benchmark.llm.usage import CallPurpose, CallRecord
from benchmark.run.run_record import RunRecord, columns
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.logger_process import TrackingChild
from benchmark.tracking.trace_stream import STREAM_BATCH

PROBES = STREAM_BATCH + 30  # one streamed batch, the rest with the record
OFFLINE_JOB = ["transcript.sessions=20", "execution.progress=log", "cache.dir=null"]


def a_record() -> RunRecord:
    """A job's record as far as traces go: judgment rows, places, two calls per probe but
    for every fifth probe (answered offline: no calls), a failed probe now and then."""
    rows, places, calls = [], [], []
    t0 = time.time_ns() - 10**12
    for i in range(PROBES):
        pid, point = f"probe-{i:03d}", i // 14
        rows.append(
            {
                "probe_id": pid,
                "type": "recall" if i % 3 else "next_action",
                "policy": "truncate",
                "score": None if i % 11 == 0 else (i % 5) + 0.5,
                "question": f"which build went live? {i}",
                "answer": f"build {i}",
                "gold": f"build {i}",
                "reasoning": f"because {i}",
                "failed": i % 11 == 0,
                "error": "no answer" if i % 11 == 0 else None,
            }
        )
        places.append({"probe_id": pid, "transcript": f"s{point}", "point": point})
        if i % 5 == 0:
            continue
        for k, role in enumerate(("answerer", "judge")):
            start = t0 + i * 10**7 + k * 10**6
            calls.append(
                CallRecord(
                    role=role,
                    endpoint="stubbed",
                    model="gpt-4o",
                    api="chat.completions",
                    request={"messages": [{"role": "user", "content": f"{role} {i}"}]},
                    reply=f"reply {i}",
                    start_ns=start,
                    end_ns=start + 5 * 10**5,
                    input_tokens=10 + i,
                    output_tokens=3,
                    purpose=CallPurpose(f"s{point}", point, "truncate", pid, "recall"),
                )
            )
    return RunRecord(
        run_name="stream@test",
        params={"policy.name": "truncate"},
        tags={"policy": "truncate", "judge": "gpt4o"},
        tables={"judgments_table.json": columns(rows), "results_table.json": columns(places)},
        calls=calls,
        judge_source="LLM_JUDGE",
    )


def streamed_message(record: RunRecord, upto: int) -> dict:
    """The line ``TraceStream`` sends for the first ``upto`` probes of ``record``."""
    table = record.tables["judgments_table.json"]
    rows = [{k: col[i] for k, col in table.items()} for i in range(upto)]
    ids = {row["probe_id"] for row in rows}
    results = record.tables["results_table.json"]
    places = {
        pid: [results["transcript"][i], results["point"][i]]
        for i, pid in enumerate(results["probe_id"])
        if pid in ids
    }
    calls = [c.model_dump() for c in record.calls if c.purpose and c.purpose.probe_id in ids]
    return {
        "first": 0,
        "rows": rows,
        "places": places,
        "calls": calls,
        "judge": "gpt4o",
        "judge_source": "LLM_JUDGE",
    }


def traces_read(store: Path) -> dict[str, tuple]:
    """Each probe's trace as the API reads it, without ids and write times; by probe id."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    experiments = [e.experiment_id for e in client.search_experiments()]
    found: dict[str, tuple] = {}
    for trace in client.search_traces(locations=experiments, max_results=1000):
        info = trace.info
        probe = info.tags["probe_id"]
        assert probe not in found, f"{probe} traced twice"
        tags = {k: v for k, v in info.tags.items() if k != "mlflow.artifactLocation"}
        found[probe] = (
            info.state,
            info.request_preview,
            info.response_preview,
            tags,
            info.token_usage,
            sorted(
                (a.name, repr(a.value), a.source.source_id, a.rationale) for a in info.assessments
            ),
            [
                (s.name, s.span_type, s.inputs, s.outputs, s.start_time_ns, s.end_time_ns)
                for s in trace.data.spans
                if s.parent_id is not None  # a call; the root's time is the job's for offline
            ],
            trace.data.spans[0].inputs,
            trace.data.spans[0].outputs,
        )
    return found


def test_streamed_and_end_written_traces_are_the_same_with_no_probe_twice(tmp_path, migrated_db):
    record = a_record()
    stores = {way: store_copy(migrated_db, tmp_path / way) for way in ("streamed", "end")}
    for way, store in stores.items():
        child = TrackingChild(TrackingConfig(store_dir=str(store)))
        try:
            child.ready()
            if way == "streamed":
                assert child.streaming()
                child.stream(streamed_message(record, STREAM_BATCH))
            child.log(record)
        finally:
            child.close()
        assert child._proc.returncode == 0
    streamed, whole = (traces_read(stores[way]) for way in ("streamed", "end"))
    assert len(whole) == PROBES
    assert streamed == whole


def _db_state(db: Path) -> tuple[str | None, int]:
    """The run's status and how many traces the store holds (read-only, while it is written)."""
    if not db.exists():
        return None, 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            status = conn.execute("SELECT status FROM runs").fetchone()
            traces = conn.execute("SELECT COUNT(*) FROM trace_info").fetchone()[0]
    except sqlite3.OperationalError:  # not migrated yet
        return None, 0
    return (status[0] if status else None), traces


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "sigterm"])
def test_a_job_stopped_mid_stream_leaves_its_run_killed_with_the_traces_written(tmp_path, signum):
    store = tmp_path / "mlruns"
    args = [*OFFLINE_JOB, f"tracking.store_dir={store}", f"hydra.run.dir={tmp_path / 'out'}"]
    proc = start_benchmark(args, tmp_path, OFFLINE_ENV)
    db = store / "mlflow.db"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            status, traces = _db_state(db)
            if status == "RUNNING" and traces:  # written while the job still runs
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the job ended before any trace was streamed"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    while time.monotonic() < deadline and _db_state(db)[0] == "RUNNING":
        time.sleep(0.1)  # a killed job's child ends its run at end of input
    status, traces = _db_state(db)
    assert status == "KILLED"  # killed: the record never came, so these were streamed
    assert traces >= STREAM_BATCH
    assert "Traceback" not in err + out
    if signum == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 143
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "KILLED" in errors[0], err[-2000:]
    found = traces_read(store)  # no probe twice (asserted there), each scored
    assert len(found) == traces
    assert all(any(a[0] == "score" for a in trace[5]) for trace in found.values())


def test_a_key_an_llm_server_echoes_reaches_no_streamed_trace(openai_stub, tmp_path):
    key = "sk-stream-Qz8Wv3Lm6Tp1Rx9Kc4Bn7Df2"

    def echoing(body: dict) -> object:
        reply = scripted_llm(body)
        if isinstance(reply, str) and "score" not in reply:  # the answerer's: echoes the key
            return f"{reply} (sent with {key})"
        return reply

    openai_stub.reply = echoing
    store = tmp_path / "mlruns"
    args = [
        *[a for a in SMALL if not a.startswith(("tracking=", "transcript.sessions"))],
        "transcript.sessions=8",
        "answerer=gpt4o",
        "judge=gpt4o",
        *(f"{r}.endpoint.base_url={openai_stub.base_url}" for r in ("answerer", "judge")),
        *(f"++{r}.endpoint.preflight=false" for r in ("answerer", "judge")),
        f"tracking.store_dir={store}",
        f"hydra.run.dir={tmp_path / 'out'}",
    ]
    done = run_benchmark(args, tmp_path, {**OFFLINE_ENV, "OPENAI_API_KEY": key}, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    assert not [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    found = traces_read(store)
    assert len(found) > STREAM_BATCH  # some were streamed, the rest went with the record
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and key[:12].encode() in p.read_bytes()]
    assert leaked == []
    assert os.environ.get("OPENAI_API_KEY") != key
