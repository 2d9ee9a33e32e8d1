"""Several jobs on one tracking store: real ``python -m benchmark`` processes, a real store.

Jobs started together on a fresh store must not race on MLflow's schema migrations (they
take one lock, ``<store_dir>/.lock``), and a store left broken is named in one line.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SMALL
from test_cli import OFFLINE_ENV

JOBS = 5
# A quick job: SMALL's session, a cheap policy, no cache; tracking back on.
QUICK = [o for o in SMALL if not o.startswith("tracking=")] + ["policy=truncate"]


def start_job(tmp_path: Path, store: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmark",
            *QUICK,
            f"tracking.store_dir={store}",
            f"hydra.run.dir={tmp_path / 'outputs' / name}",
        ],
        cwd=tmp_path,
        env=OFFLINE_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err


def test_jobs_started_together_on_a_fresh_store_all_log(tmp_path):
    # Without the lock, 1 and 4 of 5 such jobs crashed in two trials. One trial here: each
    # costs five whole jobs.
    store = tmp_path / "mlruns"
    procs = [start_job(tmp_path, store, f"job{i}") for i in range(JOBS)]
    results = [finish(p) for p in procs]
    failed = [err[-1500:] for code, err in results if code != 0]
    assert not failed, f"{len(failed)} of {JOBS} jobs failed:\n" + "\n---\n".join(failed)

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    experiments = client.search_experiments()
    assert [e.name for e in experiments if e.name != "Default"] == ["compaction-benchmark"]
    runs = client.search_runs([e.experiment_id for e in experiments])
    assert [r.info.status for r in runs] == ["FINISHED"] * JOBS
    with sqlite3.connect(store / "mlflow.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert not db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp\\_%' ESCAPE '\\'"
        ).fetchall()


# --- a broken store: named in one line, exit 2, before any work ------------------------------


@pytest.fixture(scope="module")
def migrated_store(tmp_path_factory) -> Path:
    """A real, up-to-date store (MLflow created and migrated it), copied by each test."""
    from benchmark.tracking.mlflow_store import prepare_store

    store = tmp_path_factory.mktemp("migrated") / "mlruns"
    prepare_store(store, "compaction-benchmark")
    return store / "mlflow.db"


def store_with(tmp_path: Path, migrated: Path, *sql: str) -> Path:
    """A copy of the migrated store under ``tmp_path/mlruns`` with ``sql`` applied."""
    store = tmp_path / "mlruns"
    store.mkdir()
    (store / "mlflow.db").write_bytes(migrated.read_bytes())
    with sqlite3.connect(store / "mlflow.db") as db:
        for statement in sql:
            db.execute(statement)
    return store


def run_job(tmp_path: Path, store: Path) -> tuple[int, str, str]:
    proc = start_job(tmp_path, store, "job")
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def test_a_file_that_is_not_sqlite_is_one_line_before_any_work(tmp_path):
    store = tmp_path / "mlruns"
    store.mkdir()
    (store / "mlflow.db").write_bytes(b"this is no database\n" * 10)
    code, out, err = run_job(tmp_path, store)
    assert code == 2, err
    assert err == (
        f"error: tracking store {store / 'mlflow.db'} is broken (not an SQLite database): "
        "move it aside or delete it, or set tracking.store_dir\n"
    )
    assert "Scorecard" not in out  # refused before the work, not after it
    assert (store / "mlflow.db").read_bytes() == b"this is no database\n" * 10


def test_a_leftover_migration_table_is_one_line(tmp_path, migrated_store):
    store = store_with(tmp_path, migrated_store, "CREATE TABLE _alembic_tmp_tags (x INTEGER)")
    code, out, err = run_job(tmp_path, store)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: tracking store {store / 'mlflow.db'} is broken (")
    assert "_alembic_tmp_tags" in err and "move it aside or delete it" in err


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (["DELETE FROM alembic_version"], "tables without a schema version"),
        (["DROP TABLE latest_metrics"], "is broken ("),
        (["UPDATE alembic_version SET version_num = 'ffffffffffff'"], "newer MLflow"),
        (["UPDATE alembic_version SET version_num = '451aebb31d03'"], "mlflow db upgrade"),
    ],
    ids=["no-version", "missing-table", "newer-schema", "older-schema"],
)
def test_a_half_made_or_foreign_store_is_one_line(tmp_path, migrated_store, sql, message):
    from benchmark.errors import UserError
    from benchmark.tracking.mlflow_store import prepare_store

    store = store_with(tmp_path, migrated_store, *sql)
    with pytest.raises(UserError) as caught:
        prepare_store(store, "compaction-benchmark")
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"tracking store {store / 'mlflow.db'} ")
    assert message in text and "tracking.store_dir" in text


def test_the_report_names_a_broken_store_in_one_line(tmp_path, migrated_store, capsys):
    from benchmark.report.__main__ import main

    store = store_with(tmp_path, migrated_store, "CREATE TABLE _alembic_tmp_runs (x INTEGER)")
    assert main(["--store-dir", str(store), "--no-log"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"error: tracking store {store / 'mlflow.db'} is broken (")
