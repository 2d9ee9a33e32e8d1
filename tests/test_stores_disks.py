"""Tracking URIs and stores, folders and disks: each bad case is one ``error:`` line naming
its key, exit 2, no traceback, within 60 s; a store case is followed by a good job on the
same store, repaired or freed, which must succeed (no store is left refused for good).

Real parts only: Hydra composes each command (``benchmark.__main__.main`` in-process, or
``python -m benchmark``), stores are real SQLite files, servers are loopback sockets, and
full or read-only disks are real (a small tmpfs, a read-only bind mount, an immutable
file: we run as root, whom no permission bit stops). Where mounting or ``chattr`` is not
permitted, the case is skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import at_most, run_benchmark, start_benchmark

from benchmark.__main__ import main

SECRET = "pw4Xq9ZrT7"
CASE_S = 60
JOB = [  # a small offline job: seconds
    "transcript.sessions=1",
    "transcript.target_tokens=12000",
    "compaction.context_window=8000",
    "compaction.tail_tokens=1500",
]
LONG = "n" * 300  # longer than any file name may be


# --- helpers ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _deadline():
    """No case runs past CASE_S seconds, in-process ones included."""
    with at_most(CASE_S):
        yield


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """The working folder: tmp_path, no key, no Hydra tracebacks asked for."""
    monkeypatch.chdir(tmp_path)
    for var in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY", "MLFLOW_TRACKING_URI"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def argv(tmp: Path, *overrides: str, flags: tuple[str, ...] = ()) -> list[str]:
    """``JOB`` plus ``overrides``, every folder it writes under ``tmp`` unless overridden."""
    base = {
        "hydra.run.dir": str(tmp / "outputs"),
        "hydra.sweep.dir": str(tmp / "multirun"),
        "cache.dir": "null",
        "tracking.store_dir": str(tmp / "mlruns"),
    }
    keys = {o.lstrip("+").split("=", 1)[0] for o in overrides}
    kept = [f"{k}={v}" for k, v in base.items() if k not in keys]
    return [*flags, *JOB, *kept, *overrides]


def run_here(monkeypatch, capsys, args: list[str]) -> tuple[int, str, str]:
    """``python -m benchmark *args`` in this process: exit code, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", ["benchmark", *args])
    code: int | str | None = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def one_error(code: int, err: str, key: str) -> str:
    """The case ended as a user error should: exit 2, one ``error:`` line naming ``key``."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2, err
    assert len(lines) == 1, err
    assert key in lines[0], lines[0]
    assert SECRET not in err
    return lines[0]


def good_job(monkeypatch, capsys, args: list[str]) -> str:
    """A good job with ``args`` succeeds; its stdout."""
    code, out, err = run_here(monkeypatch, capsys, args)
    assert code == 0, err
    assert "Traceback" not in err and "error:" not in err, err
    return out


def runs_in(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT status FROM runs")]
    finally:
        con.close()


class Mounts:
    """Real mounts (a tmpfs, a read-only bind), undone after the test; skips where
    mounting is not permitted."""

    def __init__(self) -> None:
        self.points: list[Path] = []

    def run(self, *args: str) -> None:
        done = subprocess.run(["mount", *args], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"mount is not permitted here: {done.stderr.strip()}")

    def tmpfs(self, where: Path, size: str) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        self.run("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
        self.points.append(where)
        return where

    def resize(self, where: Path, size: str) -> None:
        self.run("-o", f"remount,size={size}", str(where))

    def read_only(self, where: Path) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        self.run("--bind", str(where), str(where))
        self.points.append(where)
        self.run("-o", "remount,ro,bind", str(where))
        return where

    def writable(self, where: Path) -> None:
        self.run("-o", "remount,rw,bind", str(where))


@pytest.fixture
def mounts() -> Iterator[Mounts]:
    made = Mounts()
    yield made
    for point in reversed(made.points):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """``immutable(path)``: ``chattr +i`` (root too is refused writing it), undone after."""
    marked: list[Path] = []

    def mark(path: Path) -> None:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"chattr is not permitted here: {done.stderr.strip()}")
        marked.append(path)

    yield mark
    for path in marked:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def fill(folder: Path, leave_kb: int) -> Path:
    """Fill ``folder``'s disk but ``leave_kb`` KiB; the filler file, to delete."""
    stats = os.statvfs(folder)
    free_kb = stats.f_bavail * stats.f_frsize // 1024
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        for _ in range(max(free_kb - leave_kb, 0)):
            fh.write(b"\0" * 1024)
    return filler


