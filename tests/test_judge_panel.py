"""Judge panels: agreement statistics, combine rules, and real jobs against the loopback stub."""

from __future__ import annotations

import hashlib
import json
import math
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from conftest import SMALL, compose_config
from openai_stub import Fault, OpenAIStub

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.judge import JudgeRequest, LLMJudge
from benchmark.judge.agreement import agreement_metrics, cohen_kappa, krippendorff_alpha
from benchmark.judge.panel import PanelJudge, combine_scores
from benchmark.judge.prompts import CRITERIA
from benchmark.probe.models import Fact, Gold
from benchmark.run.parts import build_parts
from benchmark.run.pipeline import run_job
from benchmark.scoring.metric_names import layout_problems
from benchmark.transcript.models import Message

NA = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the worked example:
# 4 observers, 12 units, missing values. Published: nominal 0.743, ordinal 0.815.
TEXTBOOK = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
]


# -- agreement statistics ----------------------------------------------------------------


def test_alpha_textbook_example():
    assert round(krippendorff_alpha(TEXTBOOK, scale_max=5), 3) == 0.815
    # The same data as panel units: one (criterion, {member: score}) per column.
    names = ["a", "b", "c", "d"]
    units = [("c1", {n: row[u] for n, row in zip(names, TEXTBOOK, strict=True)}) for u in range(12)]
    metrics = agreement_metrics(units, names, scale_max=5)
    assert round(metrics["judge/alpha"], 3) == 0.815
    assert metrics["judge/alpha/c1"] == metrics["judge/alpha"]


def test_alpha_hand_computed():
    # Binary, 2 members, units (0,0) (0,0) (1,1) (0,1): n0=5, n1=3, o01+o10=2, n=8:
    # alpha = 1 - (n-1) * 2 / (2 * n0 * n1) = 1 - 14/30.
    assert krippendorff_alpha([[0, 0, 1, 0], [0, 0, 1, 1]], 1) == pytest.approx(16 / 30)
    # Ordinal, units (0,1) (1,2) (2,2): n = (1, 2, 3); delta01 = 1.5^2, delta12 = 2.5^2,
    # delta02 = (6 - 2)^2; alpha = 1 - 5 * 17 / 180 = 19/36 (interval would give 0.5).
    ordinal = [[0, 1, 2], [1, 2, 2]]
    assert krippendorff_alpha(ordinal, scale_max=2) == pytest.approx(19 / 36)
    # Unused scale points carry no mass: the same on 0..5.
    assert krippendorff_alpha(ordinal, scale_max=5) == pytest.approx(19 / 36)
    # Fractional scores join the ordinal domain.
    assert krippendorff_alpha([[0, 2.5, 5], [0, 2.5, 5]], scale_max=5) == 1.0


def test_alpha_edge_cases():
    # Perfect agreement with variation: 1.0.
    assert krippendorff_alpha([[1, 3, 5], [1, 3, 5], [1, 3, 5]], 5) == 1.0
    # All raters identical and no variation at all: undefined (NaN), not 1.0.
    assert math.isnan(krippendorff_alpha([[4, 4, 4], [4, 4, 4]], 5))
    # A single unit: no variation if they agree (NaN); 0 if they differ.
    assert math.isnan(krippendorff_alpha([[3], [3]], 5))
    assert krippendorff_alpha([[2], [3]], 5) == pytest.approx(0.0)
    # No unit with two scores (a failed member everywhere the other scored): NaN.
    assert math.isnan(krippendorff_alpha([[1, NA, 2], [NA, 3, NA]], 5))
    # Fewer than two members: NaN, and no agreement metrics at all.
    assert math.isnan(krippendorff_alpha([[1, 2, 3]], 5))
    assert agreement_metrics([("c", {"a": 1.0})], ["a"], 5) == {}


