"""Trace starts inside one transaction share one experiment read and one flush
(``benchmark.tracking.trace_batch``), on the MLflow versions whose ``start_trace`` was read
for it; the traces the API reads back are the same as MLflow's own path writes, and any
other version (or roll-ups on) takes that path. Real SQLite store, real MLflow client."""

from __future__ import annotations

import time

import pytest

from benchmark.tracking import trace_batch
from benchmark.tracking.trace_writer import Node, TraceSpec, write_traces

PROBES = 24  # more than one batch of the test's TRACE_BATCH (10): starts flushed per batch


def specs(run_id: str | None) -> list[TraceSpec]:
    """Probe-like traces: a root with question and answer, two LLM calls (one failed), a
    score feedback (one without a score) and a gold expectation."""
    from mlflow.entities import AssessmentError, AssessmentSource, Expectation, Feedback
    from test_job_logging_cost import a_call

    from benchmark.tracking.traces import call_node

    made = []
    for i in range(PROBES):
        answer = a_call({"messages": [{"role": "user", "content": f"q{i}"}]}, input_tokens=9)
        failed = a_call({"messages": []}, error="HTTP 500", output_tokens=0)
        start = time.time_ns() - i * 1_000_000
        root = Node(
            f"recall · p0 · probe-{i}",
            "CHAIN",
            start,
            start + 5_000_000,
            inputs={"question": f"which build? {i}", "probe_id": f"probe-{i}"},
            outputs={"answer": f"build {i}"},
            attributes={"probe_id": f"probe-{i}", "point": 0},
            error="failed" if i % 7 == 0 else None,
            children=[call_node(answer), call_node(failed)],
        )
        source = AssessmentSource(source_type="CODE", source_id="reference")
        error = AssessmentError(error_code="NOT_SCORED", error_message="no answer")
        feedback = Feedback(
            name="score",
            value=None if i % 7 == 0 else i % 6,
            error=error if i % 7 == 0 else None,
            source=source,
            rationale=f"because {i}",
            metadata={"mlflow.assessment.sourceRunId": run_id} if run_id else None,
        )
        gold = Expectation(name="gold", value=f"build {i}", source=source)
        made.append(
            TraceSpec(root, {"probe_id": f"probe-{i}", "policy": "truncate"}, [feedback, gold])
        )
    return made


def read_back(client, experiment_id: str) -> dict[str, dict]:
    """What the API reads of each trace, by probe id, without what differs by nature
    (trace, span and assessment ids, the experiment, write times)."""
    found = {}
    for trace in client.search_traces(locations=[experiment_id], max_results=500):
        info = trace.info
        found[info.tags["probe_id"]] = {
            "state": info.state,
            "request_time": info.request_time,
            "duration": info.execution_duration,
            "previews": (info.request_preview, info.response_preview),
            "tags": {k: v for k, v in info.tags.items() if k != "mlflow.artifactLocation"},
            "metadata": {k: v for k, v in info.trace_metadata.items()},
            "usage": info.token_usage,
            "assessments": sorted(
                (a.name, repr(a.value), a.source.source_id, a.rationale, repr(a.error), a.metadata)
                for a in info.assessments
            ),
            "spans": [
                (s.name, s.span_type, s.status.status_code, s.inputs, s.outputs, s.attributes)
                for s in trace.data.spans
            ],
        }
    return found


