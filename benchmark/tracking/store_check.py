"""Guards of the local SQLite store: one lock for every process, and a broken store named.

MLflow migrates a fresh SQLite database the first time a process opens it
(``SqlAlchemyStore.__init__``), with no lock between processes: jobs started together on
a fresh store each ran the migrations, crashed on each other's tables, and could leave the
store half-migrated for good (an ``_alembic_tmp_*`` table). So every process of this
benchmark opens a local store only under ``<store_dir>/.lock`` (``store_lock``): the first
creates and migrates it, the others wait and then find it up to date. It creates it in a
file beside the store and renames that onto it when whole (``create``), so a creation cut
short (a full disk, a kill) leaves no half-made store refused for good. A store that cannot
be used (broken, read-only) is reported in one line saying how to recover (``open_store``),
before any work.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmark.errors import UserError
from benchmark.run import disk_errors
from benchmark.tracking.tracking_uri import DB_NAME as DB_NAME
from benchmark.tracking.tracking_uri import LocalStore

# Migrating a fresh store takes seconds; a holder that dies releases the lock at once, so
# only a hung process makes others wait this long.
LOCK_TIMEOUT_S = 600.0
SQLITE_HEADER = b"SQLite format 3\x00"
RECOVER = "move it aside or delete it, or set {key}"
# A fresh store is made under this name beside the real one, then renamed onto it: a
# creation stopped half-way (a full disk, a kill) leaves no half-made store behind.
CREATING = ".{name}.creating-"


@contextmanager
def store_lock(store: LocalStore) -> Iterator[None]:
    """Hold the store's lock file (its folder made first) across processes."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(store.lock), timeout=LOCK_TIMEOUT_S)
    try:
        store.db.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise UserError(
            f"tracking store {store.shown} stayed locked for {LOCK_TIMEOUT_S:g} s by another "
            f"job (lock file {store.lock}); end that job or set {store.key}"
        ) from None
    except OSError as exc:
        where = store.shown.parent if store.key == "tracking.store_dir" else store.shown
        raise UserError(
            f"config key '{store.key}': cannot use {where} ({exc.strerror or exc})"
        ) from None
    try:
        yield
    finally:
        lock.release()


def preload() -> None:
    """Import what opening a store needs (seconds of it) before taking the lock, so that
    jobs waiting on it wait only for the opening itself."""
    import logging

    import alembic.runtime.migration  # noqa: F401
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401

    db_log = logging.getLogger("mlflow.store.db.utils")
    if not any(isinstance(f, _RefusedWrites) for f in db_log.filters):
        db_log.addFilter(_RefusedWrites())


class _RefusedWrites:
    """Drops MLflow's logged traceback of a write the disk refused: the error it raises
    then is reported in one line (``disk_errors``)."""

    def filter(self, record: Any) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return exc is None or disk_errors.write_error(exc) is None


def open_store(store: LocalStore, write: bool = True) -> Any:
    """An MlflowClient on ``store``, created and migrated if fresh (``create``). Call it
    under ``store_lock``: a half-made store seen there is not another job's migration in
    progress but one that will never finish."""
    fresh = check_file(store, write)
    from alembic.util.exc import CommandError
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import SQLAlchemyError

    try:
        if fresh:
            create(store)
        return MlflowClient(tracking_uri=store.uri)
    except (MlflowException, SQLAlchemyError, sqlite3.Error, CommandError, OSError) as exc:
        refused = disk_errors.user_error(exc, store.key)
        raise (refused or UserError(_failure(exc, store))) from None


def create(store: LocalStore) -> None:
    """Make and migrate a new store in a file beside ``store.db``, then rename it onto it:
    the store appears whole or not at all (a full disk, a kill midway leave none)."""
    from mlflow.store.db.utils import _initialize_tables, create_sqlalchemy_engine

    folder = store.db.parent
    prefix = CREATING.format(name=store.db.name)
    for stale in folder.glob(f"{prefix}*"):  # under the lock: a dead creator's leftovers
        stale.unlink(missing_ok=True)
    temporary = folder / f"{prefix}{os.getpid()}"
    engine = create_sqlalchemy_engine(f"sqlite:///{temporary}")
    try:
        _initialize_tables(engine)
        engine.dispose()
        os.replace(temporary, store.db)
    except BaseException:
        engine.dispose()
        for leftover in folder.glob(f"{temporary.name}*"):  # its -journal too
            leftover.unlink(missing_ok=True)
        raise


