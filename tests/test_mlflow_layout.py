"""How a logged run reads in MLflow (issue 18): the experiment opens on its runs, params are
readable and say only what can change a result, metric names group as MLflow's chart view
reads them, and the per-probe and per-point tables start with the columns a comparison
needs. Checked on real runs in a real store, through MLflow's API."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SMALL, compose_config

from benchmark.run.run_record import OPERATIONAL_ENDPOINT_KEYS, OPERATIONAL_SECTIONS
from benchmark.scoring.metric_names import HEADLINE, POINTS_TABLE, layout_problems, section
from benchmark.tracking.mlflow_store import (
    EXPERIMENT_KIND_TAG,
    TRAINING_RUNS_KIND,
    prepare_store,
    tracking_uri,
)

EXPERIMENT = "layout"


def test_logged_run_reads_at_a_glance(tmp_path, mlflow_store, monkeypatch):
    from mlflow import MlflowClient

    from benchmark.__main__ import run

    monkeypatch.chdir(tmp_path)
    overrides = [o for o in SMALL if not o.startswith("tracking=")]
    run(compose_config([*overrides, f"tracking.experiment={EXPERIMENT}"]))

    client = MlflowClient(tracking_uri=tracking_uri(mlflow_store))
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment.tags[EXPERIMENT_KIND_TAG] == TRAINING_RUNS_KIND == "custom_model_development"
    (logged,) = client.search_runs([experiment.experiment_id])
    params = logged.data.params

    # Lists as comma-separated text, no Python repr; unset values (run_name) left out.
    assert params["probe.types"] == "recall, artifact, continuation, decision"
    assert not any(v.startswith("[") or v.startswith("{") or v == "None" for v in params.values())
    # Nothing operational: caches, progress, tracking; the result-changing keys all stay.
    assert not [k for k in params if k.split(".")[0] in OPERATIONAL_SECTIONS]
    assert not [k for k in params if k.split(".")[-1] in OPERATIONAL_ENDPOINT_KEYS]
    for key in ("seed", "policy.name", "compaction.context_window", "redaction.enabled"):
        assert key in params, key
    assert params["rubric.probe_criteria.recall"].startswith("accuracy_factual, ")
    # The full config stays an artifact, operational keys included.
    local = client.download_artifacts(logged.info.run_id, "config.yaml", str(tmp_path))
    assert "execution:" in Path(local).read_text() and "cache:" in Path(local).read_text()

    # Metric names: every key in a section (none in "Model metrics"), each interval bound
    # beside its value, the headline section first in MLflow's order (sorted prefixes).
    metrics = logged.data.metrics
    assert layout_problems(metrics) == []
    assert "headline/overall_lower" in metrics and "type/recall_upper" in metrics
    assert sorted({section(key) for key in metrics})[0] == HEADLINE
    assert not [key for key in metrics if key.startswith("point/")]
    assert not client.get_metric_history(logged.info.run_id, "tokens/before")[0].step
    # The README's filter form: a key with '/' in backticks.
    found = client.search_runs(
        [experiment.experiment_id], "metrics.`headline/overall` > 0 and metrics.`probes/total` > 0"
    )
    assert [r.info.run_id for r in found] == [logged.info.run_id]

    # Per point: a table (its rows are different sessions' points, not steps of one line).
    local = client.download_artifacts(logged.info.run_id, POINTS_TABLE, str(tmp_path))
    points = json.loads(Path(local).read_text())
    assert points["columns"] == [
        "transcript", "point", "tokens_before", "tokens_after", "compression_ratio",
        "over_window", "error",
    ]  # fmt: skip
    assert len(points["data"]) == metrics["points/total"] > 1
    assert sum(row[3] for row in points["data"]) == metrics["tokens/after"]

    local = client.download_artifacts(logged.info.run_id, "results_table.json", str(tmp_path))
    table = json.loads(Path(local).read_text())
    assert table["columns"][:4] == ["probe_id", "type", "policy", "score"]
    assert table["data"] and {row[2] for row in table["data"]} == {"anchor_index"}

    # Judgments as a table too: the same leading columns, then every criterion's score,
    # then the texts to compare across policies, and the readable context it was judged on.
    local = client.download_artifacts(logged.info.run_id, "judgments_table.json", str(tmp_path))
    judged = json.loads(Path(local).read_text())
    names = judged["columns"]
    assert names[:4] == ["probe_id", "type", "policy", "score"]
    criteria = [n for n in names if n.startswith("c/")]
    assert criteria and names[4 : 4 + len(criteria)] == criteria
    assert names[4 + len(criteria) :] == [
        "question", "answer", "gold", "reasoning", "failed", "error", "context"
    ]  # fmt: skip
    assert len(judged["data"]) == len(table["data"])
    row = dict(zip(names, judged["data"][0], strict=True))
    assert row["reasoning"] and row["context"].endswith(".txt")
    text = Path(client.download_artifacts(logged.info.run_id, row["context"], str(tmp_path)))
    readable = text.read_text()
    assert readable.startswith("[") and "\n\n[assistant]\n" in readable
    # Each message's text as it is, its line breaks real (the JSON beside it escapes them).
    saved = client.download_artifacts(
        logged.info.run_id, row["context"].replace(".txt", ".json"), str(tmp_path)
    )
    texts = [m.get("content") or "" for m in json.loads(Path(saved).read_text())["messages"]]
    multiline = [t for t in texts if "\n" in t]
    assert multiline and all(t in readable for t in multiline)


def test_an_older_experiment_gets_its_kind_and_a_chosen_kind_stays(mlflow_store):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri(mlflow_store))
    old = client.create_experiment("old", artifact_location=(mlflow_store / "a").as_uri())
    chosen = client.create_experiment(
        "chosen",
        artifact_location=(mlflow_store / "b").as_uri(),
        tags={EXPERIMENT_KIND_TAG: "genai_development"},
    )
    assert prepare_store(mlflow_store, "old") == old
    assert prepare_store(mlflow_store, "chosen") == chosen
    assert client.get_experiment(old).tags[EXPERIMENT_KIND_TAG] == TRAINING_RUNS_KIND
    assert client.get_experiment(chosen).tags[EXPERIMENT_KIND_TAG] == "genai_development"


def test_layout_problems_name_ungrouped_keys_and_lonely_bounds():
    good = ["headline/overall", "headline/overall_lower", "headline/overall_upper"]
    assert layout_problems(good) == []
    assert layout_problems(["overall", "type/recall_lower"]) == [
        "overall: no '/'",
        "type/recall_lower: no type/recall",
        "type/recall_lower: no type/recall_upper",
    ]
    assert section("type/recall_lower") == "type" and section("rubric/criterion/x") == (
        "rubric/criterion"
    )


def test_the_headline_comes_first_and_older_names_read_as_today():
    from benchmark.scoring import metric_names as names

    keys = ["probes/total", names.KEPT_FRACTION, "headline/overall_upper", names.OVERALL]
    keys += ["headline/overall_lower", "type/recall"]
    assert names.logging_order(keys) == [
        names.OVERALL,
        "headline/overall_lower",
        "headline/overall_upper",
        names.KEPT_FRACTION,
        "probes/total",
        "type/recall",
    ]
    # The three headline charts are the section's only ones, overall first (sorted keys).
    assert sorted(k for k in keys if section(k) == names.HEADLINE)[0] == names.OVERALL
    old = {"headline/overall": 4.0, "headline/overall_ci_low": 3.5, "headline/overall_ci_high": 4.4}
    old |= {"headline/kept_fraction": 0.4, "headline/retention_ci_low": 0.8, "type/x_ci_high": 2.0}
    assert names.current_names(old) == {
        names.OVERALL: 4.0,
        "headline/overall_lower": 3.5,
        "headline/overall_upper": 4.4,
        names.KEPT_FRACTION: 0.4,
        "headline/more/retention_lower": 0.8,
        "type/x_upper": 2.0,
    }


def test_values_are_logged_as_mlflow_shows_them():
    from benchmark.tracking.mlflow_run import shown_value

    assert shown_value(4.031944444444445) == 4.032
    assert shown_value(0.00012345678) == 0.0001235
    assert shown_value(160256.0) == 160256.0 and shown_value(0.0) == 0.0
    assert shown_value(float("nan")) != shown_value(float("nan"))  # NaN stays NaN
