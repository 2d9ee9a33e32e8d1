"""Ctrl-C (SIGINT) during a real job: one line, exit 130, the run logged as KILLED."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import SMALL, recording, start_benchmark
from openai_stub import Fault

from benchmark.stub import scripted_reply

EXPERIMENT = "compaction-benchmark"
DEADLINE_S = 180  # generous: a loaded machine is slow, and every wait polls a condition


def llm_job(stub, tmp_path: Path, name: str) -> list[str]:
    """An LLM answerer and judge on the stub, its own reply cache, one store for all runs."""
    from benchmark.tracking.mlflow_store import prepare_store

    prepare_store(tmp_path / "mlruns", EXPERIMENT)  # migrated here, not in the job
    stages = []
    for stage in ("answerer", "judge"):
        stages += [
            f"{stage}=gpt4o",
            f"{stage}.endpoint.base_url={stub.base_url}",
            f"{stage}.endpoint.max_concurrency=64",
            f"{stage}.endpoint.backoff_initial_s=0.01",
            f"++{stage}.endpoint.preflight=false",  # every request the stub counts is the job's
        ]
    return [
        *[o for o in SMALL if o not in ("tracking=disabled", "cache.dir=null")],
        *stages,
        "transcript.sessions=2",
        "probe.per_type=4",
        "execution.progress=log",
        "execution.fail_on_error=1",
        f"cache.dir={tmp_path / 'cache'}",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        f"tracking.run_name={name}",
    ]


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return start_benchmark(args, cwd, {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_PROXY": "*"})


def wait_for(condition, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert proc.poll() is None, f"the job ended before {what}: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGINT, then the job's output; a job that does not end is killed and fails the test."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the job did not end after Ctrl-C") from None


def assert_one_line(proc: subprocess.Popen[str], stderr: str) -> str:
    """Exit 130, no traceback, and the interrupt's one line last on stderr."""
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-2000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr[-2000:]
    assert stderr.strip().splitlines()[-1] == errors[0]
    assert errors[0].startswith("error: interrupted (Ctrl-C)")
    return errors[0]


def runs(tmp_path: Path, name: str) -> list:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    return client.search_runs([experiment.experiment_id], f"attributes.run_name = '{name}'")


def cached(tmp_path: Path) -> int:
    """Replies committed to the job's reply cache so far."""
    store = tmp_path / "cache" / "llm_responses.sqlite"
    if not store.exists():
        return 0
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not created yet
            return 0


def test_ctrl_c_during_llm_calls_logs_a_killed_run_and_a_rerun_resumes(
    openai_stub, tmp_path, mlflow_store
):
    served: list[str] = []
    judged: list[str] = []
    lock = threading.Lock()

    def judge_all_answer_six(body: dict) -> str | Fault:
        """Every judgment is answered; the first 6 answers too, every later one hangs past
        the test (calls in flight when Ctrl-C comes)."""
        text = json.dumps(body, sort_keys=True)
        with lock:
            judge = "criterionResults" in text
            if not judge and len(served) - len(judged) >= 6:
                return Fault.hang(3600)
            served.append(text)
            judged.extend([text] if judge else [])
        return scripted_reply(body)

    openai_stub.reply = judge_all_answer_six
    proc = start(llm_job(openai_stub, tmp_path, "interrupted"), tmp_path)
    wait_for(lambda: len(judged) >= 6, proc, "6 probes were answered and judged")
    wait_for(lambda: cached(tmp_path) >= len(served), proc, "the replies were cached")
    wait_for(lambda: len(openai_stub.requests) > len(served), proc, "calls were in flight")
    _, stderr = interrupt(proc)  # the hung calls are cancelled: the job ends at once

    line = assert_one_line(proc, stderr)
    (run,) = runs(tmp_path, "interrupted")
    assert run.info.status == "KILLED"
    assert f"logged as KILLED in sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}" in line
    assert run.info.run_id in line
    metrics = run.data.metrics
    # Up to 6 answered and judged (one may still be between its cache and its result).
    assert 1 <= metrics["probes/total"] <= 6
    assert metrics["probes/unfinished"] >= 1
    done, scheduled = (
        int(metrics["probes/total"]),
        int(metrics["probes/total"] + metrics["probes/unfinished"]),
    )
    assert f"after {done} of {scheduled} scheduled probes" in line
    assert run.data.tags["interrupted"] == "true"
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"results_table.json", "scorecard.txt", "judgments.jsonl"} <= artifacts
    judgments = client.download_artifacts(run.info.run_id, "judgments.jsonl", str(tmp_path))
    assert len(Path(judgments).read_text().splitlines()) == done

    # A rerun resumes from the reply cache: no completed call is sent again.
    again, openai_stub.reply = recording(scripted_reply)
    rerun = start(llm_job(openai_stub, tmp_path, "rerun"), tmp_path)
    _, stderr = rerun.communicate(timeout=DEADLINE_S)
    assert rerun.returncode == 0, stderr[-2000:]
    assert again and not set(again) & set(served)
    (finished,) = runs(tmp_path, "rerun")
    assert finished.info.status == "FINISHED"
    assert "probes/unfinished" not in finished.data.metrics
    assert finished.data.metrics["probes/total"] >= scheduled


@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_ctrl_c_while_generating_sessions_logs_a_killed_run_with_no_probe(
    tmp_path, sweep, mlflow_store
):
    """Offline, interrupted while the sessions are generated (the store is ready by then):
    the run is logged as KILLED holding the config and no probe. In a sweep, the sweep
    stops there: its second job never starts."""
    from benchmark.tracking.mlflow_store import prepare_store

    prepare_store(tmp_path / "mlruns", EXPERIMENT)
    sessions = tmp_path / "cache" / "sessions"
    args = [
        "transcript.sessions=200",  # minutes of generation: Ctrl-C comes long before the end
        f"cache.dir={tmp_path / 'cache'}",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        "tracking.run_name=generating",
    ]
    if sweep:
        args = ["-m", *args, "seed=0,1", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    proc = start(args, tmp_path)
    # The first generated session is stored: the job is generating the next ones.
    wait_for(lambda: sessions.is_dir() and any(sessions.glob("*.json")), proc, "a session")
    _, stderr = interrupt(proc)

    line = assert_one_line(proc, stderr)
    assert "before any probe was scheduled" in line
    (run,) = runs(tmp_path, "generating")
    assert run.info.status == "KILLED"
    assert run.data.metrics["probes/total"] == 0
    assert run.data.params["transcript.sessions"] == "200"
    assert run.data.params["seed"] == "0"
