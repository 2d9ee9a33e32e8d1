"""One parent MLflow run per sweep, its jobs' runs nested under it (``mlflow.parentRunId``).

A sweep's jobs share nothing in memory and may log at once (joblib) or from other
machines (SLURM), so the parent is found in the store by its ``sweep_parent`` tag (the
resolved sweep folder) and the first job to log creates it. On a local store that
happens under the store's lock, so jobs logging together make one. A server has no lock
of ours: a job that then finds two parents keeps the oldest and deletes its own, and
every job picks the same one. Each job's end moves the parent's end, so its Duration
spans the sweep. The parent also holds the sweep's report (``python -m benchmark.report``),
so it carries the report's tag: comparisons skip it as they skip any report run.
"""

from __future__ import annotations

from typing import Any

from benchmark.redaction import scrub_setting
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.mlflow_store import locked
from benchmark.tracking.sweep import SWEEP_ID_TAG, SweepInfo

PARENT_TAG = "sweep_parent"  # the resolved sweep folder, on its parent run only
PARENT_RUN_TAG = "mlflow.parentRunId"  # what MLflow nests a run under
REPORT_TAG = "report"  # benchmark.report.load.REPORT_TAG: runs no comparison includes


def parent_tags(sweep: SweepInfo) -> dict[str, str]:
    """The parent's tags; the overrides scrubbed, being user text that may hold a credential."""
    return {
        PARENT_TAG: sweep.dir,
        SWEEP_ID_TAG: sweep.short_id,
        "sweep_overrides": scrub_setting(" ".join(sweep.overrides)),
        REPORT_TAG: "true",
    }


def find_parent(client: Any, experiment_id: str, sweep_dir: str) -> str | None:
    """The id of the sweep's parent run (the oldest, should a race have made two), or None."""
    runs = client.search_runs(
        [experiment_id], filter_string=f"tags.{REPORT_TAG} = 'true'", max_results=5000
    )
    mine = [r for r in runs if r.data.tags.get(PARENT_TAG) == sweep_dir]
    if not mine:
        return None
    return min(mine, key=lambda r: (r.info.start_time or 0, r.info.run_id)).info.run_id


def parent_run(tracking: TrackingConfig, experiment_id: str, sweep: SweepInfo) -> str:
    """The sweep's parent run id, created by the first job that asks."""
    from mlflow import MlflowClient

    client = MlflowClient()
    with locked(tracking):  # a server: no lock of ours (see _find_or_create)
        return _find_or_create(client, experiment_id, sweep)


def _find_or_create(client: Any, experiment_id: str, sweep: SweepInfo) -> str:
    found = find_parent(client, experiment_id, sweep.dir)
    if found is not None:
        return found
    made = client.create_run(
        experiment_id, run_name=f"sweep {sweep.short_id}", tags=parent_tags(sweep)
    ).info.run_id
    first = find_parent(client, experiment_id, sweep.dir) or made
    if first != made:  # another job made one first (a server: no lock)
        client.delete_run(made)
    return first


def end_parent(parent_id: str, status: str = "FINISHED") -> None:
    """Mark the parent ended as of now: the last job's end is the sweep's. KILLED when a
    signal stopped that job, and with it the sweep."""
    from mlflow import MlflowClient

    MlflowClient().set_terminated(parent_id, status)
