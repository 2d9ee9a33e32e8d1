"""Guards of the local SQLite store: one lock for every process, and a broken store named.

MLflow migrates a fresh SQLite database the first time a process opens it
(``SqlAlchemyStore.__init__``), with no lock between processes: jobs started together on
a fresh store each ran the migrations, crashed on each other's tables, and could leave the
store half-migrated for good (an ``_alembic_tmp_*`` table). So every process of this
benchmark opens a local store only under ``<store_dir>/.lock`` (``store_lock``): the first
creates and migrates it, the others wait and then find it up to date. A store that cannot
be used is reported in one line saying how to recover (``open_store``), before any work.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmark.errors import UserError

DB_NAME = "mlflow.db"
LOCK_NAME = ".lock"
# Migrating a fresh store takes seconds; a holder that dies releases the lock at once, so
# only a hung process makes others wait this long.
LOCK_TIMEOUT_S = 600.0
SQLITE_HEADER = b"SQLite format 3\x00"
RECOVER = "move it aside or delete it, or set tracking.store_dir"


@contextmanager
def store_lock(store: Path, shown: Path) -> Iterator[None]:
    """Hold ``<store>/.lock`` (created with ``store``) across processes; ``shown`` is the
    store folder as the user gave it, for messages."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(store / LOCK_NAME), timeout=LOCK_TIMEOUT_S)
    try:
        store.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise UserError(
            f"tracking store {shown} stayed locked for {LOCK_TIMEOUT_S:g} s by another job "
            f"(lock file {shown / LOCK_NAME}); end that job or set tracking.store_dir"
        ) from None
    except OSError as exc:
        raise UserError(
            f"config key 'tracking.store_dir': cannot use {shown} ({exc.strerror or exc})"
        ) from None
    try:
        yield
    finally:
        lock.release()


def preload() -> None:
    """Import what opening a store needs (seconds of it) before taking the lock, so that
    jobs waiting on it wait only for the opening itself."""
    import alembic.runtime.migration  # noqa: F401
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401


def open_store(uri: str, db: Path, shown: Path) -> Any:
    """An MlflowClient on the SQLite store file ``db`` (at ``uri``), created and migrated if
    fresh. Call it under ``store_lock``: a half-made store seen there is not another job's
    migration in progress but one that will never finish."""
    check_file(db, shown)
    from alembic.util.exc import CommandError
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import SQLAlchemyError

    try:
        return MlflowClient(tracking_uri=uri)
    except (MlflowException, SQLAlchemyError, sqlite3.Error, CommandError) as exc:
        raise UserError(_failure(exc, db, shown)) from None


def check_file(db: Path, shown: Path) -> None:
    """What can be told before MLflow opens ``db``: not SQLite, unreadable, left by an
    interrupted creation or migration, or of another MLflow version. A missing or empty
    file, or one with no table yet, is a fresh store: only that one may MLflow migrate."""
    found = check_sqlite(db, shown)
    if found is None:
        return
    tables, version = found
    from mlflow.store.db.base_sql_model import Base

    # MLflow would (re)run its migrations on a store missing a table, and a failed run leaves
    # it worse: an older store is for `mlflow db upgrade`, with a backup; others are broken.
    missing = sorted(set(Base.metadata.tables) - tables)
    if missing:
        mismatch = _schema_mismatch(version, db, shown)
        raise UserError(mismatch or broken(shown, f"table {missing[0]} is missing"))


def check_sqlite(db: Path, shown: Path) -> tuple[set[str], str] | None:
    """The part of ``check_file`` that needs no MLflow (milliseconds, so a job can run it
    up front while MLflow loads elsewhere): the store's tables and schema version, or None
    for a fresh store. Call it under ``store_lock``, as ``check_file``."""
    if not db.exists():
        return None
    if not db.is_file():
        raise UserError(broken(shown, "not a file"))
    try:
        with db.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise UserError(broken(shown, f"unreadable: {exc.strerror or exc}")) from None
    if not header:
        return None
    if header != SQLITE_HEADER:
        raise UserError(broken(shown, "not an SQLite database"))
    try:
        tables, version = _schema(db)
    except sqlite3.Error as exc:
        raise UserError(broken(shown, f"unreadable: {exc}")) from None
    leftover = sorted(t for t in tables if t.startswith("_alembic_tmp_"))
    if leftover:
        raise UserError(broken(shown, f"an interrupted schema migration left table {leftover[0]}"))
    if not {t for t in tables if t != "alembic_version" and not t.startswith("sqlite_")}:
        return None
    if version is None:
        raise UserError(broken(shown, "tables without a schema version: an interrupted creation"))
    return tables, version


def broken(shown: Path, why: str) -> str:
    return f"tracking store {shown} is broken ({why}): {RECOVER}"


def _schema(db: Path) -> tuple[set[str], str | None]:
    """The tables of ``db`` and its alembic schema revision (None when it has none)."""
    con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = (
            con.execute("SELECT version_num FROM alembic_version").fetchall()
            if "alembic_version" in tables
            else []
        )
    finally:
        con.close()
    return tables, (rows[0][0] if rows else None)


def _failure(exc: Exception, db: Path, shown: Path) -> str:
    """One line for what MLflow raised opening the store."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if "database is locked" in first:
        return f"tracking store {shown} is locked by another program ({first}); retry when it ends"
    if "out-of-date database schema" in first:
        try:
            _, version = _schema(db)
        except sqlite3.Error:
            version = None
        mismatch = _schema_mismatch(version, db, shown) if version else None
        return mismatch or broken(shown, first)
    return broken(shown, first)


def _schema_mismatch(version: str, db: Path, shown: Path) -> str | None:
    """A store of another MLflow version: an older one can be upgraded, a newer one cannot.
    None when ``version`` is this MLflow's."""
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError
    from mlflow.store import db_migrations

    script = ScriptDirectory(str(Path(db_migrations.__file__).parent))
    head = script.get_current_head()
    if version == head:
        return None
    try:
        script.get_revision(version)
    except CommandError:
        return (
            f"tracking store {shown} was written by a newer MLflow (schema {version}, this "
            f"MLflow knows up to {head}): upgrade mlflow, or {RECOVER}"
        )
    return (
        f"tracking store {shown} has an older MLflow schema ({version}, this MLflow needs "
        f"{head}): back it up and run `mlflow db upgrade sqlite:///{db.resolve()}`, or {RECOVER}"
    )