def check_file(store: LocalStore, write: bool = True) -> bool:
    """What can be told before MLflow opens the store: not SQLite, unreadable, read-only,
    left by an interrupted creation or migration, or of another MLflow version. True for
    a fresh store (no file, an empty one, or one with no table yet): only that one is
    created (``create``); MLflow never migrates one that holds anything."""
    found = check_sqlite(store, write)
    if found is None:
        return True
    tables, version = found
    from mlflow.store.db.base_sql_model import Base

    # MLflow would (re)run its migrations on a store missing a table, and a failed run leaves
    # it worse: an older store is for `mlflow db upgrade`, with a backup; others are broken.
    missing = sorted(set(Base.metadata.tables) - tables)
    if missing:
        mismatch = _schema_mismatch(version, store)
        raise UserError(mismatch or broken(store, f"table {missing[0]} is missing"))
    return False


def check_sqlite(store: LocalStore, write: bool = True) -> tuple[set[str], str] | None:
    """The part of ``check_file`` that needs no MLflow (milliseconds, so a job can run it
    up front while MLflow loads elsewhere): the store's tables and schema version, or None
    for a fresh store. Call it under ``store_lock``, as ``check_file``."""
    db = store.db
    if not db.exists():
        return None
    if not db.is_file():
        raise UserError(broken(store, "not a file"))
    try:
        with db.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise UserError(broken(store, f"unreadable: {exc.strerror or exc}")) from None
    if write:
        _check_writable(store)
    if not header:
        return None
    if header != SQLITE_HEADER:
        raise UserError(broken(store, "not an SQLite database"))
    try:
        tables, version = _schema(db)
    except sqlite3.Error as exc:
        raise UserError(broken(store, f"unreadable: {exc}")) from None
    leftover = sorted(t for t in tables if t.startswith("_alembic_tmp_"))
    if leftover:
        raise UserError(broken(store, f"an interrupted schema migration left table {leftover[0]}"))
    if not {t for t in tables if t != "alembic_version" and not t.startswith("sqlite_")}:
        return None
    if version is None:
        raise UserError(broken(store, "tables without a schema version: an interrupted creation"))
    return tables, version


def _check_writable(store: LocalStore) -> None:
    """The store file can be written: opened for writing, which root too is refused on a
    read-only mount (EROFS) or an immutable file (EPERM); nothing is written."""
    try:
        os.close(os.open(store.db, os.O_RDWR))
    except OSError as exc:
        raise UserError(
            f"config key '{store.key}': tracking store {store.shown} is not writable "
            f"({exc.strerror or exc}); make it writable or set {store.key}"
        ) from None


def broken(store: LocalStore, why: str) -> str:
    return f"tracking store {store.shown} is broken ({why}): {RECOVER.format(key=store.key)}"


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


def _failure(exc: Exception, store: LocalStore) -> str:
    """One line for what MLflow raised opening the store."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if "database is locked" in first:
        return (
            f"tracking store {store.shown} is locked by another program ({first}); "
            "retry when it ends"
        )
    if "out-of-date database schema" in first:
        try:
            _, version = _schema(store.db)
        except sqlite3.Error:
            version = None
        mismatch = _schema_mismatch(version, store) if version else None
        return mismatch or broken(store, first)
    return broken(store, first)


def _schema_mismatch(version: str, store: LocalStore) -> str | None:
    """A store of another MLflow version: an older one can be upgraded, a newer one cannot.
    None when ``version`` is this MLflow's."""
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError
    from mlflow.store import db_migrations

    script = ScriptDirectory(str(Path(db_migrations.__file__).parent))
    head = script.get_current_head()
    if version == head:
        return None
    recover = RECOVER.format(key=store.key)
    try:
        script.get_revision(version)
    except CommandError:
        return (
            f"tracking store {store.shown} was written by a newer MLflow (schema {version}, "
            f"this MLflow knows up to {head}): upgrade mlflow, or {recover}"
        )
    return (
        f"tracking store {store.shown} has an older MLflow schema ({version}, this MLflow "
        f"needs {head}): back it up and run `mlflow db upgrade sqlite:///{store.db}`, "
        f"or {recover}"
    )
