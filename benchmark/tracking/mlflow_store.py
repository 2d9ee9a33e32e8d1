"""Log one job as one MLflow run, in a SQLite store under ``mlruns/`` or on a tracking server.

MLflow >= 3.13 refuses the bare ``./mlruns`` file store, so the local tracking
store is ``sqlite:///mlruns/mlflow.db`` with artifacts in ``mlruns/artifacts``.
A fresh store spends seconds on schema migrations; ``prepare_store`` does that,
and creates the experiment, under one lock shared by every process
(``store_check.py``), so jobs started together never race on it, and a broken store
is named in one line before any work. With ``tracking.uri`` the server owns its
store: jobs only make sure the experiment exists.
"""

from __future__ import annotations

import logging
import socket
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from benchmark import interrupt
from benchmark.config import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.interrupt import LoggingInterrupted
from benchmark.redaction import redact_settings, scrub_setting
from benchmark.results import JobResult
from benchmark.tracking.artifacts import write_artifacts
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.inputs import log_transcript_inputs, manifest_metrics
from benchmark.tracking.store_check import DB_NAME, open_store, preload, store_lock
from benchmark.tracking.sweep import SweepInfo
from benchmark.tracking.traces import log_traces

log = logging.getLogger(__name__)

# Param values longer than this are cut (MLflow rejects very long values).
MAX_PARAM_CHARS = 500


def tracking_uri(store_dir: str | Path) -> str:
    return f"sqlite:///{Path(store_dir).resolve() / DB_NAME}"


def store_uri(tracking: TrackingConfig) -> str:
    """Where ``tracking`` logs: its server's URI, or the SQLite store under its store_dir."""
    return tracking.uri or tracking_uri(tracking.store_dir)


def prepare_tracking(tracking: TrackingConfig) -> str:
    """Point MLflow at the configured store or server and make sure the experiment exists;
    returns the experiment id."""
    if tracking.uri is None:
        return prepare_store(tracking.store_dir, tracking.experiment)
    return prepare_server(tracking.uri, tracking.experiment)


_PREPARED: dict[tuple[Path, str], str] = {}  # opening a SQLite store costs ~1 s; once a process
_PREPARED_SERVERS: dict[tuple[str, str], str] = {}


def prepare_store(store_dir: str | Path, experiment: str) -> str:
    """Create and migrate the store and the experiment; returns the experiment id.

    Once per process: MLflow keeps the opened store, which a later open reuses.
    """
    import mlflow

    store = Path(store_dir).resolve()
    known = _PREPARED.get((store, experiment))
    if known is not None and (store / DB_NAME).exists():
        mlflow.set_tracking_uri(tracking_uri(store))
        return known
    _PREPARED[(store, experiment)] = found = _prepare(Path(store_dir), experiment)
    return found


def _prepare(store_dir: Path, experiment: str) -> str:
    """Open (create, migrate) the store and the experiment under the store's lock."""
    import mlflow

    store = store_dir.resolve()
    preload()
    with store_lock(store, store_dir):
        open_store(tracking_uri(store), store / DB_NAME, store_dir / DB_NAME)
        mlflow.set_tracking_uri(tracking_uri(store))
        return _ensure_experiment(experiment, (store / "artifacts").as_uri())


def open_local_store(store_dir: str | Path) -> Any:
    """An MlflowClient on the existing store under ``store_dir``, checked and opened under its
    lock (for readers such as the report)."""
    store = Path(store_dir).resolve()
    preload()
    with store_lock(store, Path(store_dir)):
        return open_store(tracking_uri(store), store / DB_NAME, Path(store_dir) / DB_NAME)


def _ensure_experiment(experiment: str, artifact_location: str | None) -> str:
    """The experiment's id in the current tracking store, created if missing (race-safe on a
    server too, where no lock of ours holds)."""
    import mlflow
    from mlflow import MlflowClient

    client = MlflowClient()
    found = client.get_experiment_by_name(experiment)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(experiment, artifact_location=artifact_location)
    except mlflow.exceptions.MlflowException:
        # Another job created it between our lookup and create.
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise
        return found.experiment_id


def prepare_server(uri: str, experiment: str) -> str:
    """Use the tracking server at ``uri``; create the experiment there unless it exists."""
    import mlflow

    check_reachable(uri)
    mlflow.set_tracking_uri(uri)
    known = _PREPARED_SERVERS.get((uri, experiment))
    if known is None:
        _PREPARED_SERVERS[(uri, experiment)] = known = _ensure_experiment(experiment, None)
    return known


