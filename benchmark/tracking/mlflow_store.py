"""Log one job as one MLflow run in a SQLite store under ``mlruns/``.

MLflow >= 3.13 refuses the bare ``./mlruns`` file store, so the tracking
store is ``sqlite:///mlruns/mlflow.db`` with artifacts in ``mlruns/artifacts``.
A fresh store spends seconds on schema migrations; ``prepare_store`` does that
once, before any job starts, so parallel jobs never race on it.
"""

from __future__ import annotations

import logging
import re
import tempfile
from pathlib import Path
from typing import Any

from benchmark.config import BenchmarkConfig
from benchmark.results import JobResult
from benchmark.tracking.artifacts import write_artifacts
from benchmark.tracking.traces import log_traces

log = logging.getLogger(__name__)

# Param values longer than this are cut (MLflow rejects very long values).
MAX_PARAM_CHARS = 500
# Keys whose values must never reach MLflow, whatever a user puts in them.
SECRET_KEY = re.compile(r"(api_?key|secret|password|passwd|credential|authorization)$", re.I)


def tracking_uri(store_dir: str | Path) -> str:
    return f"sqlite:///{Path(store_dir).resolve() / 'mlflow.db'}"


_PREPARED: dict[tuple[Path, str], str] = {}  # opening a SQLite store costs ~1 s; once a process


def prepare_store(store_dir: str | Path, experiment: str) -> str:
    """Create and migrate the store and the experiment; returns the experiment id."""
    import mlflow

    store = Path(store_dir).resolve()
    known = _PREPARED.get((store, experiment))
    if known is not None and (store / "mlflow.db").exists():
        mlflow.set_tracking_uri(tracking_uri(store))
        return known
    _PREPARED[(store, experiment)] = found = _prepare(store, experiment)
    return found


def _prepare(store: Path, experiment: str) -> str:
    import mlflow
    from mlflow import MlflowClient

    store.mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(tracking_uri(store))
    client = MlflowClient()
    found = client.get_experiment_by_name(experiment)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(
            experiment, artifact_location=(store / "artifacts").as_uri()
        )
    except mlflow.exceptions.MlflowException:
        # Another job created it between our lookup and create.
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise
        return found.experiment_id


def log_job(
    config: BenchmarkConfig, resolved: dict[str, Any], result: JobResult, scorecard: str = ""
) -> str:
    """One run: flattened config as params, scores as metrics, the rest as artifacts."""
    import mlflow

    experiment_id = prepare_store(config.tracking.store_dir, config.tracking.experiment)
    clean = redact(resolved)
    with mlflow.start_run(experiment_id=experiment_id, run_name=config.run_name) as run:
        mlflow.set_tags(
            {
                "policy": config.policy.name,
                "transcript": config.transcript.name,
                "judge": config.judge.name,
                "answerer": config.answerer.name,
                "rubric": config.rubric.name,
            }
        )
        mlflow.log_params(flatten(clean))
        mlflow.log_metrics(result.metrics())
        for step, point in enumerate(result.points):
            mlflow.log_metrics(
                {
                    "point/tokens_before": point.point.tokens_before,
                    "point/tokens_after": point.tokens_after,
                    "point/compression_ratio": point.compression_ratio,
                },
                step=step,
            )
        mlflow.log_table(_columns(result.rows()), artifact_file="results_table.json")
        with tempfile.TemporaryDirectory() as tmp:
            write_artifacts(result, clean, Path(tmp))
            if scorecard:
                (Path(tmp) / "scorecard.txt").write_text(scorecard)
            mlflow.log_artifacts(tmp)
        if config.tracking.trace_llm and result.calls:
            log_traces(result.calls, experiment_id, name=f"{run.info.run_name}: llm calls")
        return run.info.run_id


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys for nested config; lists become their string form."""
    flat: dict[str, str] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            flat.update(flatten(value, f"{prefix}{key}."))
        return flat
    text = str(data)
    if len(text) > MAX_PARAM_CHARS:
        text = text[: MAX_PARAM_CHARS - 3] + "..."
    return {prefix.rstrip("."): text}


def redact(data: Any) -> Any:
    if isinstance(data, dict):
        return {
            k: "<redacted>" if SECRET_KEY.search(str(k)) else redact(v) for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact(v) for v in data]
    return data


def _columns(rows: list[dict[str, object]]) -> dict[str, list[object]]:
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    return {k: [row.get(k) for row in rows] for k in keys}
