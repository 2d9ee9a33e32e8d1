"""What a tracking URI names, and what it cannot do, told before the job's work.

MLflow judges a URI only when a run is logged: after the job, in a page of traceback.
An unknown scheme, a database whose driver is not installed, a file store (MLflow >= 3.13
refuses them), Databricks with no credentials, an in-memory SQLite database (the run
would be lost with the process) or a SQLite file in a folder that does not exist are
each one line naming ``tracking.uri`` here (:func:`check_uri`, no network, milliseconds);
a server or database host that does not answer is one line after at most a few seconds
(:func:`check_reachable_host`). A SQLite file, given by ``tracking.uri`` or under
``tracking.store_dir``, is a :class:`LocalStore`: the same lock, checks and atomic
creation whichever way it was named (``mlflow_store``, ``store_check``).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from benchmark.errors import UserError
from benchmark.tracking.config import TrackingConfig

DB_NAME = "mlflow.db"
LOCK_NAME = ".lock"
# MLflow's own tracking stores; plugins add theirs (entry point group below).
BUILTIN_SCHEMES = frozenset(
    {"file", "databricks", "databricks-uc", "uc", "http", "https"}
    | {"sqlite", "postgresql", "mysql", "mssql"}
)
PLUGIN_GROUP = "mlflow.tracking_store"
DATABASES = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}  # scheme -> default port
DATABRICKS = frozenset({"databricks", "databricks-uc", "uc"})
REACH_TIMEOUT_S = 5.0
KEY = "config key 'tracking.uri'"


@dataclass(frozen=True)
class LocalStore:
    """A SQLite store file: ``db`` (absolute), ``shown`` as the user gave it, the config
    ``key`` that names it, the ``lock`` every process opens it under, the ``uri`` MLflow
    opens and where new experiments keep artifacts (None: MLflow's default)."""

    db: Path
    shown: Path
    key: str
    lock: Path
    uri: str
    artifacts: str | None


def store_dir_store(store_dir: str | Path) -> LocalStore:
    """The store under ``tracking.store_dir``: ``<dir>/mlflow.db``, artifacts beside it."""
    shown = Path(store_dir)
    folder = shown.resolve()
    return LocalStore(
        db=folder / DB_NAME,
        shown=shown / DB_NAME,
        key="tracking.store_dir",
        lock=folder / LOCK_NAME,
        uri=f"sqlite:///{folder / DB_NAME}",
        artifacts=(folder / "artifacts").as_uri(),
    )


def local_store(tracking: TrackingConfig) -> LocalStore | None:
    """The SQLite file ``tracking`` logs to, or None for a server or another database."""
    if tracking.uri is None:
        return store_dir_store(tracking.store_dir)
    if scheme_of(tracking.uri) != "sqlite":
        return None
    path = sqlite_path(tracking.uri)
    if path is None:
        return None  # in memory: check_uri refuses it
    db = Path(path).resolve()  # as SQLAlchemy reads it: no ~
    return LocalStore(
        db=db,
        shown=Path(path),
        key="tracking.uri",
        lock=db.with_name(f".{db.name}.lock"),
        uri=tracking.uri,
        artifacts=None,
    )


def scheme_of(uri: str) -> str:
    """The store kind: ``mysql+pymysql://`` is mysql; a bare ``databricks`` is databricks."""
    if "://" not in uri:
        return uri.split(":", 1)[0].lower()
    return uri.split("://", 1)[0].split("+", 1)[0].lower()


def sqlite_path(uri: str) -> str | None:
    """The file of a ``sqlite:`` URI as SQLAlchemy reads it; None when it is in memory."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(uri)
    except (ArgumentError, ValueError) as exc:
        raise UserError(f"{KEY}: not a database URI ({exc})") from None
    database = url.database or ""
    memory = url.query.get("mode") == "memory" or database.startswith("file::memory:")
    if not database or database == ":memory:" or memory:
        return None
    return database.removeprefix("file:") if url.query.get("uri") else database


def check_uri(tracking: TrackingConfig) -> None:
    """What is wrong with ``tracking.uri`` that can be told here, without the network."""
    uri = tracking.uri
    if uri is None or not tracking.enabled:
        return
    scheme = scheme_of(uri)
    written = uri.split(":", 1)[0]
    if written != written.lower():  # SQLAlchemy and MLflow's registry match it exactly
        raise UserError(
            f"{KEY}: write its scheme in lower case ({written.lower()}:, not {written}:)"
        )
    if scheme not in BUILTIN_SCHEMES and scheme not in _plugin_schemes():
        raise UserError(
            f"{KEY}: MLflow cannot log to a '{scheme}' URI; use http(s)://host:port (a "
            "server), sqlite:///path/mlflow.db, postgresql://, mysql://, mssql:// or databricks"
        )
    if scheme == "sqlite":
        _check_sqlite_uri(uri)
    elif scheme in DATABASES:
        _check_driver(uri, scheme)
    elif scheme == "file":
        _check_file_store()
    elif scheme in DATABRICKS:
        _check_databricks(uri)


def _plugin_schemes() -> set[str]:
    from importlib.metadata import entry_points

    return {ep.name.lower() for ep in entry_points(group=PLUGIN_GROUP)}


def _check_sqlite_uri(uri: str) -> None:
    """A file SQLAlchemy and the store's lock name alike: no host (MLflow refuses one after
    the job), no query string (``?mode=ro&uri=true`` opens another file than the one
    checked and locked), in a folder that exists, with names the file system takes."""
    from sqlalchemy.engine import make_url

    path = sqlite_path(uri)
    if path is None:
        raise UserError(
            f"{KEY}: an in-memory SQLite database loses the run when the job ends; give a "
            "file (sqlite:///path/mlflow.db) or null for the store under tracking.store_dir"
        )
    url = make_url(uri)
    if url.host or url.port or url.username:
        raise UserError(
            f"{KEY}: a SQLite URI names a file, not a host: sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db"
        )
    if url.query:
        asked = "&".join(f"{name}=..." for name in url.query)
        raise UserError(
            f"{KEY}: a SQLite store takes no query string (?{asked}); the job locks and "
            "checks the file itself: give sqlite:///path/mlflow.db"
        )
    folder = Path(path).absolute().parent
    try:
        found = folder.is_dir()
    except OSError as exc:  # ENAMETOOLONG past PATH_MAX, ELOOP...
        raise UserError(f"{KEY}: cannot use its folder ({exc.strerror or exc})") from None
    if not found:
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UserError(f"{KEY}: the SQLite file's folder {folder} {what}; create it first")
    from benchmark.config.checks import check_name_lengths, check_writable

    check_writable("tracking.uri", folder)
    lock = f".{Path(path).name}.lock"  # the longest name the store adds beside it
    check_name_lengths("tracking.uri", folder / lock, folder)


def _check_driver(uri: str, scheme: str) -> None:
    """The database's Python driver is installed (SQLAlchemy imports it on first use)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        make_url(uri).get_dialect().import_dbapi()
    except (ArgumentError, ValueError, NoSuchModuleError) as exc:
        raise UserError(f"{KEY}: not a usable {scheme} URI ({exc})") from None
    except ImportError as exc:
        raise UserError(
            f"{KEY}: the {scheme} driver is not installed ({exc}); pip install it, or choose "
            f"another driver as {scheme}+<driver>://"
        ) from None


