"""Ending a run held in this process when a signal ends the job: KILLED, never FINISHED.

MLflow ends a run still active at exit as FINISHED (its own exit handler), so a job that
stops on a signal ends its run first (:func:`end_active_run`). A second signal leaves at
once (``os._exit``), maybe while this process holds the store: :func:`hold` registers a
helper for it, ``python -m benchmark.tracking.run_end``, which waits for this process to be
gone and then ends the run (and a sweep's parent) KILLED, if still RUNNING. The helper is
told the store and the runs through its stdin, never argv (a server URI may hold a
credential).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time

from benchmark.run import interrupt

WAIT_S = 600.0  # the helper gives up on a process that outlives this (it is not ours to end)


class _Sweep:
    parent: str | None = None  # this process's sweep's parent run: a signal ends it KILLED


def end_active_run(status: str) -> str | None:
    """End this process's active MLflow run as ``status``; ``run <id> logged as <status> in
    <store>`` for the job's line, or None when there was none (or the store refused)."""
    if "mlflow" not in sys.modules:
        return None
    import mlflow

    active = mlflow.active_run()
    uri = mlflow.get_tracking_uri()
    try:
        if _Sweep.parent is not None:  # the sweep stops here, whichever job it was at
            mlflow.MlflowClient().set_terminated(_Sweep.parent, status)
        if active is not None:
            mlflow.end_run(status)
    except Exception:  # noqa: BLE001 - the job's line still goes out; the run stays as it was
        return None
    return None if active is None else f"run {active.info.run_id} logged as {status} in {uri}"


def mark_killed(uri: str, run_id: str) -> bool:
    """Mark a run that was logged whole as KILLED (a signal came while it was logged);
    False when the store refused."""
    from mlflow import MlflowClient

    try:
        MlflowClient(tracking_uri=uri).set_terminated(run_id, "KILLED")
    except Exception:  # noqa: BLE001 - the job's line still goes out; the run stays as it was
        return False
    return True


def hold(uri: str, run_id: str, parent: str | None = None) -> None:
    """``run_id`` (in the store at ``uri``) is open in this process, under a sweep's
    ``parent``: a second signal leaves them to the helper, and its line says so."""
    _Sweep.parent = parent
    interrupt.set_note(
        f"run {run_id} in {uri} is ended as KILLED with what was logged so far",
        on_second=lambda: end_when_gone(uri, [run_id], parent),
    )


def end_when_gone(uri: str, run_ids: list[str], parent: str | None = None) -> None:
    """Start the helper: once this process is gone, ``run_ids`` still RUNNING end KILLED,
    and the sweep's ``parent`` too (whatever its status: the sweep was stopped)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives this process and the terminal's signals
        text=True,
    )
    assert proc.stdin is not None
    order = {"pid": os.getpid(), "uri": uri, "runs": run_ids, "parent": parent}
    proc.stdin.write(json.dumps(order))
    proc.stdin.close()


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs: an exited process its parent has not reaped yet (a
    zombie) holds no file, no lock, so it counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def main() -> None:
    order = json.loads(sys.stdin.read())
    deadline = time.monotonic() + WAIT_S
    while _alive(order["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=order["uri"])
    for run_id in order["runs"]:
        with contextlib.suppress(Exception):
            if client.get_run(run_id).info.status == "RUNNING":
                client.set_terminated(run_id, "KILLED")
    if order.get("parent"):
        with contextlib.suppress(Exception):
            client.set_terminated(order["parent"], "KILLED")


if __name__ == "__main__":
    main()