def write_both_ways(mlflow_store, monkeypatch) -> tuple[object, dict, dict, dict[str, int]]:
    """The same traces written with quick starts and MLflow's own way; the statements each
    way ran (``INSERT INTO trace_info``, experiment reads), by way."""
    import mlflow
    from mlflow import MlflowClient
    from mlflow.tracing.client import TracingClient
    from sqlalchemy import event

    import benchmark.tracking.trace_writer as writer

    monkeypatch.setattr(writer, "TRACE_BATCH", 10)
    mlflow.set_tracking_uri(f"sqlite:///{mlflow_store / 'mlflow.db'}")
    client = MlflowClient()
    quick, plain = client.create_experiment("quick"), client.create_experiment("plain")
    engine = TracingClient().store.engine
    ran: dict[str, int] = {}
    way = ["quick"]

    def count(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO trace_info"):
            ran[f"{way[0]} inserts"] = ran.get(f"{way[0]} inserts", 0) + 1
        if "FROM experiments" in statement:
            ran[f"{way[0]} reads"] = ran.get(f"{way[0]} reads", 0) + 1

    event.listen(engine, "before_cursor_execute", count)
    try:
        assert trace_batch.applies()  # the installed MLflow is one the shortcut was read for
        assert write_traces(specs("r1"), quick, "r1") == PROBES
        way[0] = "plain"
        monkeypatch.setattr(trace_batch, "applies", lambda version=None: False)
        assert write_traces(specs("r1"), plain, "r1") == PROBES
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return client, read_back(client, quick), read_back(client, plain), ran


def test_quick_starts_write_what_mlflows_own_path_writes(mlflow_store, monkeypatch):
    client, quick, plain, ran = write_both_ways(mlflow_store, monkeypatch)
    assert sorted(quick) == sorted(f"probe-{i}" for i in range(PROBES))
    for probe, seen in quick.items():
        expected = plain[probe]
        expected["request_time"] = seen["request_time"]  # the specs were built twice
        for (name, *rest), (its_name, *its_rest) in zip(
            seen["spans"], expected["spans"], strict=True
        ):
            assert name == its_name and rest[:4] == its_rest[:4]
        seen.pop("spans"), expected.pop("spans")
        assert {k: v for k, v in seen.items() if k != "duration"} == {
            k: v for k, v in expected.items() if k != "duration"
        }
    experiment = client.get_experiment_by_name("quick").experiment_id
    scored = client.search_traces(locations=[experiment], filter_string="feedback.score = '5'")
    fives = [f"probe-{i}" for i in range(PROBES) if i % 6 == 5 and i % 7]
    assert sorted(t.info.tags["probe_id"] for t in scored) == sorted(fives)


def _own(attributes: dict) -> dict:
    """A span's attributes without the trace id it names."""
    return {k: v for k, v in attributes.items() if k != "mlflow.traceRequestId"}


def test_quick_starts_read_the_experiment_and_insert_the_traces_once_per_batch(
    mlflow_store, monkeypatch
):
    *_, ran = write_both_ways(mlflow_store, monkeypatch)
    batches = -(-PROBES // 10)
    assert ran["quick inserts"] == batches  # one executemany per batch: 3, not 24
    assert ran["plain inserts"] == PROBES
    assert ran.get("quick reads", 0) <= 2 * batches  # start_trace's read, once per batch
    assert ran["plain reads"] >= PROBES


@pytest.mark.parametrize(
    "version, rollups, applies",
    [
        ("3.17.2", None, True),
        ("3.13.0", None, True),
        ("3.18.0", None, True),
        ("3.12.1", None, False),
        ("3.19.0", None, False),
        ("4.0.0", None, False),
        ("3.17.2", "true", False),
        ("not-a-version", None, False),
    ],
)
def test_only_versions_read_for_it_with_rollups_off_hold_the_flush(
    monkeypatch, version, rollups, applies
):
    if rollups is None:
        monkeypatch.delenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", raising=False)
    else:
        monkeypatch.setenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", rollups)
    assert trace_batch.applies(version) is applies


def test_a_version_not_read_for_it_leaves_the_store_and_session_untouched(monkeypatch):
    class Store:
        def get_experiment(self, experiment_id):
            return experiment_id

    class Session:
        def flush(self):
            raise AssertionError("not flushed by quick_starts on the plain path")

    store, session = Store(), Session()
    monkeypatch.setattr(trace_batch, "applies", lambda version=None: False)
    with trace_batch.quick_starts(store, session) as quick:
        assert quick is False
        assert "get_experiment" not in vars(store) and "flush" not in vars(session)


def test_a_store_that_refuses_a_batch_is_warned_about_and_left_as_it_was(mlflow_store, caplog):
    """A start that fails (here: an experiment that does not exist) rolls the batch back;
    the store's methods are its own again afterwards."""
    import mlflow
    from mlflow.tracing.client import TracingClient

    mlflow.set_tracking_uri(f"sqlite:///{mlflow_store / 'mlflow.db'}")
    store = TracingClient().store
    assert write_traces(specs(None)[:3], "987654", None) == 0
    assert "3 of 3 traces not logged" in caplog.text
    assert "get_experiment" not in vars(store) and "ManagedSessionMaker" in vars(store)