def _check_file_store() -> None:
    if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in ("1", "true"):
        return
    raise UserError(
        f"{KEY}: MLflow >= 3.13 refuses file stores (file:); use sqlite:///path/mlflow.db, "
        "or null for the SQLite store under tracking.store_dir"
    )


def _check_databricks(uri: str) -> None:
    """Credentials exist: the environment's, or the profile in ~/.databrickscfg."""
    profile = uri.split("://", 1)[1].split(":", 1)[0] if "://" in uri else ""
    if not profile and os.environ.get("DATABRICKS_HOST"):
        return
    config = Path(os.environ.get("DATABRICKS_CONFIG_FILE") or "~/.databrickscfg").expanduser()
    wanted = f"[{profile or os.environ.get('DATABRICKS_CONFIG_PROFILE') or 'DEFAULT'}]"
    try:
        if any(line.strip() == wanted for line in config.read_text().splitlines()):
            return
    except (OSError, UnicodeDecodeError):
        pass
    raise UserError(
        f"{KEY}: Databricks has no credentials here (no DATABRICKS_HOST, no profile "
        f"{wanted} in {config}); run `databricks auth login` or set them"
    )


def check_reachable_host(uri: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """A database server named by host answers on its port within ``timeout_s``."""
    scheme = scheme_of(uri)
    if scheme not in DATABASES:
        return
    parts = urlsplit(uri)
    try:
        host, port = parts.hostname, parts.port or DATABASES[scheme]
    except ValueError:
        raise UserError(f"{KEY}: the port is not a number") from None
    if not host or (getproxies().get("all") and not proxy_bypass(host)):
        return  # a local socket, or only the proxy could tell
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise UserError(
            f"{KEY}: the {scheme} server {host}:{port} is not reachable "
            f"({exc.strerror or exc}); start it or fix the URI"
        ) from None
