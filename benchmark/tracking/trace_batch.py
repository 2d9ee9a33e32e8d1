"""``start_trace`` made cheaper inside one transaction of a SQL store, on MLflow versions checked.

Profiled (py-spy on the tracking child, 514 probe traces on SQLite), ``start_trace`` was
~60% of writing traces: ~40% of it ``self.get_experiment`` (a query with eager loads,
the same experiment for every trace) and most of the rest one ORM flush per trace (its
row, tags, metadata and assessments, each an INSERT of its own). Within one transaction
of ``trace_writer.one_transaction``, :func:`quick_starts` reads the experiment once (a
memo for this thread, removed after) and holds the flushes: the batch's rows are flushed
together when the starts are done, before any span is logged (SQLAlchemy then inserts
each table's rows with one ``executemany``). The rows written are the same objects MLflow
built; only when they reach the database changes.

Holding the flush leans on how ``SqlAlchemyStore.start_trace`` works: on a new trace it
reads nothing back after ``session.add`` and flushes once, at its end. That was read in
the source of MLflow 3.13, 3.17 and 3.18 (``CHECKED``); with trace roll-ups on, a start
reads its rebuild-queue row, which an earlier unflushed start may have added, so they
turn it off. Any other version, or roll-ups on, takes MLflow's own path unchanged.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

CHECKED = ((3, 13), (3, 18))  # MLflow (major, minor) versions, inclusive, read for this


def applies(version: str | None = None) -> bool:
    """Whether the held flush is safe: an MLflow version ``CHECKED`` (the installed one by
    default) with SQL trace roll-ups off."""
    if version is None:
        import mlflow

        version = mlflow.__version__
    try:
        major_minor = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:  # a development build ("3.19.0.dev0" parses; "abc" does not)
        return False
    if not CHECKED[0] <= major_minor <= CHECKED[1]:
        return False
    try:
        from mlflow.environment_variables import MLFLOW_SQL_TRACE_ROLLUPS_ENABLED
    except ImportError:  # before roll-ups existed (3.13)
        return True
    return not MLFLOW_SQL_TRACE_ROLLUPS_ENABLED.get()


@contextlib.contextmanager
def quick_starts(store: Any, session: Any) -> Iterator[bool]:
    """Within it, ``store.start_trace`` calls of this thread share one experiment read and
    one flush (done on leaving it without an error); yields whether that applies. With no
    ``session`` (a store that is not SQL) or a version not checked, nothing changes."""
    if session is None or not applies() or not callable(getattr(store, "get_experiment", None)):
        yield False
        return
    owner = threading.get_ident()
    read = store.get_experiment
    experiments: dict[Any, Any] = {}

    def get_experiment(experiment_id: Any) -> Any:
        if threading.get_ident() != owner:  # another thread's read is its own
            return read(experiment_id)
        if experiment_id not in experiments:
            experiments[experiment_id] = read(experiment_id)
        return experiments[experiment_id]

    def held(objects: Any = None) -> None:
        """The flush of one start: done with the others', below."""

    with _replaced(store, "get_experiment", get_experiment), _replaced(session, "flush", held):
        yield True
    session.flush()  # every start's rows, before their spans are logged


@contextlib.contextmanager
def _replaced(target: Any, name: str, value: Any) -> Iterator[None]:
    """``target.name`` is ``value`` within; after, whatever it was (an attribute of its own,
    or its class's method)."""
    own = vars(target)
    had = name in own
    before = own.get(name)
    setattr(target, name, value)
    try:
        yield
    finally:
        if had:
            setattr(target, name, before)
        else:
            delattr(target, name)
