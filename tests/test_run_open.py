"""The job's MLflow run opens when the job starts: its Duration is the job's, it shows
RUNNING while the job runs, a job that fails ends it FAILED, and system metrics are
sampled into it when asked. A real child process and a real SQLite store."""

from __future__ import annotations

import time
from pathlib import Path

from test_tracking_child import a_record, offline_job

from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.logger_process import TrackingChild


def client_of(store: Path):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")


def now_ms() -> int:
    return int(time.time() * 1000)


def test_the_child_opens_the_run_at_the_job_start_and_logs_into_it(tmp_path, mlflow_store):
    started = now_ms()
    child = TrackingChild(TrackingConfig(store_dir=str(mlflow_store)), started, "job@test")
    try:
        child.ready()  # the job's work would start here
        running = client_of(mlflow_store).get_run(child.run_id)
        assert (running.info.status, running.info.run_name) == ("RUNNING", "job@test")
        assert running.info.start_time == started
        worked = now_ms() - started  # the job's own span, as far as it went
        run_id = child.log(a_record(tmp_path))
    finally:
        child.close()
    run = client_of(mlflow_store).get_run(run_id)
    assert run_id == running.info.run_id  # one run: opened, then logged into
    assert (run.info.status, run.info.run_name) == ("FINISHED", "child@test")
    assert run.info.start_time == started
    assert run.info.end_time - run.info.start_time >= worked
    assert run.data.metrics["headline/overall"] == 2.5
    assert not any(key.startswith("system/") for key in run.data.metrics)  # not asked


def test_a_job_that_fails_after_its_run_opened_ends_it_failed(mlflow_store):
    child = TrackingChild(TrackingConfig(store_dir=str(mlflow_store)), now_ms())
    try:
        child.ready()
        run_id = child.run_id
        child.end("FAILED")
    finally:
        child.close()
    assert client_of(mlflow_store).get_run(run_id).info.status == "FAILED"


def test_system_metrics_are_sampled_into_the_run_while_the_job_runs(
    tmp_path, mlflow_store, monkeypatch
):
    # The child reads the interval from its environment: short, so samples come soon.
    monkeypatch.setenv("MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL", "0.2")
    tracking = TrackingConfig(store_dir=str(mlflow_store), system_metrics=True)
    child = TrackingChild(tracking, now_ms())
    client = client_of(mlflow_store)
    try:
        child.ready()
        deadline = time.monotonic() + 120  # a bound for a loaded machine, not a timing
        sampled: list[str] = []
        while not sampled and time.monotonic() < deadline:
            metrics = client.get_run(child.run_id).data.metrics
            sampled = [key for key in metrics if key.startswith("system/")]
            time.sleep(0.1)
        run_id = child.log(a_record(tmp_path))
    finally:
        child.close()
    assert sampled, "no system metric was sampled while the run was open"
    logged = client.get_run(run_id).data.metrics
    assert "system/cpu_utilization_percentage" in logged and "headline/overall" in logged


def test_an_in_process_run_starts_at_the_job_start(tmp_path, mlflow_store):
    from benchmark.tracking.mlflow_run import log_run

    started = now_ms() - 4000  # a job that began four seconds before its record
    run_id = log_run(a_record(tmp_path), TrackingConfig(store_dir=str(mlflow_store)), None, started)
    run = client_of(mlflow_store).get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.start_time == started
    assert run.info.end_time - run.info.start_time >= 4000


def test_an_offline_job_run_spans_the_job(tmp_path):
    launched = now_ms()
    store = tmp_path / "mlruns"
    proc = offline_job(tmp_path, store)
    done = now_ms()
    assert proc.returncode == 0, proc.stderr[-2000:]
    client = client_of(store)
    (run,) = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    assert run.info.status == "FINISHED"
    assert launched <= run.info.start_time <= run.info.end_time <= done


def test_a_sweep_job_in_process_holds_its_run_nested_from_its_start(tmp_path, mlflow_store):
    from benchmark.tracking.in_process import InProcessRun
    from benchmark.tracking.sweep import SweepInfo
    from benchmark.tracking.sweep_parent import PARENT_RUN_TAG

    sweep = SweepInfo(dir="/sweeps/x", overrides=["seed=0,1"], job_overrides=["seed=0"], job_num=0)
    tracking = TrackingConfig(store_dir=str(mlflow_store))
    client = client_of(mlflow_store)
    started = now_ms()
    first = InProcessRun(tracking, started, "truncate · seed=0", sweep)
    first.prepare()
    running = client.get_run(first.run_id)
    assert (running.info.status, running.info.start_time) == ("RUNNING", started)
    parent = running.data.tags[PARENT_RUN_TAG]
    run_id = first.log(a_record(tmp_path), sweep)
    run = client.get_run(run_id)
    assert run_id == running.info.run_id and run.info.status == "FINISHED"
    assert run.info.run_name == "truncate · seed=0" and run.data.tags[PARENT_RUN_TAG] == parent

    second = InProcessRun(tracking, now_ms(), "truncate · seed=1", sweep)
    second.prepare()  # the job fails before its record: its run is not left RUNNING
    failed_id = second.run_id
    second.end("FAILED")
    failed = client.get_run(failed_id)
    assert failed.info.status == "FAILED" and failed.data.tags[PARENT_RUN_TAG] == parent
    assert client.get_run(parent).info.status == "FINISHED"
