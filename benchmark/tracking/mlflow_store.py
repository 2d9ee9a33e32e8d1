"""The MLflow store runs are logged to: SQLite under ``mlruns/``, or a tracking server.

MLflow >= 3.13 refuses the bare ``./mlruns`` file store, so the local tracking
store is ``sqlite:///mlruns/mlflow.db`` with artifacts in ``mlruns/artifacts``.
A fresh store spends seconds on schema migrations; ``prepare_store`` does that,
and creates the experiment, under one lock shared by every process
(``store_check.py``), so jobs started together never race on it, and a broken store
is named in one line before any work. A ``sqlite:`` ``tracking.uri`` is such a store too
(``tracking_uri.local_store``). With any other ``tracking.uri`` the server (or database)
owns its store: jobs check it can be reached, then only make sure the experiment exists.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from benchmark.errors import UserError, one_line
from benchmark.run import interrupt
from benchmark.tracking.config import TrackingConfig
from benchmark.tracking.store_check import check_sqlite, open_store, preload, store_lock
from benchmark.tracking.tracking_uri import (
    LocalStore,
    check_reachable_host,
    check_uri,
    local_store,
    store_dir_store,
)


def tracking_uri(store_dir: str | Path) -> str:
    return store_dir_store(store_dir).uri


def store_uri(tracking: TrackingConfig) -> str:
    """Where ``tracking`` logs: its server's URI, or the SQLite store under its store_dir."""
    return tracking.uri or tracking_uri(tracking.store_dir)


def prepare_tracking(tracking: TrackingConfig) -> str:
    """Point MLflow at the configured store or server and make sure the experiment exists;
    returns the experiment id."""
    store = local_store(tracking)
    if store is not None:
        check_uri(tracking)
        return _prepare_local(store, tracking.experiment)
    assert tracking.uri is not None
    return prepare_server(tracking.uri, tracking.experiment)


def check_tracking(tracking: TrackingConfig) -> None:
    """What ``prepare_tracking`` would refuse that can be told without MLflow, in
    milliseconds (a server: seconds at most): a URI MLflow cannot use (``check_uri``), a
    store folder that cannot be used, a store file that is not one of ours or cannot be
    written (``check_sqlite``), a server or database host that does not answer."""
    check_uri(tracking)
    store = local_store(tracking)
    if store is None:
        assert tracking.uri is not None
        check_reachable(tracking.uri)
        check_reachable_host(tracking.uri)
        return
    with store_lock(store):
        check_sqlite(store)


def locked(tracking: TrackingConfig) -> Any:
    """The local store's lock (held across processes), or nothing for a server."""
    store = local_store(tracking)
    return nullcontext() if store is None else store_lock(store)


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
    return _prepare_local(store_dir_store(store_dir), experiment)


def _prepare_local(store: LocalStore, experiment: str) -> str:
    """Open (create, migrate) the store and the experiment under the store's lock; once
    per process and store."""
    import mlflow

    known = _PREPARED.get((store.db, experiment))
    if known is not None and store.db.exists():
        mlflow.set_tracking_uri(store.uri)
        return known
    preload()
    with store_lock(store), _refused_writes(store):
        with interrupt.deferred():  # a signal waits for the migration: halfway, it is broken
            open_store(store)
        mlflow.set_tracking_uri(store.uri)
        found = _ensure_experiment(experiment, store.artifacts)
    _PREPARED[(store.db, experiment)] = found
    return found