@pytest.fixture
def migrated(migrated_db) -> Callable[[Path], Path]:
    """``migrated(folder)``: a copy of an empty migrated store as ``folder/mlflow.db``."""

    def copy(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copyfile(migrated_db, folder / "mlflow.db"))

    return copy


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server() -> Iterator[Callable[[int], str]]:
    """``http_server(status)``: a loopback server answering every request with ``status``."""
    servers: list[ThreadingHTTPServer] = []

    def start(status: int) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(b"<html>not mlflow</html>")

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback port that takes connections (its backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


# --- tracking URIs: refused before any work, nothing created -------------------------------


def _no_driver(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


URI_CASES = [
    ("ftp://host/store", "cannot log to a 'ftp' URI"),
    ("foo://bar", "cannot log to a 'foo' URI"),
    ("s3://bucket/mlruns", "cannot log to a 's3' URI"),
    ("file:///{tmp}/filestore", "refuses file stores"),
    ("databricks", "Databricks has no credentials"),
    ("databricks://myprofile", "profile [myprofile]"),
    ("databricks://", "profile [DEFAULT]"),
    ("sqlite://", "in-memory SQLite"),
    ("sqlite:///", "in-memory SQLite"),
    ("sqlite:///:memory:", "in-memory SQLite"),
    ("sqlite:////{tmp}/missing/dir/x.db", "does not exist"),
    ("sqlite:////{tmp}/afile/x.db", "is not a folder"),
    (f"sqlite:///{LONG}.db", "more than the"),
]
DRIVER_CASES = [
    (f"mysql://user:{SECRET}@127.0.0.1/db", "MySQLdb"),
    ("mysql+pymysql://127.0.0.1/db", "pymysql"),
    ("postgresql://127.0.0.1/db", "psycopg"),
    ("mssql://127.0.0.1/db", "pyodbc"),
]


@pytest.mark.parametrize(("uri", "said"), URI_CASES, ids=[u for u, _ in URI_CASES])
def test_a_tracking_uri_mlflow_cannot_use_is_one_line(uri, said, work, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(work))  # no ~/.databrickscfg
    for var in ("DATABRICKS_HOST", "DATABRICKS_CONFIG_FILE", "MLFLOW_ALLOW_FILE_STORE"):
        monkeypatch.delenv(var, raising=False)
    (work / "afile").write_text("a file, not a folder\n")
    given = uri.replace("/{tmp}", str(work))
    code, out, err = run_here(monkeypatch, capsys, argv(work, f"+tracking.uri={given}"))
    assert said in one_error(code, err, "tracking.uri")
    assert "Scorecard" not in out  # before the work
    assert not (work / "mlruns").exists() and not (work / "missing").exists()


@pytest.mark.parametrize(("uri", "module"), DRIVER_CASES, ids=[m for _, m in DRIVER_CASES])
def test_a_database_without_its_driver_is_one_line(uri, module, work, monkeypatch, capsys):
    if not _no_driver(module):
        pytest.skip(f"{module} is installed here")
    code, out, err = run_here(monkeypatch, capsys, argv(work, f"+tracking.uri={uri}"))
    line = one_error(code, err, "tracking.uri")
    assert "driver is not installed" in line and module in line
    assert "Scorecard" not in out


def test_a_server_that_is_not_listening_is_one_line(work, monkeypatch, capsys):
    uri = f"http://127.0.0.1:{closed_port()}"
    args = argv(work, "tracking=server", f"tracking.uri={uri}")
    code, out, err = run_here(monkeypatch, capsys, args)
    assert "is not reachable" in one_error(code, err, "tracking.uri")


@pytest.mark.parametrize(("status", "said"), [(500, "server error 500"), (404, "no MLflow API")])
def test_a_server_that_is_not_mlflow_is_one_line_before_the_work(
    status, said, work, http_server, monkeypatch, capsys
):
    uri = http_server(status)
    code, out, err = run_here(monkeypatch, capsys, argv(work, f"+tracking.uri={uri}"))
    assert said in one_error(code, err, "tracking.uri")
    assert "Scorecard" not in out


def test_a_server_that_never_answers_is_one_line_in_bounded_time(
    work, silent_server, monkeypatch, capsys
):
    started = time.monotonic()
    code, out, err = run_here(monkeypatch, capsys, argv(work, f"+tracking.uri={silent_server}"))
    assert "does not answer" in one_error(code, err, "tracking.uri")
    assert time.monotonic() - started < 30


# --- local stores: refused in one line, then repaired, then a good job works ---------------


# Each returns the case's overrides and its repair; a repair that removes the bad store
# puts a migrated one in its place (migrating a fresh one costs seconds, and the full-disk
# cases below make fresh ones).


def _store_dir_is_a_file(tmp: Path, migrated, **_: object):
    (tmp / "mlruns").write_text("a file\n")
    return [], lambda: ((tmp / "mlruns").unlink(), migrated(tmp / "mlruns"))


def _db_is_a_folder(tmp: Path, migrated, **_: object):
    (tmp / "mlruns" / "mlflow.db").mkdir(parents=True)
    return [], lambda: ((tmp / "mlruns" / "mlflow.db").rmdir(), migrated(tmp / "mlruns"))


def _db_is_garbage(tmp: Path, migrated, **_: object):
    (tmp / "mlruns").mkdir()
    (tmp / "mlruns" / "mlflow.db").write_bytes(os.urandom(4096))
    return [], lambda: migrated(tmp / "mlruns")  # copied over the garbage


def _db_is_immutable(tmp: Path, migrated, immutable, **_: object):
    db = migrated(tmp / "mlruns")
    immutable(db)
    return [], lambda: subprocess.run(["chattr", "-i", str(db)], check=True)


def _store_on_read_only_disk(tmp: Path, migrated, mounts, **_: object):
    migrated(tmp / "mlruns")
    mounts.read_only(tmp / "mlruns")
    return [], lambda: mounts.writable(tmp / "mlruns")


def _uri_db_is_immutable(tmp: Path, migrated, immutable, **_: object):
    db = migrated(tmp / "store")
    immutable(db)
    uri = f"+tracking.uri=sqlite:///{db}"
    return [uri], lambda: subprocess.run(["chattr", "-i", str(db)], check=True)


def _uri_db_is_garbage(tmp: Path, migrated_db, **_: object):
    db = tmp / "store" / "runs.db"
    db.parent.mkdir()
    db.write_bytes(b"not sqlite at all\n" * 100)
    return [f"+tracking.uri=sqlite:///{db}"], lambda: shutil.copyfile(migrated_db, db)


def _uri_db_is_a_folder(tmp: Path, migrated_db, **_: object):
    db = tmp / "store" / "runs.db"
    db.mkdir(parents=True)
    return [f"+tracking.uri=sqlite:///{db}"], lambda: (db.rmdir(), shutil.copyfile(migrated_db, db))


def _uri_on_read_only_disk(tmp: Path, migrated, mounts, **_: object):
    migrated(tmp / "store")
    mounts.read_only(tmp / "store")
    uri = f"+tracking.uri=sqlite:///{tmp / 'store' / 'mlflow.db'}"
    return [uri], lambda: mounts.writable(tmp / "store")


STORE_CASES = {
    "store_dir-is-a-file": (_store_dir_is_a_file, "tracking.store_dir", "is a file"),
    "db-is-a-folder": (_db_is_a_folder, "tracking.store_dir", "not a file"),
    "db-is-garbage": (_db_is_garbage, "tracking.store_dir", "not an SQLite database"),
    "db-is-immutable": (_db_is_immutable, "tracking.store_dir", "not writable"),
    "store-on-read-only-disk": (_store_on_read_only_disk, "tracking.store_dir", "Read-only"),
    "uri-db-is-immutable": (_uri_db_is_immutable, "tracking.uri", "not writable"),
    "uri-db-is-garbage": (_uri_db_is_garbage, "tracking.uri", "not an SQLite database"),
    "uri-db-is-a-folder": (_uri_db_is_a_folder, "tracking.uri", "not a file"),
    "uri-on-read-only-disk": (_uri_on_read_only_disk, "tracking.uri", "Read-only"),
}


@pytest.mark.parametrize("case", list(STORE_CASES))
def test_an_unusable_store_is_one_line_and_a_repaired_one_works(
    case, work, migrated, migrated_db, immutable, mounts, monkeypatch, capsys
):
    setup, key, said = STORE_CASES[case]
    extra, repair = setup(
        work, migrated=migrated, migrated_db=migrated_db, immutable=immutable, mounts=mounts
    )
    code, out, err = run_here(monkeypatch, capsys, argv(work, *extra))
    assert said in one_error(code, err, key)
    assert "Scorecard" not in out  # before the work
    repair()
    assert "Scorecard" in good_job(monkeypatch, capsys, argv(work, *extra))


# --- full disks under the store ------------------------------------------------------------


@pytest.mark.parametrize("given", ["store_dir", "uri"])
def test_a_full_disk_while_creating_the_store_leaves_none_refused(
    given, work, mounts, monkeypatch, capsys
):
    disk = mounts.tmpfs(work / "disk", "200k")  # a fresh store needs about 1 MB
    if given == "store_dir":
        extra, key, db = [f"tracking.store_dir={disk}"], "tracking.store_dir", disk / "mlflow.db"
    else:
        db = disk / "runs.db"
        extra, key = [f"+tracking.uri=sqlite:///{db}"], "tracking.uri"
    code, out, err = run_here(monkeypatch, capsys, argv(work, *extra))
    assert "No space left on device" in one_error(code, err, key)
    assert not db.exists()  # no half-made store
    assert [p.name for p in disk.iterdir() if "creating" in p.name] == []
    mounts.resize(disk, "20m")  # space freed: the same store is made and used
    assert "Scorecard" in good_job(monkeypatch, capsys, argv(work, *extra))
    assert runs_in(db) == ["FINISHED"]


def test_a_full_disk_while_logging_keeps_the_results_and_names_them(
    work, mounts, migrated, monkeypatch, capsys
):
    from benchmark.tracking.mlflow_store import prepare_store

    disk = mounts.tmpfs(work / "disk", "4m")
    migrated(disk)
    prepare_store(disk, "compaction-benchmark")  # the store exists, its disk then fills up
    filler = fill(disk, leave_kb=48)
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR",)}
    args = argv(work, f"tracking.store_dir={disk}")
    proc = run_benchmark(args, work, env, timeout=CASE_S)
    line = one_error(proc.returncode, proc.stderr, "tracking.store_dir")
    assert "Scorecard" in proc.stdout  # the work was done, then the store refused the run
    kept = work / "outputs" / "run_record.json"
    assert kept.is_file() and str(kept) in line
    assert '"metrics"' in kept.read_text()
    filler.unlink()
    assert "Scorecard" in good_job(monkeypatch, capsys, args)
    assert "FINISHED" in runs_in(disk / "mlflow.db")


# --- output folders, caches and launchers --------------------------------------------------


def _immutable_outputs(tmp: Path, immutable, **_: object) -> list[str]:
    (tmp / "outputs").mkdir()
    immutable(tmp / "outputs")
    return [f"hydra.run.dir={tmp / 'outputs' / 'run'}"]


def _read_only_outputs(tmp: Path, mounts, **_: object) -> list[str]:
    mounts.read_only(tmp / "ro")
    return [f"hydra.run.dir={tmp / 'ro' / 'run'}"]


def _default_outputs_immutable(tmp: Path, immutable, **_: object) -> list[str]:
    (tmp / "outputs").mkdir()
    immutable(tmp / "outputs")
    return ["hydra.run.dir=outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}"]


def _full_run_dir(tmp: Path, mounts, **_: object) -> list[str]:
    mounts.tmpfs(tmp / "disk", "100k")
    return [f"hydra.run.dir={tmp / 'disk' / 'run'}"]


def _full_cache(tmp: Path, mounts, **_: object) -> list[str]:
    mounts.tmpfs(tmp / "disk", "40k")
    return [f"cache.dir={tmp / 'disk' / 'cache'}", "tracking=disabled"]


def _read_only_cache(tmp: Path, mounts, **_: object) -> list[str]:
    mounts.read_only(tmp / "ro")
    return [f"cache.dir={tmp / 'ro' / 'cache'}", "tracking=disabled"]


def _immutable_cache(tmp: Path, immutable, **_: object) -> list[str]:
    (tmp / "cache").mkdir()
    immutable(tmp / "cache")
    return [f"cache.dir={tmp / 'cache'}", "tracking=disabled"]


def _long_cache(tmp: Path, **_: object) -> list[str]:
    return [f"cache.dir={tmp / LONG / 'cache'}", "tracking=disabled"]


def _long_run_dir(tmp: Path, **_: object) -> list[str]:
    return [f"hydra.run.dir={tmp / LONG / 'run'}"]


def _long_store(tmp: Path, **_: object) -> list[str]:
    return [f"tracking.store_dir={tmp / LONG}"]


def _empty_run_dir(tmp: Path, **_: object) -> list[str]:
    return ["hydra.run.dir="]


def _blank_run_dir(tmp: Path, **_: object) -> list[str]:
    return ["hydra.run.dir='  '"]


FOLDER_CASES = {
    "run-dir-immutable": (_immutable_outputs, "hydra.run.dir", "Operation not permitted"),
    "run-dir-read-only": (_read_only_outputs, "hydra.run.dir", "Read-only"),
    "default-outputs-immutable": (_default_outputs_immutable, "hydra.run.dir", "outputs"),
    "run-dir-full": (_full_run_dir, "hydra.run.dir", "No space left on device"),
    "cache-full": (_full_cache, "cache.dir", "No space left on device"),
    "cache-read-only": (_read_only_cache, "cache.dir", "Read-only"),
    "cache-immutable": (_immutable_cache, "cache.dir", "Operation not permitted"),
    "cache-name-too-long": (_long_cache, "cache.dir", "more than the"),
    "run-dir-name-too-long": (_long_run_dir, "hydra.run.dir", "more than the"),
    "store-name-too-long": (_long_store, "tracking.store_dir", "more than the"),
    "run-dir-empty": (_empty_run_dir, "hydra.run.dir", "must not be empty"),
    "run-dir-blank": (_blank_run_dir, "hydra.run.dir", "must not be empty"),
}


@pytest.mark.parametrize("case", list(FOLDER_CASES))
def test_an_unusable_folder_is_one_line_naming_its_key(
    case, work, immutable, mounts, monkeypatch, capsys
):
    setup, key, said = FOLDER_CASES[case]
    extra = setup(work, immutable=immutable, mounts=mounts)
    store = [] if key.startswith("tracking") else ["tracking=disabled"]
    code, out, err = run_here(monkeypatch, capsys, argv(work, *store, *extra))
    assert said in one_error(code, err, key)
    assert not (work / ".hydra").exists()  # nothing written into the working folder


SWEEP_CASES = [
    (["hydra.sweep.dir="], "hydra.sweep.dir", "must not be empty"),
    (["hydra.sweep.subdir="], "hydra.sweep.subdir", "must not be empty"),
    (["hydra/launcher=submitit_slurm"], "hydra/launcher=submitit_slurm", "srun"),
    (["hydra/launcher=slurm"], "hydra/launcher=slurm", "srun"),
    ([f"hydra.sweep.dir={LONG}/x"], "hydra.sweep.dir", "more than the"),
]


@pytest.mark.parametrize(
    ("extra", "key", "said"), SWEEP_CASES, ids=[" ".join(e) for e, _, _ in SWEEP_CASES]
)
def test_a_sweep_that_cannot_start_is_one_line_before_any_job(
    extra, key, said, work, monkeypatch, capsys
):
    if "srun" in said and shutil.which("srun"):
        pytest.skip("srun is installed here")
    args = argv(work, "policy=none,truncate", "tracking=disabled", *extra, flags=("-m",))
    code, out, err = run_here(monkeypatch, capsys, args)
    assert said in one_error(code, err, key)
    assert not (work / "0").exists() and not (work / "multirun.yaml").exists()


def test_a_full_cache_disk_freed_lets_the_next_job_run(work, mounts, monkeypatch, capsys):
    disk = mounts.tmpfs(work / "disk", "40k")
    args = argv(work, f"cache.dir={disk / 'cache'}", "tracking=disabled")
    code, out, err = run_here(monkeypatch, capsys, args)
    assert "No space left on device" in one_error(code, err, "cache.dir")
    assert not [p for p in disk.rglob("*.tmp")]  # no half-written entry left
    mounts.resize(disk, "20m")
    assert "Scorecard" in good_job(monkeypatch, capsys, args)


def test_a_full_run_dir_in_a_real_process(work, mounts):
    disk = mounts.tmpfs(work / "disk", "100k")
    args = argv(work, f"hydra.run.dir={disk / 'run'}", "tracking=disabled")
    proc = run_benchmark(args, work, dict(os.environ), timeout=CASE_S)
    one_error(proc.returncode, proc.stderr, "hydra.run.dir")
    assert "Logging error" not in proc.stderr


# --- the mapper itself ---------------------------------------------------------------------


def test_sqlite_full_inside_sqlalchemy_names_the_key_given():
    import sqlalchemy.exc

    from benchmark.run import disk_errors

    inner = sqlite3.OperationalError("database or disk is full")
    wrapped = sqlalchemy.exc.OperationalError("INSERT", {}, inner)
    refused = disk_errors.user_error(RuntimeError("logging failed").with_traceback(None), "x")
    assert refused is None  # no refused write in it
    try:
        try:
            raise wrapped
        except sqlalchemy.exc.OperationalError as exc:
            raise RuntimeError("MLflow's own wrapper") from exc
    except RuntimeError as outer:
        found = disk_errors.user_error(outer, "tracking.store_dir", "/data/mlruns")
    assert found is not None
    assert str(found).startswith("config key 'tracking.store_dir': cannot write /data/mlruns")


def test_a_path_names_the_most_specific_registered_key(tmp_path):
    import errno

    from benchmark.run import disk_errors

    disk_errors.register("hydra.run.dir", tmp_path)
    disk_errors.register("cache.dir", tmp_path / "cache")
    try:
        err = OSError(errno.EROFS, "Read-only file system", str(tmp_path / "cache" / "x.json"))
        assert str(disk_errors.user_error(err)).startswith("config key 'cache.dir'")
        err = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "other"))
        assert str(disk_errors.user_error(err)).startswith("config key 'hydra.run.dir'")
    finally:
        disk_errors.register("cache.dir", None)
        disk_errors.register("hydra.run.dir", None)


