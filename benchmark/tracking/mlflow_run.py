"""Log one run record (a job's or an audit's) as one MLflow run: the only writer of runs.

A job of a Hydra multirun is tagged with its ``sweep`` (see ``sweep.py``) so the runs
of one sweep can be found, compared and reported together, named by what tells it from
the sweep's other jobs, and nested under the sweep's parent run (``sweep_parent.py``).
The run is made at the job's start (``open_run``), or made at the end with its start then.
A record whose status is KILLED (an interrupted job) ends its run as KILLED; Ctrl-C while
logging ends the run as KILLED too, with what was logged so far (``LoggingInterrupted``).
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.redaction import scrub_setting
from benchmark.run import interrupt
from benchmark.run.interrupt import LoggingInterrupted
from benchmark.run.run_record import RunRecord
from benchmark.scoring import metric_names as names
from benchmark.tracking.config import SYSTEM_METRICS_INTERVAL_S, TrackingConfig
from benchmark.tracking.inputs import log_transcript_inputs
from benchmark.tracking.mlflow_store import prepare_tracking, store_uri
from benchmark.tracking.run_colours import RUN_COLOR_TAG, stable_colour
from benchmark.tracking.sweep import SweepInfo
from benchmark.tracking.sweep_parent import PARENT_RUN_TAG, end_parent, parent_run
from benchmark.tracking.traces import log_traces
from benchmark.tracking.views import OVERALL_CI_TAG, overall_ci_text

if TYPE_CHECKING:
    from benchmark.tracking.streamed import StreamedTraces


def log_run(
    record: RunRecord,
    tracking: TrackingConfig,
    sweep: SweepInfo | None = None,
    start_ms: int | None = None,
    opened: str | None = None,
    streamed: StreamedTraces | None = None,
) -> str:
    """Log ``record`` into the configured store or server; returns the run's id.

    ``streamed``: the probe traces written into ``opened`` already, left out here.
    ``opened``: the run ``open_run`` made at the job's start (named and nested here);
    otherwise the run is made now, started at ``start_ms`` (the job's start) so its
    Duration is the job's. An error while logging ends the run FAILED."""
    import mlflow
    from mlflow import MlflowClient

    experiment_id = prepare_tracking(tracking)
    parent = parent_run(tracking, experiment_id, sweep) if sweep is not None else None
    tags = {PARENT_RUN_TAG: parent} if parent is not None else {}
    name = run_name(record, tracking, sweep)
    if opened is None:
        run_id = open_run(tracking, experiment_id, name, start_ms, tags)
    else:
        run_id = opened
        MlflowClient().update_run(run_id, name=name)
        for key, value in tags.items():
            MlflowClient().set_tag(run_id, key, value)
    if record.status == "KILLED":  # a second signal leaves at once: say what it leaves
        _arm_second(tracking, run_id, parent)
    try:
        _log_content(run_id, record, sweep)
        if tracking.trace_probes or (tracking.trace_llm and record.calls):
            skip, now = (streamed.probes, streamed.now) if streamed else (set(), None)
            log_traces(record, experiment_id, run_id, tracking.trace_probes, skip, now)
    except KeyboardInterrupt:
        _arm_second(tracking, run_id, parent)
        mlflow.end_run("KILLED")
        if parent is not None:  # the sweep stops here
            end_parent(parent, "KILLED")
        raise LoggingInterrupted(run_id) from None
    except BaseException:
        mlflow.end_run("FAILED")
        raise
    mlflow.end_run(record.status)
    if parent is not None:
        end_parent(parent, "KILLED" if record.status == "KILLED" else "FINISHED")
    return run_id


def open_run(
    tracking: TrackingConfig,
    experiment_id: str,
    name: str | None,
    start_ms: int | None,
    tags: dict[str, str] | None = None,
) -> str:
    """Make the job's run, RUNNING since ``start_ms`` (None: now), the active run; with
    ``tracking.system_metrics`` MLflow samples the machine into it until it ends."""
    import mlflow
    from mlflow import MlflowClient

    made = MlflowClient().create_run(experiment_id, start_time=start_ms, tags=tags, run_name=name)
    if tracking.system_metrics:
        os.environ.setdefault(
            "MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL", str(SYSTEM_METRICS_INTERVAL_S)
        )
    mlflow.start_run(run_id=made.info.run_id, log_system_metrics=tracking.system_metrics)
    return made.info.run_id


def end_open_run(status: str) -> None:
    """End the active run as ``status`` (a job that failed or stopped before its record)."""
    import mlflow

    mlflow.end_run(status)


def run_name(record: RunRecord, tracking: TrackingConfig, sweep: SweepInfo | None) -> str:
    """A sweep job's name says what tells it from the other jobs (``hermes · judge=gpt4o``),
    unless ``tracking.run_name`` names it; a single job keeps its record's name."""
    return job_run_name(record.run_name, record.tags.get("policy"), tracking, sweep)


def job_run_name(
    name: str, policy: str | None, tracking: TrackingConfig, sweep: SweepInfo | None
) -> str:
    """``run_name`` before there is a record: from the job's ``name`` and ``policy``."""
    if sweep is None or tracking.run_name is not None:
        return name
    return scrub_setting(sweep.run_name(policy or name))


def _arm_second(tracking: TrackingConfig, run_id: str, parent: str | None = None) -> None:
    """A second signal while ``run_id`` is logged leaves at once; a helper then ends the
    run KILLED with what was logged so far (``run_end.hold``)."""
    from benchmark.tracking.run_end import hold

    interrupt.arm_second()
    hold(store_uri(tracking), run_id, parent)


def _log_content(run_id: str, record: RunRecord, sweep: SweepInfo | None) -> None:
    """Everything of one run but its traces, into the active MLflow run ``run_id``."""
    import mlflow

    _log_values(run_id, record, sweep)
    if record.inputs is not None:
        log_transcript_inputs(record.inputs)
    for name, table in record.tables.items():
        mlflow.log_table(table, artifact_file=name)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in record.artifacts.items():
            path = Path(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        mlflow.log_artifacts(tmp)
    if record.artifact_dir is not None:
        mlflow.log_artifacts(str(record.artifact_dir))


def _log_values(run_id: str, record: RunRecord, sweep: SweepInfo | None) -> None:
    """Tags, params and metrics in one batch: one store transaction."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    metrics = [
        Metric(key, shown_value(record.metrics[key]), now, 0)
        for key in names.logging_order(list(record.metrics))
    ]
    tags = {**record.tags, **sweep_tags(sweep)}
    policy = record.tags.get("policy")
    tags[RUN_COLOR_TAG] = sweep.colour(policy) if sweep is not None else stable_colour(policy or "")
    # From the values as logged, so the tag reads exactly as the metric columns beside it.
    shown = overall_ci_text({m.key: m.value for m in metrics})
    if shown is not None:
        tags[OVERALL_CI_TAG] = shown
    MlflowClient().log_batch(
        run_id,
        metrics=metrics,
        params=[Param(key, str(value)) for key, value in record.params.items()],
        tags=[RunTag(key, str(value)) for key, value in tags.items()],
    )


def shown_value(value: float) -> float:
    """A metric as MLflow shows it: 3 decimals (4.032, not 4.031944444444445), or 4
    significant digits below 0.01 (a cost of $0.0001234); whole numbers as they are.
    Far finer than any interval here; the record and the scorecard keep full precision."""
    if not math.isfinite(value) or value == int(value):
        return value
    if abs(value) >= 0.01:
        return round(value, 3)
    return float(f"{value:.4g}")


def sweep_tags(sweep: SweepInfo | None) -> dict[str, str]:
    """A sweep job's tags, scrubbed: overrides are user text and may hold a credential."""
    return {k: scrub_setting(v) for k, v in sweep.tags().items()} if sweep is not None else {}
