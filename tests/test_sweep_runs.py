"""A sweep as MLflow shows it (issue 18): one parent run per sweep with its jobs nested
under it, short distinct run names, a short sweep id, and the report on the parent.
Checked on a real parallel multirun (joblib) in a real store, through MLflow's API."""

from __future__ import annotations

import json
from pathlib import Path

from mlflow import MlflowClient
from test_sweeps import local_store, run_sweep

from benchmark.report import build_report, select
from benchmark.scoring.metric_names import HEADLINE, layout_problems, section
from benchmark.tracking.callbacks import swept_keys
from benchmark.tracking.sweep import SweepInfo
from benchmark.tracking.sweep_parent import PARENT_RUN_TAG, PARENT_TAG

EXPERIMENT = "compaction-benchmark"


def test_a_sweep_is_one_parent_with_its_jobs_nested(tmp_path, mlflow_store):
    sweep_dir = tmp_path / "sweeps" / "judges"
    proc = run_sweep(
        [
            *local_store(tmp_path),
            "policy=none,truncate",
            "transcript.seed=1,2",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",  # jobs log at once: still one parent
            f"hydra.sweep.dir={sweep_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in runs if PARENT_TAG in r.data.tags]
    jobs = [r for r in runs if PARENT_TAG not in r.data.tags]
    assert len(jobs) == 4
    # The experiment opens on runs, not on the GenAI traces overview.
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    # Every job's metrics: a value beside its interval, the headline section first.
    for job in jobs:
        assert layout_problems(job.data.metrics) == []
        assert min(section(k) for k in job.data.metrics) == HEADLINE
        local = client.download_artifacts(job.info.run_id, "results_table.json", str(tmp_path))
        columns = json.loads(Path(local).read_text())["columns"]
        assert columns[:4] == ["probe_id", "type", "policy", "score"]
    assert parent.data.tags[PARENT_TAG] == str(sweep_dir.resolve())
    assert parent.data.tags["sweep_id"] == "sweeps/judges"
    assert parent.info.run_name == "sweep sweeps/judges"
    assert parent.info.status == "FINISHED"
    assert parent.info.end_time >= max(j.info.end_time for j in jobs)
    for job in jobs:
        assert job.data.tags[PARENT_RUN_TAG] == parent.info.run_id
        assert job.data.tags["sweep_id"] == "sweeps/judges"
        assert job.data.tags["sweep"] == str(sweep_dir.resolve())
    # Names say what tells a job from the others: no path, no "@", all distinct.
    names = sorted(j.info.run_name for j in jobs)
    assert names == [f"{p} · transcript.seed={s}" for p in ("none", "truncate") for s in (1, 2)]
    # The README's filter on `sweep` returns the jobs only.
    tagged = client.search_runs(
        [experiment.experiment_id], filter_string=f"tags.sweep = '{sweep_dir.resolve()}'"
    )
    assert len(tagged) == 4

    # The report compares the four jobs and logs onto the parent, not beside it.
    comparison, files = build_report(client, select(client, None, EXPERIMENT), tmp_path / "report")
    assert len(comparison.rows) == 4 and files.run_id == parent.info.run_id
    logged = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"report.md", "report.html", "pareto.png", "comparison.json"} <= logged
    assert len(client.search_runs([experiment.experiment_id])) == 5  # no sibling run
    again, _ = build_report(client, select(client, None, EXPERIMENT), tmp_path / "report")
    assert client.get_run(parent.info.run_id).data.tags["report.runs"] == "4"


def test_run_names_show_the_swept_values_only():
    job = ["policy=hermes", "judge=gpt4o", "transcript.path=/data/a/s.jsonl", "seed=3"]
    job += ["cache.dir=/tmp/c", "tracking.store_dir=/x"]
    swept = swept_keys(["policy=hermes,none", "judge=gpt4o,claude", "transcript.path=/d/s.jsonl"])
    assert swept == ["policy", "judge"]
    info = SweepInfo(
        dir="/w/multirun/2026-12-02/09-15", overrides=[], job_overrides=job, job_num=0, swept=swept
    )
    assert info.run_name("hermes") == "hermes · judge=gpt4o"
    other = info.model_copy(update={"job_overrides": ["policy=hermes", "judge=claude"]})
    assert other.run_name("hermes") == "hermes · judge=claude"
    assert info.short_id == "2026-12-02/09-15"
    # No record of the swept keys: every override that can change a result, paths shortened.
    unknown = info.model_copy(update={"swept": None})
    assert unknown.run_name("hermes") == "hermes · judge=gpt4o · transcript.path=s.jsonl · seed=3"
