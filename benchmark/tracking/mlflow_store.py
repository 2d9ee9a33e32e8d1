"""The MLflow store runs are logged to: SQLite under ``mlruns/``, or a tracking server.

MLflow >= 3.13 refuses the bare ``./mlruns`` file store, so the local tracking
store is ``sqlite:///mlruns/mlflow.db`` with artifacts in ``mlruns/artifacts``.
A fresh store spends seconds on schema migrations; ``prepare_store`` does that,
and creates the experiment, under one lock shared by every process
(``store_check.py``), so jobs started together never race on it, and a broken store
is named in one line before any work. With ``tracking.uri`` the server owns its
store: jobs only make sure the experiment exists.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from benchmark import interrupt
from benchmark.errors import UserError
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.store_check import DB_NAME, check_sqlite, open_store, preload, store_lock


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


def check_tracking(tracking: TrackingConfig) -> None:
    """What ``prepare_tracking`` would refuse that can be told without MLflow, in
    milliseconds: a store folder that cannot be used, a store file that is not one of ours
    (``check_sqlite``), a server that does not answer."""
    if tracking.uri is not None:
        check_reachable(tracking.uri)
        return
    shown = Path(tracking.store_dir)
    store = shown.resolve()
    with store_lock(store, shown):
        check_sqlite(store / DB_NAME, shown / DB_NAME)


# MLflow 3.x shows an experiment without a kind as a GenAI one: it opens on an empty traces
# overview. Its UI names the kind of classic training runs `custom_model_development` (the
# Python package has no constant for it); with it the experiment opens on the runs table.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
TRAINING_RUNS_KIND = "custom_model_development"
EXPERIMENT_TAGS = {EXPERIMENT_KIND_TAG: TRAINING_RUNS_KIND}

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
        with interrupt.deferred():  # a signal waits for the migration: halfway, it is broken
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
    server too, where no lock of ours holds), and of the kind that opens on its runs."""
    import mlflow
    from mlflow import MlflowClient

    client = MlflowClient()
    found = client.get_experiment_by_name(experiment)
    if found is None:
        try:
            return client.create_experiment(
                experiment, artifact_location=artifact_location, tags=EXPERIMENT_TAGS
            )
        except mlflow.exceptions.MlflowException:
            # Another job created it between our lookup and create.
            found = client.get_experiment_by_name(experiment)
            if found is None:
                raise
    for key, value in EXPERIMENT_TAGS.items():  # made before the tag was: a kind set in the
        if key not in found.tags:  # UI by hand is the user's, and stays
            client.set_experiment_tag(found.experiment_id, key, value)
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
