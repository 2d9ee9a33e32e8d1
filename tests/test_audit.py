"""The judge audit: answers of known content, expected scores from the rubric, judges scored.

The offline reference judge runs the default audit in process; LLM judges run against
the loopback stub with scripted scorers the audit must catch; the CLI runs once as a
single job and once as a sweep, logging to a real MLflow store in tmp_path.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter

import pytest
from conftest import compose_config
from test_cli import run_cli as cli

from benchmark import tokens
from benchmark.__main__ import run
from benchmark.audit import VARIANTS
from benchmark.audit.answers import ABSTAIN, build_variants
from benchmark.audit.expected import expected_scores
from benchmark.audit.run import main as audit_main
from benchmark.audit.run import run_audit
from benchmark.audit.samples import SampleCache
from benchmark.audit.text import mentions, mutate
from benchmark.config import validate
from benchmark.errors import JobFailed, UserError
from benchmark.judge.matching import fact_matches
from benchmark.llm.cache import ResponseCache
from benchmark.probe.models import Evidence, Fact, Gold, Probe
from benchmark.stub.scripted import request_data

KEY_ENV = "BENCH_AUDIT_TEST_KEY"
OFFLINE = ["tracking=disabled", "cache.dir=null", "execution.progress=off"]
# One session, one point, one probe per type: ~20 answers, seconds against the stub.
TINY = ["audit.sessions=1", "audit.points=1", "audit.per_type=1"]


def probe(facts: list[Fact], ptype: str = "artifact") -> Probe:
    return Probe(
        id="t/p0/artifact/0",
        type=ptype,
        question="Which files did we touch?",
        gold=Gold(answer="see facts", facts=facts),
        evidence=[Evidence(message_index=0, quote="x")],
        transcript_id="t",
        point=0,
        position=0.5,
    )


FACTS = [
    Fact(kind="created", text="src/app/pool.py"),
    Fact(kind="created", text="tests/test_pool.py"),
    Fact(kind="modified", text="src/app/db.py"),
    Fact(kind="detail", text="the pool timeout was raised to 30 seconds"),
    Fact(kind="pending", text="add jitter to the reconnect loop"),
]


# -- expectations, by hand from the rubric's table --------------------------------------------


def test_expected_scores_follow_the_rubric_table():
    every = [
        "accuracy_factual",
        "accuracy_technical",
        "context_artifact_state",
        "artifact_files_created",
        "artifact_files_modified",
        "artifact_key_details",
        "completeness_coverage",
        "continuity_todo_state",
        "continuity_reasoning",
        "continuity_work_state",
        "recall_correctness",
        "instruction_format",
        "instruction_constraints",
    ]
    got = expected_scores(
        every, FACTS, {0, 2, 3}, invented=0, answer_tokens=40, token_limit=1000, scale=5
    )
    assert got == {
        "accuracy_factual": 3,  # 3/5 facts
        "accuracy_technical": 3,  # 2/3 exact facts = 3.33
        "context_artifact_state": 3,  # 2/3 files
        "artifact_files_created": 3,  # 1/2 = 2.5, half rounds up
        "artifact_files_modified": 5,
        "artifact_key_details": 5,  # the one detail
        "completeness_coverage": 4,  # created, modified, detail of 4 kinds = 3.75
        "continuity_todo_state": 0,
        "continuity_reasoning": 3,  # no reasoning facts: all facts, 3/5
        "continuity_work_state": 3,  # pending + detail: 1/2
        "recall_correctness": 3,
        "instruction_format": 5,
        "instruction_constraints": 5,
    }
    penalised = expected_scores(
        ["accuracy_factual", "instruction_constraints", "instruction_format"],
        FACTS,
        {0, 2, 3},
        invented=2,
        answer_tokens=1200,
        token_limit=1000,
        scale=5,
    )
    assert penalised == {
        "accuracy_factual": 1,
        "instruction_constraints": 3,
        "instruction_format": 4,  # 5 * 1000/1200 = 4.17
    }
    verdict = ["recall_correctness"]
    assert expected_scores(verdict, FACTS, {0}, **_plain(scale=2)) == {"recall_correctness": 1}
    assert expected_scores(verdict, FACTS, set(), **_plain(scale=2)) == {"recall_correctness": 0}
    assert expected_scores(verdict, FACTS, range(5), **_plain(scale=2)) == {"recall_correctness": 2}
    empty = expected_scores(every, FACTS, range(5), **_plain(answer_tokens=0))
    assert set(empty.values()) == {0}


def _plain(scale: int = 5, answer_tokens: int = 20) -> dict:
    return {"invented": 0, "answer_tokens": answer_tokens, "token_limit": 1000, "scale": scale}


# -- answers of known content ----------------------------------------------------------------


def test_mutation_changes_every_exact_value():
    assert mutate("src/app/pool.py", whole=True) == "src/app/pools.py"
    assert mutate("pillow==9.5.0") == "pillow==9.5.1"
    assert mutate("assert 40.0 <= 10") == "assert 40.1 <= 11"
    assert mutate("pytest tests/test_db.py -q --lf") == "pytest tests/test_dbs.py -r --no-lf"
    assert mutate("adding `# noqa: F401`") == "adding `# noqa: F402`"
    assert mutate("TokenBucket", whole=True) == "TokenBuckets"
    assert mutate("keep the handler simple") is None  # a phrase with no exact value
    for attempt in range(3):
        assert mutate("requirements.txt", attempt, whole=True) != "requirements.txt"


def test_variants_state_exactly_what_they_are_built_to():
    p = probe(FACTS)
    v = build_variants(p, ["full", "partial", "none", "wrong", "abstain", "padded"], seed=1)
    assert not v.skipped
    full, stated = v.answers["full"]
    assert stated == (0, 1, 2, 3, 4) and all(f.text in full for f in FACTS)
    half, chosen = v.answers["partial"]
    assert len(chosen) == 2
    for i, fact in enumerate(FACTS):
        assert (fact.text in half) == (i in chosen)
        assert mentions(fact, half) == (i in chosen)
    wrong, none_stated = v.answers["wrong"]
    assert none_stated == ()
    for fact in FACTS:
        assert fact.text not in wrong
    assert "src/app/pools.py" in wrong and "raised to 31 seconds" in wrong
    assert v.answers["abstain"] == (ABSTAIN, ())
    nothing, _ = v.answers["none"]
    assert not any(mentions(f, nothing) for f in FACTS)
    padded, _ = v.answers["padded"]
    assert padded.startswith(full)
    assert tokens.count(padded) >= tokens.count(full) + 300


def test_a_variant_that_cannot_be_built_cleanly_is_skipped_not_faked():
    one = build_variants(probe(FACTS[:1]), ["partial", "full"])
    assert "partial" in one.skipped and "full" in one.answers
    # Two phrases that share their words: no half leaves the other untouched.
    twins = [
        Fact(kind="pending", text="ask Jonas about the staging rollout"),
        Fact(kind="pending", text="ask Jonas about the staging rollout date"),
    ]
    assert "partial" in build_variants(probe(twins, "continuation"), ["partial"]).skipped


def test_sample_cache_keys_each_sample_apart(tmp_path):
    plain = ResponseCache(tmp_path, "use")
    views = [SampleCache(tmp_path, "use", k) for k in range(3)]
    for k, view in enumerate(views):
        view.put("request-key", 0, {"text": f"reply {k}"})
    assert [v.get("request-key") for v in views] == [{"text": f"reply {k}"} for k in range(3)]
    assert plain.get("request-key") is None  # a normal job's key is untouched
    assert len({v.salted("request-key") for v in views}) == 3
    for cache in (plain, *views):
        cache.close()


# -- the offline reference judge -------------------------------------------------------------


@pytest.fixture(scope="module")
def reference_audit():
    return run_audit(validate(compose_config(["+audit=judge", "judge=reference", *OFFLINE])))


def test_default_audit_is_about_forty_probes_of_every_type(reference_audit):
    r = reference_audit
    assert 36 <= r.probes <= 60
    assert {i.probe.type for i in r.items} == {"recall", "artifact", "continuation", "decision"}
    assert {i.variant for i in r.items} == set(VARIANTS)
    assert all(len(i.samples) == 3 for i in r.items)
    assert sum(r.skipped.values()) < 0.1 * len(r.items)


def test_reference_judge_is_exact_on_every_variant(reference_audit):
    m = reference_audit.metrics
    for variant in ("full", "partial", "none", "wrong", "abstain", "padded"):
        rate = m.by_variant[variant]
        assert rate.n > 0 and rate.exact_agreement == 1.0, variant
    assert m.consistency == 1.0 and m.consistency_std == 0.0
    assert m.verbosity_inflation == 0.0 and m.verbosity_delta == 0.0
    assert m.failures == 0


def test_reference_judge_agrees_with_planted_gold(reference_audit):
    """The issue's check (>= 98%). The audit found the judge crediting phrase facts whose
    exact value was changed ("pinning marshmallow to 3.21.4" for gold "... 3.21.3": 97.0%
    before); phrase matching now requires every exact value of the phrase."""
    m = reference_audit.metrics
    print(f"reference judge: agreement {m.agreement:.4f}, exact {m.overall.exact_agreement:.4f}")
    assert m.agreement >= 0.98
    assert m.by_variant["wrong"].n > 0


def test_a_changed_value_inside_a_phrase_is_not_credited(reference_audit):
    for item in reference_audit.items:
        if item.variant != "wrong":
            continue
        for fact in item.probe.gold.facts:
            if fact.text not in item.answer:  # the answer holds a changed value, not the fact
                assert not fact_matches(fact, item.answer), (item.id, fact.text)


# -- LLM judges on the stub ------------------------------------------------------------------


def criteria_of(body: dict) -> list[str]:
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
    if schema:
        return schema["properties"]["criterionResults"]["items"]["properties"]["criterionId"][
            "enum"
        ]
    payload = json.loads(body["messages"][-1]["content"])
    return [c["criterionId"] for c in payload["criteria"]]


def scorer(score_of) -> callable:
    """A stub reply hook grading every requested criterion with ``score_of(body, response)``."""

    def reply(body: dict) -> str:
        response = request_data(body)["model_response"]
        results = [
            {"criterionId": c, "score": score_of(body, response), "reasoning": "scripted"}
            for c in criteria_of(body)
        ]
        return json.dumps({"criterionResults": results})

    return reply


def stub_config(stub, tmp_path, *extra: str):
    return validate(
        compose_config(
            [
                "+audit=judge",
                "judge=gpt4o",
                f"judge.endpoint.base_url={stub.base_url}",
                f"judge.endpoint.api_key_env={KEY_ENV}",
                "judge.endpoint.max_retries=0",
                *TINY,
                "tracking=disabled",
                f"cache.dir={tmp_path / 'cache'}",
                "execution.progress=off",
                *extra,
            ]
        )
    )


@pytest.fixture
def stub(openai_stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    return openai_stub


def test_an_always_five_judge_is_caught(stub, tmp_path):
    stub.reply = scorer(lambda body, response: 5)
    result = run_audit(stub_config(stub, tmp_path))
    m = result.metrics
    assert m.by_variant["full"].exact_agreement == 1.0  # full answers do deserve 5
    assert m.by_variant["none"].agreement < 0.5
    assert m.by_variant["wrong"].agreement < 0.5
    assert m.agreement < 0.75
    assert m.consistency == 1.0 and m.failures == 0
    # K samples are K requests: the cache keys them apart, nothing is collapsed.
    bodies = Counter(json.dumps(r.body, sort_keys=True) for r in stub.requests)
    assert len(stub.requests) == 3 * len(result.items)
    assert len(bodies) == len(result.items) and set(bodies.values()) == {3}
    assert result.usage["llm/judge/calls"] == 3 * len(result.items)


def test_a_length_loving_judge_shows_verbosity_inflation(stub, tmp_path):
    stub.reply = scorer(lambda body, response: min(5, len(response) // 250))
    m = run_audit(stub_config(stub, tmp_path)).metrics
    assert m.verbosity_inflation > 0 and m.verbosity_delta > 0
    assert m.agreement < 0.9


def test_a_noisy_judge_is_inconsistent_and_a_rerun_replays_it(stub, tmp_path):
    seen: Counter = Counter()
    lock = threading.Lock()

    def reply(body: dict) -> str:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:  # the n-th arrival of this exact request (sample n) gets its own score
            n = seen[digest]
            seen[digest] += 1
        return scorer(lambda body, response: (n + len(response)) % 6)(body)

    stub.reply = reply
    config = stub_config(stub, tmp_path)
    first = run_audit(config)
    assert first.metrics.consistency == 0.0 and first.metrics.consistency_std > 0
    sent = len(stub.requests)
    assert sent == 3 * len(first.items)
    again = run_audit(config)  # same cache: every sample replays its own stored reply
    assert len(stub.requests) == sent
    assert [i.samples for i in again.items] == [i.samples for i in first.items]


def test_failed_judgments_are_counted_not_scored(stub, tmp_path):
    def reply(body: dict) -> str:
        if request_data(body)["model_response"] == ABSTAIN:
            return "no JSON here"
        return scorer(lambda body, response: 5)(body)

    stub.reply = reply
    config = stub_config(stub, tmp_path)
    result = run_audit(config)
    abstains = sum(i.variant == "abstain" for i in result.items)
    assert abstains and result.metrics.failures == 3 * abstains
    assert "abstain" not in result.metrics.by_variant
    assert "audit/agreement/variant/abstain" not in result.metrics.flat()
    with pytest.raises(JobFailed, match="audit judgments failed"):
        audit_main(config, {})


# -- config and command line -----------------------------------------------------------------


def test_bad_audit_values_fail_in_one_line_naming_the_key():
    with pytest.raises(UserError, match="config key 'audit.samples'"):
        validate(compose_config(["+audit=judge", "audit.samples=0", *OFFLINE]))
    with pytest.raises(UserError, match="config key 'audit.variants.1'"):
        validate(compose_config(["+audit=judge", "audit.variants=[full,loud]", *OFFLINE]))
    cfg = compose_config(["+audit=judge", "audit.tail_tokens=20000", *OFFLINE])
    with pytest.raises(UserError, match="config key 'audit.tail_tokens'") as err:
        run(cfg)
    assert "\n" not in str(err.value)


def test_missing_judge_key_fails_before_any_request(stub, monkeypatch, tmp_path):
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(UserError, match=KEY_ENV):
        audit_main(stub_config(stub, tmp_path), {})
    assert stub.requests == []


def test_run_without_tracking_returns_the_agreement():
    value = run(compose_config(["+audit=judge", "judge=reference", *TINY, *OFFLINE]))
    assert value is not None and 0.9 <= value <= 1.0


def mlflow_runs(tmp_path):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    return client, client.search_runs([exp.experiment_id])


def test_cli_audit_prints_the_summary_and_logs_a_run(tmp_path):
    proc = cli(["+audit=judge", "judge=reference"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Judge audit: judge=reference" in proc.stdout
    assert "consistency over 3 samples" in proc.stdout and "verbosity" in proc.stdout
    client, runs = mlflow_runs(tmp_path)
    assert len(runs) == 1
    run_ = runs[0]
    assert run_.info.run_name == "audit:judge@reference"
    assert run_.info.status == "FINISHED"
    assert run_.data.tags["audit"] == "judge"
    metrics = run_.data.metrics
    for name in (
        "audit/agreement",
        "audit/agreement_exact",
        "audit/agreement/type/recall",
        "audit/agreement/type/decision",
        "audit/agreement/criterion/accuracy_factual",
        "audit/agreement/variant/wrong",
        "audit/consistency",
        "audit/consistency_std",
        "audit/verbosity_inflation",
        "audit/verbosity_delta",
        "audit/failures",
    ):
        assert name in metrics, name
    assert metrics["audit/consistency"] == 1.0 and metrics["audit/verbosity_inflation"] == 0.0
    assert metrics["audit/failures"] == 0
    assert run_.data.params["audit.samples"] == "3" and run_.data.params["judge.name"] == (
        "reference"
    )
    artifacts = {a.path for a in client.list_artifacts(run_.info.run_id)}
    assert {"audit_items.jsonl", "audit_table.json", "audit_summary.txt", "config.yaml"} <= (
        artifacts
    )
    local = client.download_artifacts(run_.info.run_id, "audit_items.jsonl", str(tmp_path))
    with open(local) as lines:
        items = [json.loads(line) for line in lines]
    assert {i["variant"] for i in items} == set(VARIANTS)
    first = items[0]
    assert first["expected"] and len(first["samples"]) == 3 and first["answer"]
    judged = sum(len(i["expected"]) * len(i["samples"]) for i in items)
    assert judged == metrics["audit/judgments"]
    from benchmark.report.load import select

    with pytest.raises(UserError, match="no finished runs"):  # a report leaves audits out
        select(client, None, "compaction-benchmark")


def test_cli_audit_sweep_logs_one_tagged_run_per_job(tmp_path):
    proc = cli(
        ["-m", "+audit=judge", "judge=reference", "audit.samples=1,2", *TINY],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _, runs = mlflow_runs(tmp_path)
    assert len(runs) == 2
    assert {r.data.tags["audit"] for r in runs} == {"judge"}
    assert len({r.data.tags["sweep"] for r in runs}) == 1
    by_samples = {r.data.params["audit.samples"]: r.data.metrics for r in runs}
    assert "audit/consistency" not in by_samples["1"]  # one sample: nothing to compare
    assert by_samples["2"]["audit/consistency"] == 1.0
