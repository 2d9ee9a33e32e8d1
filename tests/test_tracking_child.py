"""MLflow in a child process (``benchmark.tracking.logger_process``): a real child, a real
store; what it logs is what ``log_run`` logs in-process."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SMALL
from test_cli import OFFLINE_ENV

from benchmark.errors import UserError
from benchmark.run.run_record import RunRecord
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.logger_process import WORKER, TrackingChild, wanted
from benchmark.tracking.sweep import SweepInfo

EXPERIMENT = "compaction-benchmark"


def store_copy(migrated_db: Path, folder: Path, *sql: str) -> Path:
    """A store folder holding a copy of the migrated store, changed by ``sql``."""
    folder.mkdir(parents=True)
    shutil.copyfile(migrated_db, folder / migrated_db.name)
    with sqlite3.connect(folder / migrated_db.name) as db:
        for statement in sql:
            db.execute(statement)
    return folder


def a_record(tmp_path: Path) -> RunRecord:
    streamed = tmp_path / "streamed"
    (streamed / "contexts").mkdir(parents=True)
    (streamed / "contexts" / "point-0.txt").write_text("a compacted context\n")
    return RunRecord(
        run_name="child@test",
        params={"policy.name": "truncate", "seed": "0"},
        tags={"policy": "truncate"},
        metrics={
            "headline/overall": 2.5,
            "probes/total": 12.0,
            "headline/more/facts_survival": float("nan"),
        },
        artifacts={"scorecard.txt": "Scorecard\n", "notes/why.md": "because\n"},
        artifact_dir=streamed,
        tables={"results_table.json": {"probe": ["a", "b"], "score": [1.0, None]}},
    )


def logged(store: Path, run_id: str) -> tuple[dict, dict, dict, set[str], list]:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    run = client.get_run(run_id)
    tags = {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.")}
    paths: set[str] = set()
    folders = [""]
    while folders:
        for item in client.list_artifacts(run_id, folders.pop() or None):
            (folders.append(item.path) if item.is_dir else paths.add(item.path))
    metrics = {k: ("nan" if v != v else v) for k, v in run.data.metrics.items()}
    return run.data.params, metrics, tags, paths, [run.info.status, run.info.run_name]


def test_a_run_logged_by_the_child_is_the_run_logged_in_process(tmp_path, migrated_db):
    from benchmark.tracking.mlflow_run import log_run

    record = a_record(tmp_path)
    sweep = SweepInfo(dir="/sweeps/x", overrides=["seed=0,1"], job_overrides=["seed=0"], job_num=0)
    there = TrackingConfig(store_dir=str(store_copy(migrated_db, tmp_path / "child")))
    here = TrackingConfig(store_dir=str(store_copy(migrated_db, tmp_path / "here")))
    child = TrackingChild(there)
    try:
        child.ready()
        child_id = child.log(record, sweep)
    finally:
        child.close()
    assert child._proc.returncode == 0
    own_id = log_run(record, here, sweep)

    child_run = logged(tmp_path / "child", child_id)
    assert child_run == logged(tmp_path / "here", own_id)
    params, metrics, tags, paths, (status, name) = child_run
    assert params == record.params and status == "FINISHED"
    assert name == "truncate · seed=0"  # a sweep job: its policy and overrides
    assert metrics["headline/more/facts_survival"] == "nan" and metrics["headline/overall"] == 2.5
    assert tags["job_overrides"] == "seed=0" and tags["policy"] == "truncate"
    assert {"scorecard.txt", "notes/why.md", "results_table.json"} <= paths
    assert "contexts/point-0.txt" in paths


def test_a_store_mlflow_refuses_is_one_line_from_the_child(tmp_path, migrated_db):
    # A table missing: only MLflow can tell, so the parent's own check lets it through.
    store = store_copy(migrated_db, tmp_path / "mlruns", "DROP TABLE latest_metrics")
    child = TrackingChild(TrackingConfig(store_dir=str(store)))
    try:
        with pytest.raises(UserError) as caught:
            child.ready()
    finally:
        child.close()
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"tracking store {store / 'mlflow.db'} is broken (")
    with pytest.raises(UserError):  # and so does logging, without sending the record
        child.log(a_record(tmp_path))


def test_a_store_that_is_not_sqlite_is_refused_without_the_child(tmp_path):
    store = tmp_path / "mlruns"
    store.mkdir()
    (store / "mlflow.db").write_bytes(b"no database\n")
    child = TrackingChild(TrackingConfig(store_dir=str(store)))
    try:
        with pytest.raises(UserError, match=r"is broken \(not an SQLite database\)"):
            child.prepare()
    finally:
        child.close()
    assert child._proc.returncode is not None  # still importing MLflow: ended at once


def test_end_of_input_without_a_record_ends_the_child_cleanly(tmp_path):
    worker = [sys.executable, "-m", WORKER]
    nothing = subprocess.run(worker, input="", capture_output=True, text=True, timeout=120)
    assert (nothing.returncode, nothing.stdout) == (0, "")

    config = TrackingConfig(store_dir=str(tmp_path / "mlruns")).model_dump_json()
    # The job stopped before its work (a missing key): the store is not touched.
    stopped = subprocess.run(
        worker, input=config + "\n", capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert (stopped.returncode, stopped.stdout) == (0, "")
    assert not (tmp_path / "mlruns").exists()

    ready = subprocess.run(
        worker,
        input=config + '\n{"prepare": true}\n',
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert ready.returncode == 0, ready.stderr[-2000:]
    reply, ended = [json.loads(line) for line in ready.stdout.splitlines()]
    assert reply["ready"] is True and reply["experiment_id"]
    assert "Traceback" not in ready.stderr
    assert (tmp_path / "mlruns" / "mlflow.db").is_file()  # a fresh store, made and left whole
    # The run opened at the job's start is not left RUNNING when no record comes: its
    # input ending unannounced means the job was killed.
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    assert ended == {"ended": "KILLED", "run_id": reply["run_id"]}
    assert client.get_run(reply["run_id"]).info.status == "KILLED"


def test_the_child_is_used_for_a_single_job_only():
    on = TrackingConfig()
    assert not wanted(on, in_sweep=True)
    assert not wanted(TrackingConfig(enabled=False), in_sweep=False)
    # MLflow is loaded in this process (the tests use it): a child would load it again.
    assert "mlflow" not in sys.modules or not wanted(on, in_sweep=False)


def offline_job(tmp_path: Path, store: Path) -> subprocess.CompletedProcess[str]:
    """A small offline job as a user runs it (its run logged by the child) into ``store``."""
    args = [o for o in SMALL if not o.startswith("tracking=")] + ["policy=truncate"]
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *args, f"tracking.store_dir={store}"],
        cwd=tmp_path,
        env=OFFLINE_ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_an_offline_job_names_a_broken_store_in_one_line_after_its_scorecard(tmp_path, migrated_db):
    store = store_copy(migrated_db, tmp_path / "mlruns", "DROP TABLE latest_metrics")
    proc = offline_job(tmp_path, store)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [proc.stderr.strip().splitlines()[-1]]
    assert errors[0].startswith(f"error: tracking store {store / 'mlflow.db'} is broken (")
    assert "Scorecard" in proc.stdout  # offline work takes seconds: it is kept, then refused
