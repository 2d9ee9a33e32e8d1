"""Sweeps as a user runs them: real Hydra multiruns in subprocesses, parallel and submitit
launchers, a real `mlflow server` on loopback, the bundled experiments and an Optuna search.

The multirun tests are slow by nature (each job is a process that imports MLflow); they
keep to the smallest sessions that still have compaction points.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from conftest import CONF, SMALL, compose_config
from hydra import compose, initialize_config_dir
from mlflow import MlflowClient

from benchmark.config.cli_checks import check_options
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.report import build_report, select
from benchmark.run.job import objective_value, score_per_kilotoken
from benchmark.run.parts import build_parts
from benchmark.tracking.mlflow_store import check_reachable
from benchmark.tracking.sweep import sweep_info, write_sweep_record
from benchmark.tracking.sweep_parent import PARENT_TAG

EXPERIMENT = "compaction-benchmark"
# Keep the network out, as on a user's offline machine (loopback stays reachable).
OFFLINE_ENV = {
    **os.environ,
    "NO_PROXY": "*",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "OPENAI_API_KEY": "",
}
# SMALL logs nothing; these tests want the runs. Later overrides win.
QUIET = [*SMALL, "execution.progress=off"]


def run_sweep(args: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmark", "-m", *QUIET, *args],
        cwd=cwd,
        env=OFFLINE_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def local_store(tmp_path: Path) -> list[str]:
    return ["tracking=mlflow", f"tracking.store_dir={tmp_path / 'mlruns'}"]


def finished_runs(uri: str) -> list:
    """The jobs' runs (the sweep's parent run left out)."""
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    return [r for r in runs if PARENT_TAG not in r.data.tags]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_parallel_sweep_leaves_every_run_grouped(tmp_path, mlflow_store):
    sweep_dir = tmp_path / "sweep"
    proc = run_sweep(
        [
            *local_store(tmp_path),
            "policy=none,truncate,anchor_index",
            "transcript.seed=1,2",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = finished_runs(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    assert len(runs) == 6
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert {r.data.tags["sweep"] for r in runs} == {str(sweep_dir.resolve())}
    assert sorted(int(r.data.tags["job_num"]) for r in runs) == list(range(6))
    (overrides,) = {r.data.tags["sweep_overrides"] for r in runs}
    assert "policy=none,truncate,anchor_index" in overrides and "transcript.seed=1,2" in overrides
    jobs = {(r.data.tags["policy"], r.data.params["transcript.seed"]) for r in runs}
    assert jobs == {(p, s) for p in ("none", "truncate", "anchor_index") for s in ("1", "2")}
    for run in runs:
        policy = run.data.tags["policy"]
        assert f"policy={policy}" in run.data.tags["job_overrides"].split()
        assert run.data.metrics["headline/more/score_per_kilotoken"] > 0
    # The report over the sweep (its default: the latest sweep) lists 6 rows with CIs.
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    comparison, files = build_report(
        client, select(client, None, "compaction-benchmark"), tmp_path / "report"
    )
    assert comparison.source.endswith("sweep") and len(comparison.rows) == 6
    for row in comparison.rows:
        assert row.overall.low is not None and row.overall.low <= row.overall.value
        assert row.overall.value <= row.overall.high
    assert files.html.exists()


def test_failing_job_is_reported_and_the_sweep_ends(tmp_path):
    # Every job's config validates (checked before the first runs, benchmark/config/sweep_check.py);
    # the second's file is missing, which only its job finds: it fails, the other runs.
    started = time.monotonic()
    chat = CONF.parent / "tests" / "fixtures" / "transcripts" / "chat" / "ledger_fix.jsonl"
    args = [
        "transcript=files",
        f"transcript.path={chat},{tmp_path / 'missing.jsonl'}",
        "compaction.context_window=600",
        "compaction.tail_tokens=100",
        "tracking=disabled",
        "cache.dir=null",
        "execution.progress=off",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "benchmark", "-m", *args],
        cwd=tmp_path,
        env=OFFLINE_ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert time.monotonic() - started < 120
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "Error executing job with overrides" in proc.stderr and "missing.jsonl" in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "no such file or folder" in errors[0]
    assert "Scorecard: policy=anchor_index" in proc.stdout  # the other job ran to the end


def test_submitit_local_runs_a_sweep(tmp_path):
    # Tracking is the same code under every launcher (tested above); here only the launcher.
    sweep_dir = tmp_path / "sweep"
    proc = run_sweep(
        ["policy=none,truncate", "hydra/launcher=submitit_local", f"hydra.sweep.dir={sweep_dir}"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list((sweep_dir / ".submitit").glob("*/*_result.pkl"))) == 2
    logs = "".join(p.read_text() for p in (sweep_dir / ".submitit").glob("*/*_log.out"))
    assert "Scorecard: policy=none" in logs and "Scorecard: policy=truncate" in logs


@pytest.fixture
def mlflow_server(tmp_path, monkeypatch):
    """A real tracking server on a free loopback port, stopped (with its workers) after."""
    monkeypatch.setenv("NO_PROXY", "*")  # the client in this process goes straight to it
    port = free_port()
    env = {**OFFLINE_ENV, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--backend-store-uri",
            f"sqlite:///{tmp_path / 'server.db'}",
            "--artifacts-destination",
            str(tmp_path / "server-artifacts"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: uvicorn workers stop with it
    )
    uri = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, "mlflow server exited"
            try:
                with opener.open(f"{uri}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "mlflow server did not come up"
            time.sleep(0.3)
        yield uri
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_parallel_sweep_logs_to_a_tracking_server(tmp_path, mlflow_server):
    sweep_dir = tmp_path / "sweep"
    proc = run_sweep(
        [
            "tracking=server",
            f"tracking.uri={mlflow_server}",
            "policy=none,truncate",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = finished_runs(mlflow_server)
    assert sorted(r.data.tags["policy"] for r in runs) == ["none", "truncate"]
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert {r.data.tags["sweep"] for r in runs} == {str(sweep_dir.resolve())}
    client = MlflowClient(tracking_uri=mlflow_server)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    # No lock of ours on a server: jobs logging at once still end up under one parent.
    (parent,) = client.search_runs([experiment.experiment_id], f"tags.{PARENT_TAG} != ''")
    assert {r.data.tags["mlflow.parentRunId"] for r in runs} == {parent.info.run_id}
    for run in runs:  # artifacts went through the server to its artifact store
        assert "results_table.json" in {a.path for a in client.list_artifacts(run.info.run_id)}
    assert list((tmp_path / "server-artifacts").rglob("results_table.json"))
    assert not (tmp_path / "mlruns").exists()  # nothing was logged locally


def test_optuna_search_returns_the_objective(tmp_path, mlflow_store):
    sweep_dir = tmp_path / "sweep"
    proc = run_sweep(
        [
            *local_store(tmp_path),
            "+experiment=tune_hermes",
            "hydra.sweeper.n_trials=3",
            f"hydra.sweep.dir={sweep_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    runs = finished_runs(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    assert len(runs) == 3
    assert {r.data.tags["sweep"] for r in runs} == {str(sweep_dir.resolve())}
    objective = "headline/more/score_per_kilotoken"
    top = max(runs, key=lambda r: r.data.metrics[objective])
    # What the job returned is what each run logged as its objective (MLflow holds it to
    # 3 decimals, benchmark.tracking.mlflow_run.shown_value).
    assert best["best_value"] == pytest.approx(top.data.metrics[objective], abs=5e-4)
    for knob in ("tail_tokens", "summary_tokens", "index_tokens"):
        assert str(best["best_params"][f"policy.{knob}"]) == top.data.params[f"policy.{knob}"]


def compose_with_hydra(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=overrides, return_hydra_config=True)


def policy_options() -> set[str]:
    """The policies, aliases (a file that only composes another: ``aggressive``) left out."""
    return {p.stem for p in (CONF / "policy").glob("*.yaml") if "_target_" in p.read_text()}


def test_llm_free_experiment_sweeps_every_offline_policy():
    cfg = compose_with_hydra(["+experiment=llm_free"])
    policies = str(cfg.hydra.sweeper.params.policy).split(",")
    assert len(policies) == len(set(policies)) == 11
    assert set(policies) == policy_options() - {"opaque"}
    for policy in policies:
        job = compose_config([*SMALL, "+experiment=llm_free", f"policy={policy}"])
        job_config = validate(job)
        assert "endpoint" not in job.policy
        assert (job_config.summarizer.name, job_config.answerer.name) == ("offline", "extractive")
        assert job_config.judge.name == "reference"
        build_parts(job_config)  # no key asked for: the whole stack is offline


def test_seed_table_experiment_compares_the_seed_arms(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = compose_with_hydra(["+experiment=seed_table"])
    policies = str(cfg.hydra.sweeper.params.policy).split(",")
    assert policies == ["none", "anchored_iterative", "regenerative", "opaque"]
    assert {cfg.summarizer.endpoint.model, cfg.answerer.endpoint.model} == {"gpt-4o"}
    assert cfg.judge.endpoint.model == "gpt-4o"
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        build_parts(validate(compose_config(["+experiment=seed_table"])))


@pytest.mark.parametrize("experiment", ["tune_hermes", "tune_observation_mask"])
def test_search_experiments_tune_real_knobs(experiment):
    cfg = compose_with_hydra([f"+experiment={experiment}"])
    assert "optuna" in cfg.hydra.sweeper._target_
    assert cfg.hydra.sweeper.direction == "maximize"
    assert cfg.hydra.sweeper.sampler.seed == 0
    assert cfg.objective == "score_per_kilotoken"
    for key in cfg.hydra.sweeper.params:
        group, knob = key.split(".")
        assert group == "policy" and knob in cfg.policy, key


def test_slurm_launcher_config_composes():
    cfg = compose_with_hydra(["hydra/launcher=slurm"])
    assert cfg.hydra.launcher._target_.endswith("SlurmLauncher")
    assert cfg.hydra.launcher.timeout_min > 0 and cfg.hydra.launcher.cpus_per_task > 0


def test_option_check_knows_experiments_and_plugins():
    check_options(["-m", "+experiment=llm_free", "hydra/launcher=joblib", "tracking=server"])
    check_options(["hydra/sweeper=optuna", "hydra/launcher=submitit_local"])
    with pytest.raises(UserError, match="unknown experiment 'nope'"):
        check_options(["+experiment=nope"])


def test_score_per_kilotoken_is_per_mean_kept_context():
    metrics = {"headline/overall": 3.0, "tokens/after": 8000.0, "points/total": 2.0}
    assert score_per_kilotoken(metrics) == pytest.approx(3.0 / 4.0)
    assert objective_value(metrics, "score_per_kilotoken") == pytest.approx(0.75)
    assert objective_value(metrics, "overall") == 3.0
    assert (
        score_per_kilotoken({"tokens/after": 8000.0, "points/total": 2.0}) is None
    )  # nothing judged


def test_sweep_info_reads_the_sweeps_record(tmp_path):
    job = ["policy=none", "seed=1"]
    alone = sweep_info(tmp_path / "s", job, 3)
    assert alone.overrides == job and alone.dir == str((tmp_path / "s").resolve())
    write_sweep_record(tmp_path / "s", ["policy=none,truncate", "seed=1"])
    tags = sweep_info(tmp_path / "s", job, 3).tags()
    assert tags == {
        "sweep": str((tmp_path / "s").resolve()),
        "sweep_id": f"{tmp_path.name}/s",
        "sweep_overrides": "policy=none,truncate seed=1",
        "job_overrides": "policy=none seed=1",
        "job_num": "3",
    }
    (tmp_path / "s" / "benchmark_sweep.json").write_text("{not json")
    assert sweep_info(tmp_path / "s", job, 3).overrides == job


def test_unreachable_server_is_one_line(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "*")
    uri = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(UserError, match="tracking server .* is not reachable"):
        check_reachable(uri, timeout_s=2)
    check_reachable("databricks")  # other schemes are MLflow's to judge
