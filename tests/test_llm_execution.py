"""LLM execution as a sweep meets it: failures counted and gated, reruns free, faults survived."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

from conftest import SMALL, compose_config, recording, run_benchmark
from openai_stub import Fault

from benchmark.config.schema import validate
from benchmark.run.pipeline import run_job
from benchmark.stub import FaultMix, scripted_reply

SMALL_CLI = [o for o in SMALL if o != "tracking=disabled"]


def cli(args: list[str], cwd, key: str = "sk-test") -> subprocess.CompletedProcess:
    return run_benchmark(args, cwd, {**os.environ, "OPENAI_API_KEY": key, "NO_PROXY": "*"}, 300)


def test_too_many_failures_exit_1_after_logging(openai_stub, tmp_path, mlflow_store):
    openai_stub.reply = lambda _: Fault.status(500)
    proc = cli(
        [
            *SMALL_CLI,
            "judge=gpt4o",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            "++judge.endpoint.preflight=false",
            "judge.endpoint.max_retries=1",
            "judge.endpoint.backoff_initial_s=0.01",
            "++judge.endpoint.give_up_tries=0",  # every call tried (the breaker: round2c)
            "probe.per_type=1",
            "execution.progress=log",
        ],
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 100.0% of probes failed") and "fail_on_error=0.05" in last
    assert "Traceback" not in proc.stderr
    # Two tries per judgment (and one try of JSON mode, in case the 500s refused json_schema),
    # and the run with its failures is in MLflow all the same.
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (run,) = client.search_runs([exp.experiment_id])
    metrics = run.data.metrics
    assert metrics["headline/more/failed_fraction"] == 1.0
    assert metrics["probes/failed_judgments"] == metrics["probes/total"] > 0
    assert (
        metrics["llm/judge/calls"] == 2 * metrics["probes/total"] + 1 == len(openai_stub.requests)
    )
    assert metrics["llm/judge/retries"] == metrics["probes/total"]
    assert "headline/overall" not in metrics  # nothing was scored 0


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


# ~300 probes (~600 answer and judge calls) over 4 short sessions.
BULK = [
    *SMALL,
    "transcript.sessions=4",
    "transcript.target_tokens=40000",
    "probe.per_type=8",
    "execution.progress=off",
]


def llm_stages(base_url: str) -> list[str]:
    """answerer=gpt4o and judge=gpt4o on the stub, with test-sized timeouts and backoff."""
    settings = {
        "base_url": base_url,
        "timeout_s": 0.5,
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.05,
        "max_retries": 10,
    }
    overrides = ["answerer=gpt4o", "judge=gpt4o"]
    for stage in ("answerer", "judge"):
        overrides += [f"{stage}.endpoint.{key}={value}" for key, value in settings.items()]
        overrides.append(f"++{stage}.endpoint.preflight=false")  # requests counted: the job's
    return overrides


def varied_reply(body: dict) -> str:
    """The scripted model, with judge scores that vary by request (so matches mean something)."""
    text = scripted_reply(body)
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict) and "criterionResults" in data:
        digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
        for i, item in enumerate(data["criterionResults"]):
            item["score"] = digest[i] % 6
        return json.dumps(data)
    return text


def outcome(result) -> dict[str, tuple]:
    return {
        r.probe.id: (r.failed, r.answer.text, tuple(sorted(r.judgment.scores().items())))
        for r in result.probe_results
    }


def test_many_calls_with_20pct_faults_match_a_fault_free_run(openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.reply = varied_reply
    clean = run_job(validate(compose_config([*BULK, *llm_stages(openai_stub.base_url)])))
    clean_calls = len(openai_stub.requests)
    assert not any(r.failed for r in clean.probe_results)

    openai_stub.faults = FaultMix(
        rate=0.2, kinds=("429", "500", "hang", "malformed"), seed=7, retry_after=0.01, hang_s=1.0
    )
    faulty = run_job(validate(compose_config([*BULK, *llm_stages(openai_stub.base_url)])))
    requests = len(openai_stub.requests) - clean_calls
    assert requests >= 500
    stats = openai_stub.stats()
    assert all(stats.faults.get(kind, 0) > 0 for kind in ("429", "500", "hang", "malformed"))
    # Every probe is answered and judged, or recorded as failed with its reason ...
    for r in faulty.probe_results:
        assert r.score is not None or (r.failed and (r.answer.error or r.judgment.error))
    # ... and the answered ones match the fault-free run exactly.
    same = outcome(clean)
    answered = {pid: o for pid, o in outcome(faulty).items() if not o[0]}
    assert len(answered) >= 0.95 * len(same)
    assert answered == {pid: same[pid] for pid in answered}
    metrics = faulty.metrics()
    assert metrics["llm/retries"] > 0
    assert metrics["probes/failed"] == len(same) - len(answered)


RESUME = [
    *SMALL_CLI,
    "transcript.sessions=2",
    "probe.per_type=4",
    "execution.progress=off",
    "execution.fail_on_error=1",
]
# What legitimately differs between a resumed run and an uninterrupted one.
TRANSPORT_METRICS = ("/calls", "/cache_hits", "/retries", "/failures")


def runs_named(tmp_path, name: str, status: str = "FINISHED") -> list:
    """The runs called ``name`` in the test's store that ended as ``status``."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    where = f"attributes.run_name = '{name}' and attributes.status = '{status}'"
    return client.search_runs([exp.experiment_id], where)