def table_kappa(a: list[float], b: list[float], quadratic: bool) -> float:
    """Cohen's kappa the textbook way: a contingency table and a weight matrix."""
    cats = sorted(set(a) | set(b))
    k = len(cats)
    obs = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        obs[cats.index(x), cats.index(y)] += 1 / len(a)
    exp = np.outer(obs.sum(axis=1), obs.sum(axis=0))
    i, j = np.indices((k, k))
    w = (np.array(cats)[i] - np.array(cats)[j]) ** 2 if quadratic else (i != j).astype(float)
    return 1 - (w * obs).sum() / (w * exp).sum()


def test_kappa_published_and_hand_computed():
    # The classic 50-item yes/no example (20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no):
    # p_o = 0.7, p_e = 0.5, kappa = 0.4; with two categories the weights change nothing.
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b, None) == pytest.approx(0.4)
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(0.4)
    # 0..2 by hand: sum w*O = 2 * 1/4 * 1 = 0.5, sum w*E = 1.375 -> 1 - 0.5/1.375 = 7/11;
    # unweighted: p_o = 0.5, p_e = 1/16 + 1/16 + 1/4 = 0.375 -> 0.2.
    a, b = [0, 1, 2, 2], [0, 2, 2, 1]
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(7 / 11)
    assert cohen_kappa(a, b, None) == pytest.approx(0.2)
    for quadratic in (True, False):
        assert table_kappa(a, b, quadratic) == pytest.approx(7 / 11 if quadratic else 0.2)


def test_kappa_missing_and_undefined():
    # Units either member missed are left out: the same as the hand example.
    a, b = [0, 1, NA, 2, 2, 3], [0, 2, 4, 2, 1, NA]
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(7 / 11)
    assert math.isnan(cohen_kappa([5, 5, 5], [5, 5, 5], "quadratic"))
    assert math.isnan(cohen_kappa([5, 5, 5], [5, 5, 5], None))
    assert math.isnan(cohen_kappa([1, NA], [NA, 2], "quadratic"))
    assert cohen_kappa([1, 2, 3], [1, 2, 3], None) == 1.0


def test_agreement_metric_names():
    units = [
        ("accuracy_factual", {"a": 1.0, "b": 2.0, "c": 1.0}),
        ("accuracy_factual", {"a": 4.0, "b": 4.0, "c": 5.0}),
        ("instruction_format", {"a": 5.0, "b": 5.0}),  # c failed on this judgment
        ("instruction_format", {"a": 3.0, "b": 2.0}),
    ]
    metrics = agreement_metrics(units, ["a", "b", "c"], 5)
    assert set(metrics) == {
        "judge/alpha",
        "judge/alpha/accuracy_factual",
        "judge/alpha/instruction_format",
        *(
            f"judge/{k}/{x}/{y}"
            for k in ("kappa", "kappa_unweighted")
            for x, y in ["ab", "ac", "bc"]
        ),
    }
    rows = [[u[1].get(m) for u in units] for m in "abc"]
    expected = krippendorff.alpha(
        reliability_data=np.array(rows, dtype=float),
        value_domain=range(6),
        level_of_measurement="ordinal",
    )
    assert metrics["judge/alpha"] == pytest.approx(expected)
    assert metrics["judge/kappa/a/c"] == pytest.approx(table_kappa([1, 4], [1, 5], True))


# -- combine rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "scores", "expected"),
    [
        ("mean", [3, 4, 4], 11 / 3),  # not rounded
        ("mean", [2.5], 2.5),
        ("median", [1, 5, 2], 2),
        ("median", [1, 2, 4, 5], 3),
        ("majority", [4, 2, 4], 4),
        ("majority", [2, 4], 2),  # a tie goes to the lower score
        ("majority", [5, 3, 1], 1),
        ("majority", [3, 5, 5, 3, 0], 3),
    ],
)
def test_combine_rules(rule, scores, expected):
    assert combine_scores(rule, scores) == pytest.approx(expected)


def test_combine_rejects_nothing_and_unknown_rules():
    with pytest.raises(ValueError, match="no scores"):
        combine_scores("mean", [])
    with pytest.raises(ValueError, match="unknown combine rule 'mode'"):
        combine_scores("mode", [1])


