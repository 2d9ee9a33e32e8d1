"""An LLM-judged job logs judge records, usage and cost to MLflow, and never the key."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SMALL, compose_config
from test_configs import scripted_llm

from benchmark.__main__ import run

SECRET = "sk-test-SECRET-4b1d"


def test_llm_job_logs_records_usage_and_no_secret(openai_stub, monkeypatch, tmp_path, mlflow_store):
    openai_stub.reply = scripted_llm
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    store = tmp_path / "mlruns"
    cfg = compose_config(
        [
            *SMALL,
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "probe.per_type=2",
            "tracking=mlflow",
            f"tracking.store_dir={store}",
        ]
    )
    assert run(cfg) is not None

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (mlrun,) = client.search_runs([exp.experiment_id])
    metrics = mlrun.data.metrics
    job_requests = openai_stub.requests[1:]  # [0]: the preflight's check, not the job's call
    calls = len(job_requests)
    assert metrics["llm/judge/calls"] == calls > 0
    assert metrics["llm/judge/input_tokens"] > 0 and metrics["headline/more/cost_usd"] > 0
    assert mlrun.data.params["judge.endpoint.api_key_env"] == "OPENAI_API_KEY"
    local = client.download_artifacts(mlrun.info.run_id, "judge_records.jsonl", str(tmp_path))
    records = Path(local).read_text().splitlines()
    assert len(records) == metrics["probes/total"]
    # Every call is a span under its probe's trace, with its request and exact reply.
    traces = client.search_traces(locations=[exp.experiment_id], run_id=mlrun.info.run_id)
    assert len(traces) == metrics["probes/total"]
    spans = [s for t in traces for s in t.data.spans if s.span_type == "CHAT_MODEL"]
    assert len(spans) == calls
    assert {s.get_attribute("role") for s in spans} == {"judge"}
    assert all(s.outputs["reply"] for s in spans)
    # Every request carried the key; nothing in the store or the artifacts holds it.
    for r in openai_stub.requests:
        headers = {k.lower(): v for k, v in r.headers.items()}
        assert headers["authorization"] == f"Bearer {SECRET}"
    for path in store.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_log_run_writes_any_record_as_one_run(tmp_path, mlflow_store):
    """The one MLflow writer takes plain data: a job's or an audit's record alike."""
    from mlflow import MlflowClient

    from benchmark.config.schema import TrackingConfig
    from benchmark.run.run_record import RunRecord
    from benchmark.tracking.mlflow_run import log_run
    from benchmark.tracking.mlflow_store import tracking_uri

    tracking = TrackingConfig(store_dir=str(tmp_path / "mlruns"), experiment="records")
    streamed = tmp_path / "run_files"  # files a job wrote as it ran: logged as they are
    (streamed / "contexts").mkdir(parents=True)
    (streamed / "contexts" / "point_0.json").write_text("{}")
    record = RunRecord(
        run_name="by-hand",
        params={"policy.name": "none"},
        tags={"policy": "none"},
        metrics={"headline/overall": 4.5},
        tables={"t.json": {"a": [1, 2]}},
        artifacts={"nested/notes.txt": "hello", "config.yaml": "a: 1\n"},
        artifact_dir=streamed,
        status="KILLED",
    )
    run_id = log_run(record, tracking)
    client = MlflowClient(tracking_uri(tmp_path / "mlruns"))
    run_ = client.get_run(run_id)
    assert (run_.info.run_name, run_.info.status) == ("by-hand", "KILLED")
    assert run_.data.params == {"policy.name": "none"} and run_.data.tags["policy"] == "none"
    assert run_.data.metrics == {"headline/overall": 4.5}
    paths = {a.path for a in client.list_artifacts(run_id)}
    assert {"t.json", "nested", "config.yaml", "contexts"} <= paths
    local = client.download_artifacts(run_id, "nested/notes.txt", str(tmp_path))
    assert Path(local).read_text() == "hello"
    local = client.download_artifacts(run_id, "contexts/point_0.json", str(tmp_path))
    assert Path(local).read_text() == "{}"


def test_run_files_stream_points_and_keep_them_lean(tmp_path):
    """A job's files are written point by point, laid out as whole-list JSON would be, and
    the point the job keeps holds no context, judge record or reasoning, only scores."""
    from benchmark.answerer.base import Answer
    from benchmark.judge.base import CriterionResult, Judgment
    from benchmark.probe.models import Evidence, Fact, Gold, Probe
    from benchmark.run.compaction import CompactionPoint
    from benchmark.run.job_files import RunFiles
    from benchmark.run.results import PointResult, ProbeResult
    from benchmark.transcript.models import Message

    empty = RunFiles(tmp_path / "empty")
    empty.close()
    assert (tmp_path / "empty" / "probes.json").read_text() == json.dumps([], indent=1)
    assert not (tmp_path / "empty" / "judge_records.jsonl").exists()

    def point(ordinal: int) -> PointResult:
        probe = Probe(
            id=f"p{ordinal}",
            transcript_id="t",
            point=ordinal,
            type="recall",
            question="what\nfailed?",
            gold=Gold(answer='the "build"', facts=[Fact(kind="identifier", text="build")]),
            evidence=[Evidence(message_index=3, quote="build")],
            position=0.5,
        )
        judgment = Judgment(
            results=[CriterionResult(criterion="accuracy_factual", score=4, reasoning="ok")],
            record={"messages": [{"role": "user", "content": "long context"}]},
        )
        result = ProbeResult(probe=probe, answer=Answer(text="build"), judgment=judgment, score=4)
        return PointResult(
            point=CompactionPoint(
                transcript_id="t",
                ordinal=ordinal,
                head_end=2,
                tail_start=6,
                end=9,
                tokens_before=900,
            ),
            tokens_after=100,
            context=[
                Message(role="user", content="kept"),
                Message(role="assistant", content="line one\nline two"),
            ],
            probes=[result],
        )

    files = RunFiles(tmp_path / "run", "hermes")
    points = [point(0), point(1)]
    kept = [files.point(p) for p in points]
    files.close()
    folder = tmp_path / "run"
    probes = [p.probes[0].probe.model_dump() for p in points]
    assert (folder / "probes.json").read_text() == json.dumps(probes, indent=1)
    judgments = [json.loads(line) for line in (folder / "judgments.jsonl").open()]
    assert [j["context"] for j in judgments] == [
        "contexts/t/point_0.json",
        "contexts/t/point_1.json",
    ]
    assert judgments[0]["results"][0]["reasoning"] == "ok"
    records = [json.loads(line) for line in (folder / "judge_records.jsonl").open()]
    assert [r["probe_id"] for r in records] == ["p0", "p1"]
    context = json.loads((folder / "contexts" / "t" / "point_1.json").read_text())
    assert context["messages"][0] == {"role": "user", "content": "kept"}
    # The same context as a person reads it: role labels, real line breaks.
    text = (folder / "contexts" / "t" / "point_1.txt").read_text()
    assert text == "[user]\nkept\n\n[assistant]\nline one\nline two\n"
    # One table row per judgment, kept for judgments_table.json (the lean point has none).
    rows = files.judgment_rows
    assert [r["probe_id"] for r in rows] == ["p0", "p1"]
    assert rows[0] == {
        "probe_id": "p0",
        "type": "recall",
        "policy": "hermes",
        "score": 4,
        "c/accuracy_factual": 4,
        "question": "what\nfailed?",
        "answer": "build",
        "gold": 'the "build"',
        "reasoning": "accuracy_factual: ok",
        "failed": False,
        "error": None,
        "context": "contexts/t/point_0.txt",
    }
    for lean, full in zip(kept, points, strict=True):
        assert lean.context == [] and lean.tokens_after == full.tokens_after
        (result,) = lean.probes
        assert result.judgment.record is None and result.judgment.results[0].reasoning == ""
        assert result.judgment.scores() == full.probes[0].judgment.scores()
        assert (result.score, result.answer) == (full.probes[0].score, full.probes[0].answer)


def test_a_failed_judgment_row_says_why_without_a_secret():
    """A judgment row of a failed probe carries its error, scrubbed as judgments.jsonl is
    (an exception's message may quote a key), and the reasoning is cut short."""
    from benchmark.answerer.base import Answer
    from benchmark.judge.base import CriterionResult, Judgment
    from benchmark.probe.models import Evidence, Fact, Gold, Probe
    from benchmark.run.job_files import REASONING_CHARS, judgment_row, judgments_table
    from benchmark.run.results import ProbeResult

    key = "sk-proj-Zt4Wq9Lm2Xv7Rp3Kc8Bn1Df6Gh0Js5Ya2Ue7Io4"
    gold = Gold(answer="x", facts=[Fact(kind="identifier", text="x")])
    evidence = [Evidence(message_index=1, quote="x")]
    probe = Probe(
        id="p", transcript_id="t", point=0, type="decision", question="why?", gold=gold,
        evidence=evidence, position=0.5,
    )  # fmt: skip
    failed = ProbeResult(
        probe=probe,
        answer=Answer(text="x"),
        judgment=Judgment(failed=True, error=f"401 for key {key}"),
    )
    row = judgment_row(failed, "hermes", "contexts/t/point_0.txt")
    assert row["failed"] is True and row["score"] is None
    assert row["error"].startswith("401 for key ") and key not in row["error"]
    long = CriterionResult(criterion="accuracy_factual", score=1, reasoning="y" * 1000)
    judged = failed.model_copy(update={"judgment": Judgment(results=[long]), "score": 1.0})
    other = judgment_row(judged, "hermes", "")
    assert len(other["reasoning"]) == REASONING_CHARS
    # Criteria seen only in a later row still come right after the score.
    table = judgments_table([row, other])
    assert list(table)[:5] == ["probe_id", "type", "policy", "score", "c/accuracy_factual"]
    assert table["c/accuracy_factual"] == [None, 1]