def run_metrics(tmp_path, name: str) -> dict[str, float]:
    """The metrics of the finished run ``name`` in the test's store, minus the transport counts."""
    (run,) = runs_named(tmp_path, name)
    return {k: v for k, v in run.data.metrics.items() if not k.endswith(TRANSPORT_METRICS)}


def job_args(stub, tmp_path, name: str, cache: str | None = None) -> list[str]:
    """One job of the test: its own cache (unless shared), one store for all, run ``name``."""
    from benchmark.tracking.mlflow_store import prepare_store

    prepare_store(tmp_path / "mlruns", "compaction-benchmark")  # migrated once, before jobs
    return [
        *RESUME,
        *llm_stages(stub.base_url),
        f"cache.dir={tmp_path / (cache or name) / 'cache'}",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        f"tracking.run_name={name}",
    ]


def _cached(store) -> int:
    """Replies committed to a cache file so far (0 while it does not exist yet)."""
    if not store.exists():
        return 0
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_killed_run_resumes_without_repeating_a_completed_call(openai_stub, tmp_path, mlflow_store):
    openai_stub.reply = varied_reply
    reference = cli(job_args(openai_stub, tmp_path, "reference"), tmp_path)
    assert reference.returncode == 0, reference.stderr[-2000:]
    total = len(openai_stub.requests)
    assert total > 40

    served: list[str] = []
    lock = threading.Lock()

    def half_then_hang(body: dict) -> str | Fault:
        with lock:
            if len(served) >= total // 2:
                return Fault.hang(30)
            served.append(json.dumps(body, sort_keys=True))
        return varied_reply(body)

    openai_stub.reply = half_then_hang
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_PROXY": "*"}
    args = job_args(openai_stub, tmp_path, "resumed")
    proc = subprocess.Popen([sys.executable, "-m", "benchmark", *args], cwd=tmp_path, env=env)
    deadline = time.monotonic() + 120
    while len(served) < total // 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    # The served replies reach the client and its cache (a loaded machine may take a while).
    store = tmp_path / "resumed" / "cache" / "llm_responses.sqlite"
    while _cached(store) < len(served) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    again, openai_stub.reply = recording(varied_reply)
    resumed = cli(args, tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert not set(again) & set(served)  # nothing that had completed was asked again
    assert len(again) <= total - len(served)
    assert run_metrics(tmp_path, "resumed") == run_metrics(tmp_path, "reference")
    # The killed job's run, open since its start, was ended KILLED, not left RUNNING.
    assert len(runs_named(tmp_path, "resumed", "KILLED")) == 1
    assert not runs_named(tmp_path, "resumed", "RUNNING")


def test_two_jobs_share_one_cache_at_once(openai_stub, tmp_path, mlflow_store):
    openai_stub.reply = varied_reply
    openai_stub.latency = 0.01
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NO_PROXY": "*"}
    jobs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmark",
                *job_args(openai_stub, tmp_path, name, cache="shared"),
            ],
            cwd=tmp_path,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    for job in jobs:
        _, err = job.communicate(timeout=300)
        assert job.returncode == 0, err[-2000:]
    first, second = (run_metrics(tmp_path, n) for n in ("first", "second"))
    assert first == second
    db = sqlite3.connect(tmp_path / "shared" / "cache" / "llm_responses.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    # A third run of the same config is served entirely from the shared cache.
    before = len(openai_stub.requests)
    third = cli(job_args(openai_stub, tmp_path, "third", cache="shared"), tmp_path)
    assert third.returncode == 0, third.stderr[-2000:]
    assert len(openai_stub.requests) == before
    assert run_metrics(tmp_path, "third") == first