# -- the panel judge against the stub ----------------------------------------------------

KEY_ENV = "BENCH_TEST_PANEL_KEY"
MODELS = {"a": "judge-a", "b": "judge-b"}


def scores_for(body: dict) -> dict[str, int]:
    """Controlled disagreement: judge-a scores from a hash of the prompt; judge-b gives the
    same, one higher on every second criterion (capped at 5)."""
    prompt = json.dumps(body["messages"])
    seed = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)
    asked = sorted(c for c in CRITERIA if c in prompt)
    out = {}
    for i, c in enumerate(asked):
        base = (seed + 3 * i) % 6
        out[c] = base if body["model"] != "judge-b" else min(5, base + i % 2)
    return out


def panel_reply(body: dict) -> str | Fault:
    if body["model"] == "judge-fail":
        return Fault.status(500)
    results = [
        {"criterionId": c, "score": s, "reasoning": "stub"} for c, s in scores_for(body).items()
    ]
    return json.dumps({"criterionResults": results})


def member(stub: OpenAIStub, model: str) -> dict:
    return {
        "name": "ignored",
        "_target_": "benchmark.judge.LLMJudge",
        "endpoint": {
            "name": model,
            "model": model,
            "base_url": stub.base_url,
            "api_key_env": KEY_ENV,
            "max_retries": 1,
            "backoff_initial_s": 0.01,
        },
    }


def request() -> JudgeRequest:
    return JudgeRequest(
        probe_question="Which file did we edit?",
        model_response="src/db.py",
        compacted_context=[Message(role="user", content="Fix src/db.py")],
        ground_truth=Gold(answer="src/db.py", facts=[Fact(kind="modified", text="src/db.py")]),
        rubric_criteria=["accuracy_factual", "artifact_files_modified", "instruction_format"],
    )


