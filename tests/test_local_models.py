"""The whole LLM path against a llama.cpp-class server with a small model (the stub's local
mode: 500 on json_schema, schema grammar that ignores bounds, length stops, an 8K window
counted with another tokenizer, one request at a time). Each shipped local setup runs to the
end with its run logged and its failures counted; no request overflows the window and no
invalid reply is answered by an identical resend."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import SMALL, compose_config
from test_stage_failures import logged_metrics

from benchmark.__main__ import run
from benchmark.llm import close_all
from benchmark.stub import LocalMode, LocalStats, OpenAIStub, StubRequest, scripted_reply

MODEL = "qwen2.5-1.5b-instruct-q4_k_m.gguf"  # the one name the stub lists

# Each setup: its config groups, and the config paths of the endpoints they add.
SETUPS: dict[str, tuple[list[str], list[str]]] = {
    "judge=local answerer=local": (["judge=local", "answerer=local"], ["judge", "answerer"]),
    "policy=hermes summarizer=local": (["policy=hermes", "summarizer=local"], ["summarizer"]),
    "probe=llm_local": (["probe=llm_local"], ["probe.writer"]),
}


@dataclass
class LocalJob:
    setup: str
    error: BaseException | None
    metrics: dict[str, float]
    stats: LocalStats
    requests: list[StubRequest]


def overrides(setup: str, base_url: str, store) -> list[str]:
    """SMALL with a real MLflow store, every endpoint of ``setup`` on the stub's listed model,
    quick backoffs, and failures tolerated (they are counted, the job still ends normally)."""
    groups, endpoints = SETUPS[setup]
    no_tracking = [o for o in SMALL if o != "tracking=disabled"]
    args = [
        *no_tracking,
        "tracking=mlflow",
        f"tracking.store_dir={store}",
        "execution.fail_on_error=1.0",
        "execution.progress=off",
        *groups,
    ]
    for path in endpoints:
        args += [
            f"{path}.endpoint.base_url={base_url}",
            f"{path}.endpoint.model={MODEL}",
            f"{path}.endpoint.backoff_initial_s=0.01",
            f"{path}.endpoint.backoff_max_s=0.02",
        ]
    return args


@pytest.fixture(scope="module", params=list(SETUPS))
def local_job(request, tmp_path_factory) -> LocalJob:
    """One job of a setup against the local mode (run once, checked by several tests)."""
    store = tmp_path_factory.mktemp("local") / "mlruns"
    error = None
    with OpenAIStub(reply=scripted_reply, local=LocalMode(model=MODEL)) as stub:
        try:
            run(compose_config(overrides(request.param, stub.base_url, store)))
        except Exception as exc:  # reported by the test that needs the run to end
            error = exc
        finally:
            close_all()
        stats, requests = stub.local_stats(), stub.requests
    metrics = logged_metrics(store) if store.exists() else {}
    return LocalJob(request.param, error, metrics, stats, requests)


def test_each_local_setup_runs_to_the_end_with_the_run_logged_and_failures_counted(local_job):
    assert local_job.error is None, f"{local_job.setup}: {local_job.error!r}"
    metrics = local_job.metrics
    assert metrics["points/total"] > 0
    assert "headline/more/failed_fraction" in metrics  # counted, whatever the share
    assert metrics["probes/failed"] <= metrics["probes/total"]
    if local_job.setup == "probe=llm_local":
        assert "points/probe_writer_failed" in metrics
    if local_job.setup == "policy=hermes summarizer=local":
        assert "points/compaction_failed" in metrics
        if metrics["points/compaction_failed"] == metrics["points/total"]:
            assert "tokens/after" not in metrics  # no fake figures for failed points
    if local_job.setup == "judge=local answerer=local":
        assert metrics["probes/failed"] == metrics["probes/failed_answers"] + metrics.get(
            "probes/failed_judgments", 0
        )
    assert local_job.stats.requests > 0  # the stub's local mode was really asked
    assert local_job.stats.max_busy <= 1  # one at a time (0: every request was refused)


def test_no_request_exceeds_the_declared_window(local_job):
    assert local_job.stats.served > 0
    assert local_job.stats.over_window == 0


def test_no_identical_request_is_sent_twice_after_an_invalid_reply(local_job):
    assert local_job.stats.resent_after_invalid == 0
    # The same from the recorded bodies: no body repeats right after itself.
    bodies = [_canonical(r.body) for r in local_job.requests if r.path.endswith("/completions")]
    assert not any(a == b for a, b in zip(bodies, bodies[1:], strict=False))


def test_with_the_schema_attached_the_small_model_is_scored(local_job):
    metrics = local_job.metrics
    if local_job.setup == "judge=local answerer=local":
        assert metrics["probes/failed"] < metrics["probes/total"]
        assert "headline/overall" in metrics
    elif local_job.setup == "policy=hermes summarizer=local":
        assert metrics["points/compaction_failed"] < metrics["points/total"]
    else:
        assert (
            metrics["probes/total"] > 0
            and metrics["points/probe_writer_failed"] < metrics["points/total"]
        )


def _canonical(body: dict[str, Any] | None) -> str:
    return json.dumps(body, sort_keys=True)
