"""The judge audit: answers of known content, expected scores from the rubric, judges scored.

The offline reference judge runs the default audit in process; LLM judges run against
the loopback stub with scripted scorers the audit must catch; the CLI runs once as a
single job and once as a sweep, logging to a real MLflow store in tmp_path.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import get_args

import pytest
from conftest import compose_config
from rich.console import Console
from test_cli import run_cli as cli

from benchmark.__main__ import run
from benchmark.audit import VARIANTS
from benchmark.audit.answer_text import mentions, mutate, near_miss
from benchmark.audit.answers import ABSTAIN, build_variants
from benchmark.audit.expected import BANDS, EXPECT, SCOPED, SHARE, Class, expected_bands
from benchmark.audit.paraphrase import reword
from benchmark.audit.run import audit, run_audit
from benchmark.audit.samples import SampleCache
from benchmark.audit.summary import render
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.judge.base import CriterionResult, JudgeRequest, Judgment
from benchmark.judge.matching import fact_matches
from benchmark.llm.reply_cache import ResponseCache
from benchmark.probe.models import Evidence, Fact, Gold, Probe
from benchmark.scoring.metric_names import layout_problems
from benchmark.stub.scripted import request_data
from benchmark.text import tokens

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


# -- expectations, from how each variant is built --------------------------------------------


def test_every_variant_has_a_band_for_every_criterion_class():
    assert set(EXPECT) == set(VARIANTS)
    for row in EXPECT.values():
        assert set(row) == set(get_args(Class))
        assert all(band in (*BANDS, SHARE, SCOPED) for band in row.values())


def test_bands_hold_on_the_0_to_5_and_the_2_1_0_scales():
    def held(band: str, scale: int) -> list[int]:
        return [x for x in range(scale + 1) if BANDS[band].holds(x, scale)]

    assert held("top", 5) == [5] and held("high", 5) == [4, 5]
    assert held("mid", 5) == [1, 2, 3, 4] and held("credit", 5) == [2, 3, 4, 5]
    assert (
        held("low", 5) == [0, 1]
        and held("zero", 5) == [0]
        and held("below_top", 5) == [0, 1, 2, 3, 4]
    )
    assert held("high", 2) == [2] and held("mid", 2) == [1] and held("low", 2) == [0]


def test_expected_bands_follow_what_the_answer_states():
    criteria = [
        "accuracy_factual",
        "artifact_files_created",
        "artifact_files_modified",
        "continuity_todo_state",
        "continuity_reasoning",
        "completeness_depth",
        "instruction_format",
        "instruction_constraints",
    ]
    # The half states one created file (of 2), the modified file, not the pending task.
    half = expected_bands(criteria, "partial", FACTS, {0, 2})
    assert half == {
        "accuracy_factual": "credit",
        "artifact_files_created": "mid",
        "artifact_files_modified": "top",
        "continuity_todo_state": "low",
        "continuity_reasoning": "any",  # the gold has no reasoning fact
        "completeness_depth": "mid",
        "instruction_format": "high",
        "instruction_constraints": "high",
    }
    # One created file one character off: what asks about created files is not full credit.
    miss = expected_bands(criteria, "near_miss", FACTS, {1, 2, 3, 4})
    assert miss["artifact_files_created"] == "mid" and miss["artifact_files_modified"] == "top"
    assert miss["accuracy_factual"] == "below_top" and miss["completeness_depth"] == "any"
    assert set(expected_bands(criteria, "abstain", FACTS, ()).values()) == {"zero"}
    assert expected_bands(["recall_correctness"], "near_miss", FACTS[:1], ()) == {
        "recall_correctness": "low"
    }
    with pytest.raises(KeyError):
        expected_bands(["made_up"], "full", FACTS, ())


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


def test_variants_a_lenient_judge_would_over_score_are_built_from_the_gold():
    session = "we opened src/app/pool.py and src/app/db.py"
    wanted = ["full", "paraphrase", "extra_wrong", "near_miss", "confident_wrong"]
    v = build_variants(probe(FACTS), wanted, seed=1, session=session)
    assert not v.skipped
    full, _ = v.answers["full"]
    # paraphrase: every fact stated in other words, exact values verbatim
    para, stated = v.answers["paraphrase"]
    assert stated == (0, 1, 2, 3, 4) and para != full
    assert all(f.text in para for f in FACTS if f.kind in ("created", "modified"))
    assert "raised to 30 seconds" in para and "introduce jitter to the reconnect loop" in para
    # a verb is swapped, a noun after an article stays, code and values stay
    assert (
        reword("run the check on `fix.py` and fix 3.2")
        == "execute the check on `fix.py` and repair 3.2"
    )
    # extra_wrong: the full answer plus one false line of a gold fact's kind
    extra, stated = v.answers["extra_wrong"]
    assert stated == (0, 1, 2, 3, 4)
    added = [line for line in extra.splitlines() if line not in full.splitlines()]
    assert len(added) == 1 and len(extra.splitlines()) == len(FACTS) + 1
    assert not any(f.text in added[0] for f in FACTS if f.kind != "detail")
    # near_miss: one exact value one character off, that fact not stated, absent from the session
    miss, stated = v.answers["near_miss"]
    (gone,) = set(range(5)) - set(stated)
    changed = [line for line in miss.splitlines() if line not in full.splitlines()]
    original = FACTS[gone].text
    assert len(changed) == 1 and not mentions(FACTS[gone], miss)
    new = changed[0].split(": ", 1)[1]
    assert abs(len(new) - len(original)) <= 1 and new not in session
    assert near_miss("src/utils.py") == "src/util.py" and near_miss("pin 3.21.4") == "pin 3.21.5"
    assert near_miss("TokenBucket", whole=True) == "TokenBuckets"
    # confident_wrong: full's form and length in lines, no gold fact touched
    bad, stated = v.answers["confident_wrong"]
    assert stated == () and len(bad.splitlines()) == len(full.splitlines())
    assert [line.split(":")[0] for line in bad.splitlines()] == [
        line.split(":")[0] for line in full.splitlines()
    ]
    assert not any(mentions(f, bad) for f in FACTS)


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


def readme_figures() -> dict[str, str]:
    """variant -> the reference judge's agreement, from the docs' variant table
    (docs/answerer-and-judge.md, "Auditing the judge")."""
    text = (Path(__file__).parents[1] / "docs" / "answerer-and-judge.md").read_text()
    section = text[text.index("## Auditing the judge") :]
    end = section.find("\n## ", 5)
    section = section if end < 0 else section[:end]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    return {row[1].strip().strip("`"): row[-2].strip() for row in rows}


def test_reference_judge_scores_each_variant_as_the_readme_says(reference_audit):
    m = reference_audit.metrics
    figures = readme_figures()
    assert set(figures) == set(VARIANTS)
    got = {v: f"{m.by_variant[v].agreement:.1%}" for v in VARIANTS}
    print("reference judge per variant:", got)
    assert got == figures
    # The prose under the table types the same run's totals and its shortfalls: they too.
    text = (Path(__file__).parents[1] / "docs" / "answerer-and-judge.md").read_text()
    totals = re.search(r"\(([\d,]+) counted\s+judgments, ([\d.]+%) overall", text)
    assert totals, "the docs' audit totals line"
    assert totals[1].replace(",", "") == str(m.judgments)
    assert totals[2] == f"{m.agreement:.1%}"
    for variant, figure in re.findall(r"^- `(\w+)` ([\d.]+%)", text, re.M):
        assert got[variant] == figure, variant
    assert m.consistency == 1.0 and m.consistency_std == 0.0
    assert m.verbosity_inflation == 0.0 and m.verbosity_delta == 0.0
    assert m.failures == 0


def test_reference_judge_is_right_where_the_construction_is_plain(reference_audit):
    """Full, none, wrong and confident_wrong answers leave a judge nothing to interpret."""
    m = reference_audit.metrics
    for variant in ("full", "none", "wrong", "confident_wrong", "padded"):
        assert m.by_variant[variant].agreement == 1.0, variant
    cells = m.groups["variant_class"]
    assert cells["abstain/accuracy"].agreement == cells["abstain/coverage"].agreement == 1.0


class LenientJudge:
    """Top marks for any non-empty answer: the judge the audit exists to catch."""

    def __init__(self, **_: object) -> None:
        pass

    def judge(self, request: JudgeRequest) -> Judgment:
        score = request.scale_max if request.model_response.strip() else 0
        return Judgment(
            results=[CriterionResult(criterion=c, score=score) for c in request.rubric_criteria]
        )


def test_a_lenient_judge_fails_the_audit_where_it_over_scores():
    config = validate(
        compose_config(
            ["+audit=judge", "judge=reference", "judge._target_=test_audit.LenientJudge", *TINY]
            + OFFLINE
        )
    )
    result = run_audit(config)
    m = result.metrics
    assert m.by_variant["full"].agreement == 1.0
    for variant in ("wrong", "confident_wrong", "none", "abstain"):
        assert m.by_variant[variant].agreement < 0.3, variant
    cells = m.groups["variant_class"]
    assert cells["extra_wrong/accuracy"].agreement == 0.0  # a false extra fact costs nothing
    assert cells["near_miss/accuracy"].agreement == 0.0
    assert m.agreement < 0.7
    flat = m.flat()
    assert flat["audit/agreement/variant/confident_wrong"] < 0.3
    assert flat["audit/agreement/variant/extra_wrong/accuracy"] == 0.0
    out = io.StringIO()
    text = render(result, Console(file=out, width=200))
    matrix = next(line for line in text.splitlines() if line.strip("│ ").startswith("extra_wrong"))
    assert matrix.split("│")[2].strip().startswith("0.0%")  # the accuracy column


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
    assert m.by_variant["full"].agreement == 1.0  # full answers do deserve 5
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
    record, outcome = audit(config, {})
    assert "audit judgments failed" in outcome.failure  # raised once the record is logged
    assert record.metrics["audit/failures"] == 3 * abstains
    assert layout_problems(record.metrics) == []  # audit/* and the judge's llm/* usage
    assert record.metrics["llm/cost_usd"] >= 0 and "cost_usd" not in record.metrics


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
        audit(stub_config(stub, tmp_path), {})
    assert stub.requests == []


def test_run_without_tracking_returns_the_agreement():
    value = run(compose_config(["+audit=judge", "judge=reference", *TINY, *OFFLINE]))
    assert value is not None and 0.9 <= value <= 1.0


def mlflow_runs(tmp_path):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    runs = client.search_runs([exp.experiment_id])
    return client, [r for r in runs if "sweep_parent" not in r.data.tags]  # a sweep's parent


def test_cli_audit_prints_the_summary_and_logs_a_run(tmp_path, mlflow_store):
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
        "audit/agreement/class/accuracy",
        "audit/agreement/variant/extra_wrong",
        "audit/agreement/variant/extra_wrong/accuracy",
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
    assert metrics["audit/failures"] == 0 and layout_problems(metrics) == []
    assert run_.data.params["audit.samples"] == "3" and run_.data.params["judge.name"] == (
        "reference"
    )
    # Params as a job's: lists as text, no operational keys (run_record.run_params).
    assert run_.data.params["audit.variants"].startswith("full, partial, none, ")
    assert not [k for k in run_.data.params if k.split(".")[0] in ("cache", "tracking")]
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
    counted = [b for i in items for b in i["expected"].values() if b != "any"]
    judged = sum(sum(b != "any" for b in i["expected"].values()) * len(i["samples"]) for i in items)
    assert counted and judged
    local = client.download_artifacts(run_.info.run_id, "audit_table.json", str(tmp_path))
    with open(local) as handle:
        table = json.load(handle)
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    assert {r["variant"] for r in rows} == set(VARIANTS)
    assert {r["class"] for r in rows} == {"accuracy", "coverage", "form", "constraints"}
    assert all((r["agree"] is None) == (r["expected"] == "any") for r in rows)
    assert judged == metrics["audit/judgments"]
    from benchmark.report.load import select

    with pytest.raises(UserError, match="no finished runs"):  # a report leaves audits out
        select(client, None, "compaction-benchmark")


def test_cli_audit_sweep_logs_one_tagged_run_per_job(tmp_path, mlflow_store):
    proc = cli(
        ["-m", "+audit=judge", "judge=reference", "audit.samples=1,2", *TINY],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _, runs = mlflow_runs(tmp_path)
    assert len(runs) == 2
    assert {r.data.tags["audit"] for r in runs} == {"judge"}
    assert len({r.data.tags["sweep"] for r in runs}) == 1
    assert {r.info.run_name for r in runs} == {
        f"audit:judge@reference · audit.samples={n}" for n in (1, 2)
    }
    by_samples = {r.data.params["audit.samples"]: r.data.metrics for r in runs}
    assert "audit/consistency" not in by_samples["1"]  # one sample: nothing to compare
    assert by_samples["2"]["audit/consistency"] == 1.0
