"""LLM execution as a sweep meets it: failures counted and gated, reruns free, faults survived."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import SMALL
from openai_stub import Fault

SMALL_CLI = [o for o in SMALL if o != "tracking=disabled"]


def cli(args: list[str], cwd, key: str = "sk-test") -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": key, "NO_PROXY": "*"}
    return subprocess.run(
        [sys.executable, "-m", "benchmark", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_too_many_failures_exit_1_after_logging(openai_stub, tmp_path):
    openai_stub.reply = lambda _: Fault.status(500)
    proc = cli(
        [
            *SMALL_CLI,
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "judge.endpoint.max_retries=1",
            "judge.endpoint.backoff_initial_s=0.01",
            "probe.per_type=1",
            "execution.progress=log",
        ],
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 100.0% of probes failed") and "fail_on_error=0.05" in last
    assert "Traceback" not in proc.stderr
    # Two tries per judgment, and the run with its failures is in MLflow all the same.
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (run,) = client.search_runs([exp.experiment_id])
    metrics = run.data.metrics
    assert metrics["failures/fraction"] == 1.0
    assert metrics["failures/judgments"] == metrics["probes"] > 0
    assert metrics["llm/judge/calls"] == 2 * metrics["probes"] == len(openai_stub.requests)
    assert metrics["llm/judge/retries"] == metrics["probes"]
    assert "overall" not in metrics  # nothing was scored 0


def test_fail_on_error_1_tolerates_everything(openai_stub, tmp_path):
    openai_stub.reply = lambda _: Fault.status(500)
    proc = cli(
        [
            *SMALL_CLI,
            "tracking=disabled",
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "judge.endpoint.max_retries=0",
            "probe.per_type=1",
            "execution.fail_on_error=1.0",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
