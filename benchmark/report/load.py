"""Read the runs a report covers from MLflow: one sweep, or a whole experiment.

Everything the report needs comes through here (metrics, tags, params and each
run's per-probe ``results_table.json``), so the other report modules never
talk to MLflow and can be fed plain models.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchmark.errors import UserError
from benchmark.report.task_points import TaskPoint, parse_points
from benchmark.scoring import metric_names as names
from benchmark.tracking.sweep_parent import PARENT_TAG

REPORT_TAG = "report"  # runs written by the report itself; never part of a comparison
AUDIT_TAG = "audit"  # judge audits (python -m benchmark +audit=judge): not benchmark runs
SWEEP_TAG = "sweep"
OVERRIDES_TAG = "sweep_overrides"
TABLE_ARTIFACT = "results_table.json"


class RunData(BaseModel):
    """One finished benchmark run as the report sees it."""

    run_id: str
    name: str
    start_time: int = Field(description="ms since the epoch; orders runs and breaks ties")
    tags: dict[str, str]
    metrics: dict[str, float]
    params: dict[str, str]

    @property
    def policy(self) -> str | None:
        return self.tags.get("policy")

    @property
    def overrides(self) -> str:
        return self.tags.get(OVERRIDES_TAG, "")


class Selection(BaseModel):
    """The runs of one report and what they were selected by."""

    kind: Literal["sweep", "experiment"]
    source: str = Field(description="the sweep id or the experiment name")
    experiment: str
    experiment_id: str
    runs: list[RunData]


def client_for(tracking_uri: str | None = None, store_dir: str | Path | None = None) -> Any:
    """An MlflowClient on ``tracking_uri``, or on the SQLite store under ``store_dir``;
    with neither, on ``MLFLOW_TRACKING_URI`` if set, else the store under ``mlruns``.

    A missing local store is an error here: opening it would create an empty one.
    """
    from benchmark.tracking.mlflow_store import open_local_store

    if tracking_uri is None and store_dir is None:
        tracking_uri = os.environ.get("MLFLOW_TRACKING_URI") or None
        store_dir = "mlruns"
    if tracking_uri is None:
        assert store_dir is not None
        if not (Path(store_dir) / "mlflow.db").is_file():
            raise UserError(
                f"no MLflow store at {Path(store_dir) / 'mlflow.db'} "
                "(run a job first, or pass --store-dir / --tracking-uri)"
            )
        return open_local_store(store_dir)  # a broken store is one line, not a traceback
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def select(client: Any, target: str | None, experiment: str) -> Selection:
    """Resolve ``target`` (a sweep id, a unique end of one, or an experiment name; default:
    the latest sweep of ``experiment``) to its finished runs."""
    found = client.get_experiment_by_name(experiment)
    runs = _runs(client, found.experiment_id) if found is not None else []
    if target is None:
        if found is None:
            raise UserError(f"no experiment '{experiment}' in the tracking store")
        sweep = _latest_sweep(runs)
        if sweep is None:
            return _selection("experiment", experiment, found, runs)
        return _selection("sweep", sweep, found, _in_sweep(runs, sweep))
    sweep = _match_sweep(runs, target)
    if sweep is not None:
        return _selection("sweep", sweep, found, _in_sweep(runs, sweep))
    other = client.get_experiment_by_name(target)
    if other is not None:
        return _selection("experiment", target, other, _runs(client, other.experiment_id))
    raise UserError(
        f"unknown sweep or experiment '{target}' (sweeps in '{experiment}': "
        f"{', '.join(_sweeps(runs)) or 'none'})"
    )


def _selection(kind: str, source: str, experiment: Any, runs: list[RunData]) -> Selection:
    if not runs:
        raise UserError(f"no finished runs in {kind} '{source}'")
    return Selection(
        kind=kind,  # type: ignore[arg-type]
        source=source,
        experiment=experiment.name,
        experiment_id=experiment.experiment_id,
        runs=runs,
    )


def _runs(client: Any, experiment_id: str) -> list[RunData]:
    """Finished benchmark runs (not report or audit runs), oldest first."""
    out: list[RunData] = []
    token = None
    while True:
        page = client.search_runs(
            [experiment_id],
            filter_string="attributes.status = 'FINISHED'",
            max_results=1000,
            order_by=["attributes.start_time ASC"],
            page_token=token,
        )
        for run in page:
            tags = run.data.tags
            if tags.get(REPORT_TAG) == "true" or AUDIT_TAG in tags or PARENT_TAG in tags:
                continue  # a sweep's parent holds no job of its own, whatever its tags say
            out.append(
                RunData(
                    run_id=run.info.run_id,
                    name=run.info.run_name or run.info.run_id,
                    start_time=run.info.start_time or 0,
                    tags=dict(run.data.tags),
                    metrics=names.current_names(dict(run.data.metrics)),
                    params=dict(run.data.params),
                )
            )
        token = page.token
        if not token:
            break
    out.sort(key=lambda r: (r.start_time, r.run_id))
    return out


def _sweeps(runs: list[RunData]) -> list[str]:
    return list(dict.fromkeys(r.tags[SWEEP_TAG] for r in runs if r.tags.get(SWEEP_TAG)))


def _latest_sweep(runs: list[RunData]) -> str | None:
    tagged = [r for r in runs if r.tags.get(SWEEP_TAG)]
    return max(tagged, key=lambda r: (r.start_time, r.run_id)).tags[SWEEP_TAG] if tagged else None


def _in_sweep(runs: list[RunData], sweep: str) -> list[RunData]:
    return [r for r in runs if r.tags.get(SWEEP_TAG) == sweep]


def _match_sweep(runs: list[RunData], target: str) -> str | None:
    """A sweep id given exactly, as a path relative to here, or as a unique trailing part."""
    sweeps = _sweeps(runs)
    resolved = str(Path(target).expanduser().resolve())
    for candidate in (target, resolved):
        if candidate in sweeps:
            return candidate
    tail = target.rstrip("/")
    ends = [s for s in sweeps if s.rstrip("/").endswith("/" + tail)]
    if len(ends) > 1:
        raise UserError(f"'{target}' matches {len(ends)} sweeps: {', '.join(ends)}")
    return ends[0] if ends else None


def load_table(client: Any, run_id: str) -> list[dict[str, Any]]:
    """A run's per-probe table (``mlflow.log_table`` JSON: columns + data) as row dicts.

    A run without the table (an older version, or a job killed before logging it)
    yields no rows rather than an error: its scores still show, unpaired.
    """
    data = _artifact_text(client, run_id, TABLE_ARTIFACT)
    if data is None:
        return []
    table = json.loads(data)
    columns = table.get("columns", [])
    return [dict(zip(columns, row, strict=False)) for row in table.get("data", [])]


def load_task_points(client: Any, run_id: str) -> list[TaskPoint]:
    """A run's ``task_points_table.json`` (the task-success arm, issue 29) as rows; none for
    a run without the arm. A table that is not the contract's is one line naming the run."""
    try:
        text = _artifact_text(client, run_id, names.TASK_POINTS_TABLE)
        if text is None:
            return []
        data = json.loads(text)
    except ValueError as exc:  # JSON or UTF-8
        raise UserError(f"run {run_id}: {names.TASK_POINTS_TABLE}: not JSON ({exc})") from None
    return parse_points(data, run_id)


def _artifact_text(client: Any, run_id: str, name: str) -> str | None:
    """The text of a run's artifact ``name``; None when the run has none."""
    from mlflow.exceptions import MlflowException

    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = client.download_artifacts(run_id, name, tmp)
        except (MlflowException, OSError):
            return None
        return Path(path).read_text()