# --- MLflow telemetry ----------------------------------------------------------------------


@pytest.fixture
def no_user_telemetry_choice(monkeypatch):
    """The environment as a user who never chose: neither switch set (restored after)."""
    from benchmark.tracking import telemetry

    for var in telemetry.USER_SWITCHES:
        monkeypatch.setenv(var, "x")  # so that teardown restores what was there
        monkeypatch.delenv(var)
    monkeypatch.setattr(telemetry, "_set_here", False)


def test_telemetry_is_off_in_process_by_default(
    work, migrated, no_user_telemetry_choice, monkeypatch, capsys
):
    migrated(work / "mlruns")
    good_job(monkeypatch, capsys, argv(work))
    assert os.environ.get("MLFLOW_DISABLE_TELEMETRY") == "true"
    if "mlflow.telemetry.client" in sys.modules:
        from mlflow.telemetry.client import get_telemetry_client

        assert get_telemetry_client() is None


def test_telemetry_true_leaves_mlflow_its_default(
    work, no_user_telemetry_choice, monkeypatch, capsys
):
    good_job(monkeypatch, capsys, argv(work, "tracking=disabled", "tracking.telemetry=true"))
    assert "MLFLOW_DISABLE_TELEMETRY" not in os.environ


def test_the_users_own_telemetry_choice_wins(work, no_user_telemetry_choice, monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "false")
    good_job(monkeypatch, capsys, argv(work, "tracking=disabled"))
    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "false"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def test_telemetry_is_off_in_the_tracking_child(work, migrated):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "HYDRA_FULL_ERROR")
    }
    if not Path(f"/proc/{os.getpid()}/task").is_dir():
        pytest.skip("no /proc here")
    migrated(work / "mlruns")
    proc = start_benchmark(argv(work), work, env)
    seen: dict[str, str] | None = None
    deadline = time.monotonic() + CASE_S
    while seen is None and proc.poll() is None and time.monotonic() < deadline:
        for child in _children(proc.pid):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                environ = Path(f"/proc/{child}/environ").read_bytes()
            except OSError:
                continue
            if b"benchmark.tracking.log_worker" in cmdline:
                pairs = [e.split(b"=", 1) for e in environ.split(b"\0") if b"=" in e]
                seen = {k.decode(): v.decode() for k, v in pairs}
        time.sleep(0.02)
    out, err = proc.communicate(timeout=CASE_S)
    assert proc.returncode == 0, err
    assert seen is not None, "the tracking child was never seen"
    assert seen.get("MLFLOW_DISABLE_TELEMETRY") == "true"