def check_reachable(uri: str, timeout_s: float = 5.0) -> None:
    """Fail in one line when an http(s) server does not answer, instead of MLflow's minutes of
    retries. Other URI schemes (databricks, a database) and servers behind a proxy are left to
    MLflow: only the proxy could tell."""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return
    if getproxies().get(parts.scheme) and not proxy_bypass(parts.hostname):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise UserError(
            f"tracking server {uri} is not reachable ({exc.strerror or exc}); start one with "
            "`mlflow server --host HOST --port PORT` or set tracking.uri / MLFLOW_TRACKING_URI"
        ) from None


def log_job(
    config: BenchmarkConfig,
    resolved: dict[str, Any],
    result: JobResult,
    scorecard: str = "",
    *,
    sweep: SweepInfo | None = None,
    extra_metrics: dict[str, float] | None = None,
) -> str:
    """One run: flattened config as params, scores as metrics, the rest as artifacts.

    A job of a Hydra multirun is tagged with its ``sweep`` (see ``sweep.py``) so the
    runs of one sweep can be found, compared and reported together. An interrupted
    job's result (``result.interrupted``) ends its run as KILLED; Ctrl-C while logging
    ends the run as KILLED too, with what was logged so far (``LoggingInterrupted``).
    """
    import mlflow

    experiment_id = prepare_tracking(config.tracking)
    clean = redact(resolved)
    run_name = scrub_setting(config.run_name)
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_name) as run:
        run_id = run.info.run_id
        if result.interrupted:  # a second Ctrl-C leaves at once: say what it leaves
            _arm_second(config, run_id)
        try:
            _log_run(config, clean, result, scorecard, sweep, extra_metrics)
            if config.tracking.trace_llm and result.calls:
                log_traces(result.calls, experiment_id, name=f"{run.info.run_name}: llm calls")
        except KeyboardInterrupt:
            _arm_second(config, run_id)
            mlflow.end_run("KILLED")
            raise LoggingInterrupted(run_id) from None
        mlflow.end_run("KILLED" if result.interrupted else "FINISHED")
        return run_id


def _arm_second(config: BenchmarkConfig, run_id: str) -> None:
    """What a second Ctrl-C while ``run_id`` is logged says it leaves behind."""
    interrupt.arm_second(
        f"run {run_id} in {store_uri(config.tracking)} is left RUNNING with what was logged so far"
    )


def _log_run(
    config: BenchmarkConfig,
    clean: dict[str, Any],
    result: JobResult,
    scorecard: str,
    sweep: SweepInfo | None,
    extra_metrics: dict[str, float] | None,
) -> None:
    """Everything of one run but its traces, into the active MLflow run."""
    import mlflow

    mlflow.set_tags(
        {
            "policy": config.policy.name,
            "transcript": config.transcript.name,
            "judge": config.judge.name,
            "answerer": config.answerer.name,
            "rubric": config.rubric.name,
            **({"not_measured": ",".join(result.not_measured)} if result.not_measured else {}),
            **({"interrupted": "true"} if result.interrupted else {}),
            **sweep_tags(sweep),
        }
    )
    mlflow.log_params(flatten(clean))
    mlflow.log_metrics(
        {
            **result.metrics(),
            **(manifest_metrics(result.inputs) if result.inputs else {}),
            **(extra_metrics or {}),
        }
    )
    if result.inputs is not None:
        log_transcript_inputs(result.inputs)
    for step, point in enumerate(result.points):
        compacted = point.compaction_error is None  # a failed point kept no tokens to show
        mlflow.log_metrics(
            {
                "point/tokens_before": point.point.tokens_before,
                **(
                    {
                        "point/tokens_after": point.tokens_after,
                        "point/compression_ratio": point.compression_ratio,
                    }
                    if compacted
                    else {}
                ),
            },
            step=step,
        )
    mlflow.log_table(_columns(result.rows()), artifact_file="results_table.json")
    with tempfile.TemporaryDirectory() as tmp:
        write_artifacts(result, clean, Path(tmp))
        if scorecard:
            (Path(tmp) / "scorecard.txt").write_text(scorecard)
        mlflow.log_artifacts(tmp)


def sweep_tags(sweep: SweepInfo | None) -> dict[str, str]:
    """A sweep job's tags, scrubbed: overrides are user text and may hold a credential."""
    return {k: scrub_setting(v) for k, v in sweep.tags().items()} if sweep is not None else {}


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys for nested config; lists become their string form. Cuts long values:
    ``data`` must be redacted already (``redact``), so no cut splits a secret."""
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
    """Config as it may be logged: secret-named keys' values, URL user parts and anything a
    detector finds redacted (``benchmark.redaction.redact_settings``)."""
    return redact_settings(data)


def _columns(rows: list[dict[str, object]]) -> dict[str, list[object]]:
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    return {k: [row.get(k) for row in rows] for k in keys}