@contextmanager
def _refused_writes(store: LocalStore) -> Iterator[None]:
    """A full disk or a read-only store met while writing is one line naming its key."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:
        refused = refused_write(exc, store)
        if refused is None:
            raise
        raise refused from None


def refused_write(exc: BaseException, store: LocalStore | None) -> UserError | None:
    """``exc`` as one line when it is a write the disk refused (``disk_errors``): with a
    local ``store`` (``local_store(tracking)``), naming its key and folder."""
    from benchmark.run import disk_errors

    if store is None:
        return disk_errors.user_error(exc)
    return disk_errors.user_error(exc, store.key, store.db.parent)


def open_local_store(store_dir: str | Path) -> Any:
    """An MlflowClient on the existing store under ``store_dir``, checked and opened under its
    lock (for readers such as the report, which may read a store it cannot write)."""
    store = store_dir_store(store_dir)
    preload()
    with store_lock(store):
        return open_store(store, write=False)


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

    check_uri(TrackingConfig(uri=uri))
    bound_http()
    check_reachable(uri)
    check_reachable_host(uri)
    mlflow.set_tracking_uri(uri)
    known = _PREPARED_SERVERS.get((uri, experiment))
    if known is None:
        try:
            known = _ensure_experiment(experiment, None)
        except Exception as exc:  # noqa: BLE001 - MLflow's, the driver's, the network's
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise UserError(
                f"config key 'tracking.uri': MLflow cannot use it ({first[:300]})"
            ) from None
        _PREPARED_SERVERS[(uri, experiment)] = known
    return known


def check_reachable(uri: str, timeout_s: float = 5.0) -> None:
    """Fail in one line when an http(s) server does not answer, or (plain http) answers its
    health check with a server error or not within ``timeout_s``, instead of MLflow's
    minutes of retries. Other URI schemes (databricks, a database) and servers behind a
    proxy are left to MLflow (and ``tracking_uri.check_reachable_host``)."""
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
    if parts.scheme == "http":  # https: MLflow's own TLS settings decide what verifies
        _check_health(uri, parts.hostname, port, parts.path.rstrip("/"), timeout_s)


# A cheap read every MLflow tracking server answers (200; 401 or 403 behind a login).
PROBE_PATH = "/api/2.0/mlflow/experiments/search?max_results=1"


def _check_health(uri: str, host: str, port: int, prefix: str, timeout_s: float) -> None:
    """``GET <uri>`` + ``PROBE_PATH`` answers within ``timeout_s`` in all (status and body),
    is 200 (401 or 403 behind a login; not a redirect, a 404 or a server error) and, when
    200, a JSON object: else
    MLflow would fail only when the run is logged, in a traceback (an empty or HTML body, a
    gzip bomb) or never (a body that trickles or never ends: its reads have no deadline)."""
    import http.client
    import time

    conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    try:
        conn.request("GET", f"{prefix}{PROBE_PATH}", headers={"Accept-Encoding": "identity"})
        response = conn.getresponse()
        status = response.status
        body = _bounded_body(response, deadline) if status == 200 else b""
    except (OSError, http.client.HTTPException) as exc:
        why = f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError) else str(exc)
        raise UserError(
            f"tracking server {uri} does not answer ({why or type(exc).__name__}); check that "
            "it is an MLflow server, or set tracking.uri"
        ) from None
    finally:
        conn.close()
    if status >= 500:
        raise UserError(
            f"tracking server {uri} answers with server error {status}; check its log, or set "
            "tracking.uri"
        )
    if status == 404:
        raise UserError(
            f"tracking server {uri} has no MLflow API (404 on {PROBE_PATH.split('?')[0]}); "
            "check the address, or set tracking.uri"
        )
    if status not in (200, 401, 403):  # a redirect (MLflow follows none well), a 4xx
        raise UserError(
            f"tracking server {uri} does not answer as an MLflow server (HTTP {status} to "
            f"{PROBE_PATH.split('?')[0]}); check the address, or set tracking.uri"
        )
    if status == 200 and not _json_object(body):
        kind = response.getheader("Content-Type") or "no content type"
        raise UserError(
            f"tracking server {uri} does not answer as an MLflow server (its reply to "
            f"{PROBE_PATH.split('?')[0]} is not a JSON object: {len(body):,} bytes, "
            f"{one_line(kind)[:60]}); check the address, or set tracking.uri"
        )


HEALTH_BODY_BYTES = 1 << 20  # an MLflow reply to a one-experiment search is a few KB


def _bounded_body(response: Any, deadline: float) -> bytes:
    """The reply's body, read chunk by chunk until ``deadline`` (a ``TimeoutError`` past
    it) and at most ``HEALTH_BODY_BYTES`` (the rest is not read)."""
    import time

    body = b""
    while len(body) <= HEALTH_BODY_BYTES:
        if time.monotonic() > deadline:
            raise TimeoutError
        chunk = response.read1(65536)
        if not chunk:
            break
        body += chunk
    return body


def _json_object(body: bytes) -> bool:
    import json

    try:
        return isinstance(json.loads(body), dict)
    except (ValueError, RecursionError):
        return False


# MLflow retries a failing server for minutes by default (7 retries, backoff 2, 120 s
# timeout); a job waits a bounded time instead. The user's own settings win.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "3",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
}


def bound_http() -> None:
    for name, value in HTTP_DEFAULTS.items():
        os.environ.setdefault(name, value)
