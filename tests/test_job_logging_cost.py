"""What a job's logging costs (benchmarks/job_throughput.py): kept calls hold no context,
traces go to a SQL store in one transaction per batch with the endpoint's own cost, and an
LLM job opens its store while it prepares, still making no call for a store that is broken.
Real ledger, real SQLite store, real loopback server, real ``python -m benchmark``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SMALL, run_benchmark
from test_cli import OFFLINE_ENV

from benchmark.llm.untrusted import messages
from benchmark.llm.usage import CallPurpose, CallRecord, UsageLedger, kept_request
from benchmark.tracking.trace_requests import shown_request

PURPOSE = CallPurpose("sess-1", 2, "truncate", "p-7", "recall")
CONTEXT = "user: deploy the api to staging\nassistant: done, build 4711 is live\n" * 900


def a_call(body: dict, **fields: object) -> CallRecord:
    return CallRecord.model_construct(
        role="answerer",
        endpoint="stubbed",
        model="gpt-4o",
        api="chat.completions",
        request=body,
        reply="build 4711",
        start_ns=time.time_ns(),
        end_ns=time.time_ns() + 1_000_000,
        purpose=PURPOSE,
        **{"error": None, "cached": False, "input_tokens": 0, "output_tokens": 0, **fields},
    )


@pytest.mark.parametrize(
    "data",
    [
        {"question": "Which build went live?", "context": CONTEXT},
        {"question": "Which build?", "passages": [CONTEXT[:5000], "short", CONTEXT[:9000]]},
        {"question": "Which build?", "context": "a short context"},
    ],
    ids=["long context", "long list", "short"],
)
def test_a_kept_call_holds_its_prompt_and_no_context_and_shows_as_before(data):
    body = {"model": "gpt-4o", "messages": messages("Answer from the context.", data)}
    ledger = UsageLedger(keep_calls=True)
    ledger.record_call(a_call(body))
    (kept,) = ledger.calls()
    content = kept.request["messages"][1]["content"]
    assert len(content) < 1_000 and CONTEXT[:200] not in content
    assert json.loads(content)["data"]["question"] == data["question"]
    # The trace shows the kept request exactly as it showed the whole one: a pointer, sized.
    assert shown_request(kept.request, PURPOSE) == shown_request(body, PURPOSE)
    assert kept_request(kept.request) == kept.request


def test_the_trace_of_a_long_context_points_to_its_file_with_its_size():
    body = {"model": "gpt-4o", "messages": messages("Answer.", {"q": "?", "context": CONTEXT})}
    shown = json.dumps(shown_request(kept_request(body), PURPOSE), ensure_ascii=False)
    assert f"[compacted context: contexts/sess-1/point_2.txt, {len(CONTEXT):,} chars]" in shown


def test_traces_go_to_the_store_in_one_transaction_with_the_endpoints_cost(mlflow_store):
    import mlflow
    from mlflow import MlflowClient
    from sqlalchemy import event

    from benchmark.tracking.trace_writer import Node, TraceSpec, write_traces
    from benchmark.tracking.traces import call_node

    uri = f"sqlite:///{mlflow_store / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    experiment = MlflowClient().create_experiment("costs")
    call = a_call({"messages": []}, input_tokens=1000, output_tokens=10)
    call.cost_usd, call.input_cost_usd = 0.5, 0.25  # not any model's list price
    specs = []
    for i in range(30):
        root = Node(f"probe {i}", "CHAIN", call.start_ns, call.end_ns, {"question": f"q{i}"})
        root.children = [call_node(call)]
        specs.append(TraceSpec(root, {"probe_id": f"p{i}"}))

    from mlflow.tracing.client import TracingClient

    engine = TracingClient().store.engine
    commits: list[int] = []

    def counted(conn: object) -> None:
        commits.append(1)

    event.listen(engine, "commit", counted)
    try:
        assert write_traces(specs, experiment, None) == 30
    finally:
        event.remove(engine, "commit", counted)
    assert len(commits) <= 3  # one per batch of traces (and a read or two), not 30+

    traces = MlflowClient().search_traces(locations=[experiment], max_results=100)
    assert sorted(t.info.tags["probe_id"] for t in traces) == sorted(f"p{i}" for i in range(30))
    chat = [s for s in traces[0].data.spans if s.span_type == "CHAT_MODEL"]
    assert chat[0].get_attribute("mlflow.llm.cost") == {
        "input_cost": 0.25,
        "output_cost": 0.25,
        "total_cost": 0.5,
    }


@pytest.mark.parametrize("workers", [0, 1])
def test_an_llm_job_with_a_broken_store_makes_no_call_and_says_so_in_one_line(
    openai_stub, tmp_path, migrated_db, workers
):
    """The store opens while the points are prepared, but is waited for before the first
    request: a store MLflow refuses still stops the job before it spends anything (with a
    worker process preparing, probes are submitted at once and their requests held)."""
    store = tmp_path / "mlruns"
    store.mkdir()
    (store / migrated_db.name).write_bytes(migrated_db.read_bytes())
    with sqlite3.connect(store / migrated_db.name) as db:
        db.execute("DROP TABLE latest_metrics")
    args = [
        *SMALL,
        "answerer=gpt4o",
        f"answerer.endpoint.base_url={openai_stub.base_url}",
        "++answerer.endpoint.preflight=false",
        "tracking=mlflow",
        f"tracking.store_dir={store}",
        f"hydra.run.dir={tmp_path / 'out'}",
        f"execution.prepare_workers={workers}",
    ]
    env = {**OFFLINE_ENV, "OPENAI_API_KEY": "sk-test-logging"}
    done = run_benchmark(args, tmp_path, env, timeout=60)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(errors) == 1 and str(store / "mlflow.db") in errors[0]
    assert "Traceback" not in done.stderr + done.stdout
    assert openai_stub.requests == []


def test_the_child_logs_no_litellm_import_for_costs(tmp_path, migrated_db):
    """MLflow prices a span without a stated cost through litellm (seconds to import)."""
    code = (
        "import sys, mlflow\n"
        f"mlflow.set_tracking_uri('sqlite:///{migrated_db}')\n"
        "from benchmark.tracking.trace_writer import Node, TraceSpec, write_traces\n"
        "from benchmark.tracking.traces import call_node\n"
        "from test_job_logging_cost import a_call\n"
        "call = a_call({'messages': []}, input_tokens=10, output_tokens=5)\n"
        "root = Node('p', 'CHAIN', call.start_ns, call.end_ns, children=[call_node(call)])\n"
        "exp = mlflow.MlflowClient().create_experiment('litellm-free')\n"
        "assert write_traces([TraceSpec(root)], exp, None) == 1\n"
        "print('litellm' in sys.modules)\n"
    )
    db = tmp_path / "copy.db"
    db.write_bytes(migrated_db.read_bytes())
    code = code.replace(str(migrated_db), str(db))
    tests = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**OFFLINE_ENV, "PYTHONPATH": tests},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"
