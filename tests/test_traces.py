"""An LLM job's traces are readable: one per probe, found by its tags or attributes, with
the question, answer, the judge's score as an assessment, its LLM calls and their tokens,
and never the whole compacted context; without probe traces, one per point."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SMALL, compose_config
from test_configs import scripted_llm

from benchmark.__main__ import run


def llm_job(openai_stub, monkeypatch, tmp_path, *extra: str):
    """A small LLM-answered, LLM-judged job with a control arm; its client, experiment, run."""
    openai_stub.reply = scripted_llm
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-traces")
    store = tmp_path / "mlruns"
    cfg = compose_config(
        [
            *SMALL,
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "answerer=gpt4o",
            f"answerer.endpoint.base_url={openai_stub.base_url}",
            "policy=truncate",
            "control=true",
            "probe.per_type=1",
            "tracking=mlflow",
            f"tracking.store_dir={store}",
            *extra,
        ]
    )
    assert run(cfg) is not None

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (mlrun,) = client.search_runs([exp.experiment_id])
    probes = json.loads(
        Path(client.download_artifacts(mlrun.info.run_id, "probes.json", str(tmp_path))).read_text()
    )
    return client, exp, mlrun, probes


def test_a_trace_per_probe_with_tags_io_score_tokens_and_no_context(
    openai_stub, monkeypatch, tmp_path, mlflow_store
):
    client, exp, mlrun, probes = llm_job(openai_stub, monkeypatch, tmp_path)
    import mlflow

    traces = client.search_traces(locations=[exp.experiment_id], run_id=mlrun.info.run_id)
    assert sorted(t.info.tags["probe_id"] for t in traces) == sorted(p["id"] for p in probes)

    probe = probes[0]
    mlflow.set_tracking_uri(client.tracking_uri)
    (trace,) = mlflow.search_traces(
        locations=[exp.experiment_id],
        filter_string=f"span.attributes.probe_id RLIKE '^{probe['id']}$'",
        return_type="list",
    )
    tags = trace.info.tags
    assert (tags["transcript"], tags["point"], tags["policy"], tags["probe_type"]) == (
        probe["transcript_id"],
        str(probe["point"]),
        "truncate",
        probe["type"],
    )
    span = trace.data.spans[0]
    assert span.parent_id is None
    assert span.name == f"{probe['type']} · p{probe['point']} · {probe['id']}"
    assert (span.get_attribute("probe_id"), span.get_attribute("policy")) == (
        probe["id"],
        "truncate",
    )
    assert span.inputs == {
        "question": probe["question"],
        "probe_id": probe["id"],
        "probe_type": probe["type"],
        "transcript": probe["transcript_id"],
        "point": probe["point"],
    }
    assert span.outputs["answer"]
    (score,) = [a for a in trace.info.assessments if a.name == "score"]
    assert (score.source.source_type, score.source.source_id) == ("LLM_JUDGE", "gpt4o")
    assert isinstance(score.value, int | float) and score.rationale
    (gold,) = [a for a in trace.info.assessments if a.name == "gold"]
    assert gold.value == probe["gold"]["answer"]

    # Its calls: the answerer and the judge, on the compacted context and the control arm.
    calls = [s for s in trace.data.spans if s.parent_id == span.span_id]
    arms = sorted((s.get_attribute("role"), s.get_attribute("arm")) for s in calls)
    assert arms == [
        ("answerer", "compacted"),
        ("answerer", "control"),
        ("judge", "compacted"),
        ("judge", "control"),
    ]
    for span in calls:
        usage = span.get_attribute("mlflow.chat.tokenUsage")
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    every = [s for s in trace.data.spans if s.span_type == "CHAT_MODEL"]
    assert trace.info.token_usage["input_tokens"] == sum(
        s.get_attribute("mlflow.chat.tokenUsage")["input_tokens"] for s in every
    )

    # No span holds the compacted context: a pointer to its artifact stands there.
    ctx = f"contexts/{probe['transcript_id']}/point_{probe['point']}.txt"
    text = Path(client.download_artifacts(mlrun.info.run_id, ctx, str(tmp_path))).read_text()
    compacted = [s for s in calls if s.get_attribute("arm") == "compacted"]
    for span in compacted:
        shown = json.dumps(span.inputs, ensure_ascii=False)
        assert f"[compacted context: {ctx}, " in shown
    pieces = [text[i : i + 200] for i in range(0, len(text) - 200, 2000)]
    for t in traces:
        for span in t.data.spans:
            shown = json.dumps(span.inputs, ensure_ascii=False)
            assert len(shown) < 20_000
            assert not any(json.dumps(p)[1:-1] in shown for p in pieces)


def test_without_probe_traces_calls_keep_one_trace_per_point(
    openai_stub, monkeypatch, tmp_path, mlflow_store
):
    client, exp, mlrun, probes = llm_job(
        openai_stub, monkeypatch, tmp_path, "tracking.trace_probes=false"
    )
    traces = client.search_traces(locations=[exp.experiment_id], run_id=mlrun.info.run_id)
    points = {(p["transcript_id"], str(p["point"])) for p in probes}
    assert sorted((t.info.tags["transcript"], t.info.tags["point"]) for t in traces) == sorted(
        points
    )
    named = [s for t in traces for s in t.data.spans if s.get_attribute("probe_id")]
    assert sorted(s.get_attribute("probe_id") for s in named) == sorted(p["id"] for p in probes)
    for span in named:
        assert span.inputs["gold"] and span.outputs["answer"]
    assert all(not t.info.assessments for t in traces)
    scores = {k: v for t in traces for k, v in t.data.spans[0].outputs["scores"].items()}
    assert sorted(scores) == sorted(p["id"] for p in probes)
