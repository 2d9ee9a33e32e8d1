"""Measures beside the score that need no answerer: fact survival, the control arm and
retention; and a question repeated at a later point counts once."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SMALL, compose_config, swe_agent_job

from benchmark.__main__ import run
from benchmark.config.schema import validate
from benchmark.probe.models import Evidence, Fact, Gold, Probe
from benchmark.probe.repeats import FirstAsked
from benchmark.run.pipeline import run_job
from benchmark.scoring.metric_names import layout_problems
from benchmark.scoring.survival import ContextFacts
from benchmark.transcript.models import Message, OpaqueItem


def _probe(facts: list[Fact], *, point: int = 0, question: str = "Which file?") -> Probe:
    return Probe(
        id=f"t:{point}:artifact:0",
        type="artifact",
        question=question,
        gold=Gold(answer="; ".join(f.text for f in facts), facts=facts),
        evidence=[Evidence(message_index=0, quote="x")],
        transcript_id="t",
        point=point,
        position=0.5,
    )


def test_survival_is_the_share_of_gold_facts_the_context_states():
    context = [
        Message(role="user", content="We edited src/app/db.py and pinned requests==2.31.0."),
        Message(role="assistant", content="The migration still fails on the users table."),
    ]
    facts = ContextFacts(context)
    kept = Fact(kind="modified", text="src/app/db.py")
    lost = Fact(kind="modified", text="src/app/models.py")
    near = Fact(kind="identifier", text="requests==2.31")  # a shorter pin is not the pin
    phrase = Fact(kind="pending", text="the migration still fails on the users table")
    assert facts.survival(_probe([kept, lost])) == 0.5
    assert facts.survival(_probe([kept, phrase])) == 1.0
    assert facts.survival(_probe([near])) == 0.0


def test_survival_of_an_encrypted_context_is_not_measured():
    item = OpaqueItem(encrypted_content="gAAAA", provider="default", model="m", tokens=10)
    facts = ContextFacts([Message(role="user", compaction=item)])
    assert facts.survival(_probe([Fact(kind="read", text="a.py")])) is None


def test_first_asked_drops_a_repeat_of_the_same_question_and_gold():
    fact = Fact(kind="read", text="a.py")
    first = FirstAsked()
    assert len(first([_probe([fact], point=0)])) == 1
    # Same question and gold at a later point: dropped. New gold or question: kept.
    later = [
        _probe([fact], point=1),
        _probe([Fact(kind="read", text="b.py")], point=1),
        _probe([fact], point=1, question="Which file was read?"),
    ]
    assert [p.gold.facts[0].text for p in first(later)] == ["b.py", "a.py"]
    assert first.repeated == 1


@pytest.fixture(scope="module")
def small_jobs():
    """One short session with several compaction points, with and without the control arm."""
    jobs = {}
    for policy in ("none", "truncate"):
        cfg = compose_config([*SMALL, f"policy={policy}", "control=true"])
        jobs[policy] = run_job(validate(cfg))
    return jobs


def test_job_never_asks_a_question_twice_in_a_session(small_jobs):
    result = small_jobs["truncate"]
    assert len(result.points) > 1
    keys = [
        (r.probe.transcript_id, r.probe.type, r.probe.question, tuple(r.probe.gold.facts))
        for r in result.probe_results
    ]
    assert len(keys) == len(set(keys))
    assert result.metrics()["probes/repeated"] == result.repeated_probes


def test_uncompacted_context_keeps_every_fact_and_retains_everything(small_jobs):
    metrics = small_jobs["none"].metrics()
    # Gold facts are verbatim in the session, so the uncompacted context states them all.
    assert metrics["headline/more/facts_survival"] == 1.0
    assert all(r.survival == 1.0 for r in small_jobs["none"].probe_results)
    # The control arm of `none` is `none` itself: the same answers, retention exactly 1.
    assert metrics["headline/more/retention"] == pytest.approx(1.0)
    assert metrics["retention/control_overall"] == pytest.approx(metrics["headline/overall"])


def test_uncompacted_context_keeps_every_fact_with_next_action_probes(shared_data):
    """A next step's target may be named nowhere before the point; the control still
    keeps every fact the session stated, so `none` survives 1.0 on every probe type."""
    types = "probe.types=[recall,artifact,continuation,decision,next_action]"
    cfg = compose_config(swe_agent_job(shared_data, "policy=none", "control=true", types))
    result = run_job(validate(cfg))
    metrics = result.metrics()
    assert metrics["headline/more/facts_survival"] == 1.0
    assert metrics["type/next_action/facts_survival"] == 1.0
    steps = [r for r in result.probe_results if r.probe.type == "next_action"]
    assert steps  # a step to a file named nowhere before its point has survival None
    assert all(r.survival in (None, 1.0) for r in result.probe_results)


def test_a_compacting_policy_loses_facts_and_score_against_its_control(small_jobs):
    none, truncate = small_jobs["none"].metrics(), small_jobs["truncate"].metrics()
    assert truncate["headline/more/facts_survival"] < 1.0
    survival = "headline/more/facts_survival"
    assert truncate[f"{survival}_lower"] <= truncate[survival]
    assert truncate["headline/more/retention"] < 1.0
    assert (
        truncate["headline/more/retention_lower"]
        <= truncate["headline/more/retention"]
        <= truncate["headline/more/retention_upper"]
    )
    # Both jobs ask the same probes, so the control arms agree.
    assert truncate["retention/control_overall"] == pytest.approx(none["retention/control_overall"])
    # Retention is the paired ratio of per-probe scores over the same probes.
    paired = [r for r in small_jobs["truncate"].probe_results if r.score is not None]
    expected = sum(r.score for r in paired) / sum(r.control.score for r in paired)
    assert truncate["headline/more/retention"] == pytest.approx(expected)


def test_without_control_there_is_no_retention():
    result = run_job(validate(compose_config([*SMALL, "policy=truncate"])))
    metrics = result.metrics()
    assert "headline/more/facts_survival" in metrics
    assert "headline/more/retention" not in metrics and "retention/control_overall" not in metrics
    assert all(r.control is None for r in result.probe_results)


def test_survival_and_retention_reach_mlflow(tmp_path, mlflow_store):
    store = tmp_path / "mlruns"
    overrides = ["tracking=mlflow", f"tracking.store_dir={store}", "control=true"]
    cfg = compose_config([*SMALL, "policy=truncate", *overrides])
    assert run(cfg) is not None

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (mlrun,) = client.search_runs([exp.experiment_id])
    metrics = mlrun.data.metrics
    assert layout_problems(metrics) == []  # the control arm's keys group too
    for name in (
        "headline/more/facts_survival",
        "headline/more/facts_survival_lower",
        "headline/more/retention",
        "headline/more/retention_upper",
    ):
        assert name in metrics, name
    assert 0 <= metrics["headline/more/facts_survival"] < 1
    assert 0 <= metrics["headline/more/retention"] < 1
    local = client.download_artifacts(mlrun.info.run_id, "scorecard.txt", str(tmp_path))
    text = Path(local).read_text()
    assert "headline/more/facts_survival" in text and "headline/more/retention" in text


def test_control_arm_runs_on_the_llm_path_and_its_judge_records_are_marked(openai_stub):
    from test_configs import scripted_llm

    openai_stub.reply = scripted_llm
    cfg = compose_config(
        [
            *SMALL,
            "policy=truncate",
            "control=true",
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "judge.endpoint.api_key_env=PATH",  # any set variable: the stub takes any key
            "probe.per_type=1",
        ]
    )
    result = run_job(validate(cfg))
    probes = len(result.probe_results)
    assert probes > 0 and len(openai_stub.requests) == 2 * probes
    arms = [r.get("arm") for r in result.judge_records]
    assert arms.count("control") == probes and arms.count(None) == probes
    assert all(r.control is not None and not r.control.failed for r in result.probe_results)
    assert "headline/more/retention" in result.metrics()