@pytest.fixture
def stub(openai_stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    openai_stub.reply = panel_reply
    return openai_stub


def test_members_judge_concurrently_and_see_what_a_single_judge_sees(stub):
    panel = PanelJudge(
        {"a": member(stub, "judge-a"), "b": member(stub, "judge-b"), "ref": reference()}
    )
    stub.latency = 0.3
    judgment = panel.judge(request())
    assert stub.max_concurrent == 2  # both LLM members at once
    assert set(judgment.members) == {"a", "b", "ref"} and not judgment.failed
    for r in judgment.results:
        mine = [m.scores[r.criterion] for m in judgment.members.values()]
        assert r.score == pytest.approx(sum(mine) / 3)
    # Blinding: each member got exactly the messages a single judge sends.
    single = LLMJudge(endpoint=member(stub, "judge-a")["endpoint"])
    single.judge(request())
    *panel_calls, single_call = [r.body for r in stub.requests]
    assert [c["messages"] for c in panel_calls] == [single_call["messages"]] * 2
    # The record holds each LLM member's own input and raw output.
    record = judgment.record
    assert record["judge"] == "panel" and record["members"]["a"]["raw_outputs"]
    assert record["members"]["ref"]["scores"] == judgment.members["ref"].scores


def reference() -> dict:
    return {"_target_": "benchmark.judge.ReferenceJudge"}


def test_failed_member_is_left_out_and_below_min_members_fails(stub):
    members = {"a": member(stub, "judge-a"), "x": member(stub, "judge-fail"), "ref": reference()}
    judgment = PanelJudge(members, combine="median").judge(request())
    assert not judgment.failed
    assert judgment.members["x"].failed and "500" in judgment.members["x"].error
    a, ref = judgment.members["a"].scores, judgment.members["ref"].scores
    assert judgment.scores() == {c: (a[c] + ref[c]) / 2 for c in a}
    strict = PanelJudge(members, min_members=3).judge(request())
    assert strict.failed and strict.results == []
    assert "2 of 3 members judged, fewer than judge.min_members=3" in strict.error
    assert "x: " in strict.error


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"combine": "mode"}, "judge.combine: unknown rule 'mode'"),
        ({"min_members": 4}, "judge.min_members must be between 1 and 2, got 4"),
        ({"min_members": 0}, "judge.min_members must be between 1 and 2, got 0"),
        ({"members": {}}, "judge.members: a panel needs at least one member"),
        ({"members": {"a~b": reference()}}, "judge.members.a~b: a member name"),
        ({"members": {"a": {"mode": "rubric"}}}, "judge.members.a: give a judge config"),
    ],
)
def test_bad_panel_options_name_the_key(kwargs, message):
    members = kwargs.pop("members", {"r1": reference(), "r2": reference()})
    with pytest.raises(UserError) as err:
        PanelJudge(members, **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_key_names_the_member_and_its_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = validate(compose_config([*SMALL, "judge=panel"]))
    with pytest.raises(UserError) as err:
        build_parts(config)
    assert str(err.value).startswith("judge.members.claude: ")
    assert "ANTHROPIC_API_KEY" in str(err.value) and "\n" not in str(err.value)


# -- whole jobs: Hydra-composed panel, real MLflow store ---------------------------------


def panel_overrides(stub: OpenAIStub, *extra: str) -> list[str]:
    """judge=panel with two stub-backed LLM members (gpt41 dropped) plus the reference judge."""
    return [
        *SMALL,
        "probe.per_type=2",
        "judge=panel",
        "~judge.members.gpt41",
        "+judge@judge.members.reference=reference",
        *(
            f"judge.members.{name}.endpoint.{key}={value}"
            for name, model in (("gpt4o", "judge-a"), ("claude", "judge-b"))
            for key, value in (
                ("base_url", stub.base_url),
                ("model", model),
                ("max_retries", 1),
                ("backoff_initial_s", 0.01),
            )
        ),
        *extra,
    ]


@pytest.fixture
def keys(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(var, "sk-test")


def read_table(path: Path) -> list[dict]:
    table = json.loads(path.read_text())
    return [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]


MEMBERS = ["gpt4o", "claude", "reference"]


def test_panel_job_logs_combined_scores_and_agreement(stub, keys, tmp_path, mlflow_store):
    from mlflow import MlflowClient

    from benchmark.__main__ import run

    store = tmp_path / "mlruns"
    cfg = compose_config(panel_overrides(stub, "tracking=mlflow", f"tracking.store_dir={store}"))
    assert run(cfg) is not None
    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (mlrun,) = client.search_runs([exp.experiment_id])
    metrics = mlrun.data.metrics
    rows = read_table(Path(client.download_artifacts(mlrun.info.run_id, "results_table.json")))
    assert len(rows) == metrics["probes/total"] > 0 and metrics["judge/members_failed"] == 0
    assert layout_problems(metrics) == []  # an LLM run's llm/* and judge/* group too
    assert metrics["headline/more/cost_usd"] == metrics["llm/cost_usd"]
    # Each member's endpoint had one preflight check before the job, not counted as its call.
    assert metrics["llm/judge/calls"] == len(stub.requests) - 2 == 2 * metrics["probes/total"]

    # Per criterion, the panel's score is the mean of the members' logged scores.
    units, disagreed = [], False
    for row in rows:
        criteria = [k[2:] for k, v in row.items() if k.startswith("c/") and v is not None]
        assert criteria
        for c in criteria:
            mine = {m: row[f"m/{m}/{c}"] for m in MEMBERS}
            assert row[f"c/{c}"] == pytest.approx(sum(mine.values()) / 3)
            disagreed |= len(set(mine.values())) > 1
            units.append((c, mine))
    assert disagreed

    # The agreement metrics equal a recomputation from the logged member scores (MLflow
    # holds metrics rounded to 3 decimals, benchmark.tracking.mlflow_run.shown_value).
    matrix = np.array([[u[1][m] for u in units] for m in MEMBERS], dtype=float)
    alpha = krippendorff.alpha(
        reliability_data=matrix, value_domain=range(6), level_of_measurement="ordinal"
    )
    assert metrics["judge/alpha"] == pytest.approx(alpha, abs=5e-4) and alpha < 1
    for c in dict.fromkeys(c for c, _ in units):
        chosen = matrix[:, [i for i, u in enumerate(units) if u[0] == c]]
        if len(np.unique(chosen)) > 1:
            expected = krippendorff.alpha(
                reliability_data=chosen, value_domain=range(6), level_of_measurement="ordinal"
            )
            assert metrics[f"judge/alpha/{c}"] == pytest.approx(expected, abs=5e-4)
    for (i, a), (j, b) in combinations(enumerate(MEMBERS), 2):
        x, y = list(matrix[i]), list(matrix[j])
        assert metrics[f"judge/kappa/{a}/{b}"] == pytest.approx(table_kappa(x, y, True), abs=5e-4)
        assert metrics[f"judge/kappa_unweighted/{a}/{b}"] == pytest.approx(
            table_kappa(x, y, False), abs=5e-4
        )

    # Judge records and judgments carry every member's scores.
    folder = tmp_path / "artifacts"
    client.download_artifacts(mlrun.info.run_id, "", str(folder))
    records = [json.loads(line) for line in (folder / "judge_records.jsonl").open()]
    judgments = [json.loads(line) for line in (folder / "judgments.jsonl").open()]
    assert len(records) == len(judgments) == len(rows)
    for record, judgment, row in zip(records, judgments, rows, strict=True):
        assert record["probe_id"] == judgment["probe_id"] == row["probe_id"]
        assert list(record["members"]) == MEMBERS and record["members"]["gpt4o"]["messages"]
        for m in MEMBERS:
            assert judgment["members"][m]["scores"] == record["members"][m]["scores"]


@pytest.mark.parametrize("rule", ["median", "majority"])
def test_panel_job_combines_by_rule(stub, keys, rule):
    result = run_job(validate(compose_config(panel_overrides(stub, f"judge.combine={rule}"))))
    assert not any(r.failed for r in result.probe_results)
    for r in result.probe_results:
        for c, score in r.judgment.scores().items():
            mine = [m.scores[c] for m in r.judgment.members.values()]
            assert score == combine_scores(rule, mine)
    assert result.metrics()["judge/members_failed"] == 0


def test_panel_job_with_a_failing_member(stub, keys):
    overrides = panel_overrides(stub, "judge.members.claude.endpoint.model=judge-fail")
    result = run_job(validate(compose_config(overrides)))
    probes = result.probe_results
    assert probes and not any(r.failed for r in probes)
    for r in probes:
        members = r.judgment.members
        assert members["claude"].failed and "500" in members["claude"].error
        a, ref = members["gpt4o"].scores, members["reference"].scores
        assert r.judgment.scores() == pytest.approx({c: (a[c] + ref[c]) / 2 for c in a})
    metrics = result.metrics()
    assert metrics["judge/members_failed"] == len(probes)
    assert "judge/kappa/gpt4o/reference" in metrics
    assert not any("claude" in k for k in metrics if k.startswith("judge/kappa"))
    assert not any(k.startswith("m/claude/") for row in result.rows() for k in row)

    strict = run_job(validate(compose_config([*overrides, "judge.min_members=3"])))
    assert all(r.judgment.failed for r in strict.probe_results)
    assert "fewer than judge.min_members=3" in strict.probe_results[0].judgment.error
    metrics = strict.metrics()
    assert (
        metrics["probes/failed_judgments"] == metrics["probes/total"]
        and "headline/overall" not in metrics
    )
    assert metrics["judge/members_failed"] == metrics["probes/total"]


def test_single_judge_has_no_panel_metrics_or_columns():
    result = run_job(validate(compose_config(SMALL)))
    assert not any(k.startswith("judge/") for k in result.metrics())
    assert not any(k.startswith("m/") for row in result.rows() for k in row)
    assert "members" not in result.probe_results[0].judgment.model_dump()
