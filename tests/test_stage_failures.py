"""An LLM stage whose endpoint is down or replies garbage fails its own points, counted and
logged; the job ends normally and obeys execution.fail_on_error. A connection that cannot
be made fails fast, naming the endpoint and its base_url."""

from __future__ import annotations

import asyncio
import math
import re
import socket

import pytest
from conftest import SMALL, compose_config
from openai_stub import OpenAIStub
from test_llm_execution import SMALL_CLI, cli

from benchmark.__main__ import run
from benchmark.errors import JobFailed
from benchmark.llm import Endpoint, EndpointUnreachable, LLMClient, LLMError
from benchmark.llm.loop import _Loop
from benchmark.stub import scripted_reply

FAST = {"backoff_initial_s": 0.01, "backoff_max_s": 0.02, "max_retries": 1}


def refused_url() -> str:
    """The base_url of a loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def endpoint_overrides(stage: str, base_url: str) -> list[str]:
    return [f"{stage}.endpoint.base_url={base_url}", f"++{stage}.endpoint.preflight=false"] + [
        f"{stage}.endpoint.{k}={v}" for k, v in FAST.items()
    ]


def logged_metrics(store) -> dict[str, float]:
    """The metrics of the one run in the MLflow store under ``store``."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compaction-benchmark")
    (mlrun,) = client.search_runs([exp.experiment_id])
    return mlrun.data.metrics


def job(tmp_path, overrides: list[str]) -> list[str]:
    """SMALL with a real MLflow store under ``tmp_path``."""
    no_tracking = [o for o in SMALL if o != "tracking=disabled"]
    return [
        *no_tracking,
        "tracking=mlflow",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        *overrides,
    ]


def first_requests_garbage(count: int):
    """A model whose first ``count`` replies are garbage, then the scripted model's."""
    seen = 0

    def reply(body: dict) -> str:
        nonlocal seen
        seen += 1
        return "I'd rather not." if seen <= count else scripted_reply(body)

    return reply


# -- the summarizer ------------------------------------------------------------------------


def test_summarizer_endpoint_down_fails_every_probe_and_the_run_is_logged(tmp_path, mlflow_store):
    url = refused_url()
    summarizer = ["policy=hermes", "summarizer=local", *endpoint_overrides("summarizer", url)]
    with pytest.raises(JobFailed) as failed:
        run(compose_config(job(tmp_path, summarizer)))
    message = str(failed.value)
    assert "summarizer endpoint 'local'" in message and f"unreachable at {url}" in message
    assert "connection refused" in message and "\n" not in message
    metrics = logged_metrics(tmp_path / "mlruns")
    assert metrics["probes/total"] > 0 and metrics["probes/failed"] == metrics["probes/total"]
    assert metrics["headline/more/failed_fraction"] == 1.0
    assert metrics["points/compaction_failed"] == metrics["points/total"] > 0
    assert "tokens/after" not in metrics  # no point was compacted
    assert "headline/more/compression_ratio" not in metrics
    assert not any(k.startswith("point/") for k in metrics)  # per point: points_table.json
    assert "headline/overall" not in metrics  # nothing was scored 0

    # Under the threshold the same job ends normally.
    tolerant = job(tmp_path / "tolerant", [*summarizer, "execution.fail_on_error=1.0"])
    assert run(compose_config(tolerant)) is None  # no score to return, and no error
    assert logged_metrics(tmp_path / "tolerant" / "mlruns")["headline/more/failed_fraction"] == 1.0


def test_a_summarizer_reply_without_its_sections_fails_only_its_point(
    openai_stub, tmp_path, mlflow_store
):
    tries = FAST["max_retries"] + 1
    openai_stub.reply = first_requests_garbage(tries)  # every try at the first point
    overrides = [
        "policy=hermes",
        "summarizer=local",
        *endpoint_overrides("summarizer", openai_stub.base_url),
        "execution.fail_on_error=1.0",
    ]
    assert run(compose_config(job(tmp_path, overrides))) is not None  # later points scored
    metrics = logged_metrics(tmp_path / "mlruns")
    assert metrics["points/compaction_failed"] == 1 < metrics["points/total"]
    assert 0 < metrics["probes/failed"] < metrics["probes/total"]
    assert metrics["probes/failed"] == metrics["probes/failed_answers"]  # never judged
    # Token figures count the compacted points only: a real ratio, not before / 0.
    assert 0 < metrics["tokens/after"] < metrics["tokens/before"]
    assert metrics["headline/more/compression_ratio"] == pytest.approx(
        metrics["tokens/before"] / metrics["tokens/after"],
        abs=5e-4,  # MLflow's 3 decimals
    )
    # One call per later point: the first point's tries, then no retry.
    assert len(openai_stub.requests) == tries + metrics["points/total"] - 1


def test_a_failed_point_is_marked_in_the_job_result(openai_stub):
    from benchmark.config.schema import validate
    from benchmark.run.pipeline import run_job

    openai_stub.reply = first_requests_garbage(FAST["max_retries"] + 1)
    summarizer = ["policy=hermes", "summarizer=local"]
    config = validate(
        compose_config(
            [*SMALL, *summarizer, *endpoint_overrides("summarizer", openai_stub.base_url)]
        )
    )
    result = run_job(config)
    first, *rest = result.points
    assert first.compaction_error.startswith("compaction failed: RuntimeError: summarizer")
    assert "invalid reply" in first.compaction_error
    assert math.isnan(first.compression_ratio) and rest
    assert all(r.failed and r.score is None for r in first.probes)
    assert all(r.answer.error == first.compaction_error for r in first.probes)
    assert all(p.compaction_error is None for p in rest)
    assert result.failure_cause() == first.compaction_error


# -- the probe writer ----------------------------------------------------------------------


def test_probe_writer_endpoint_down_skips_its_points_and_the_run_is_logged(tmp_path, mlflow_store):
    url = refused_url()
    writer = ["probe=llm_local", *endpoint_overrides("probe.writer", url)]
    with pytest.raises(JobFailed) as failed:
        run(compose_config(job(tmp_path, writer)))
    assert "probe_writer endpoint 'local'" in str(failed.value)
    assert f"unreachable at {url}: connection refused" in str(failed.value)
    metrics = logged_metrics(tmp_path / "mlruns")
    assert metrics["points/probe_writer_failed"] == metrics["points/total"] > 0
    assert metrics["probes/total"] == 0 and metrics["headline/more/failed_fraction"] == 1.0
    assert metrics["tokens/after"] > 0  # the points were compacted all the same

    tolerant = job(tmp_path / "tolerant", [*writer, "execution.fail_on_error=1.0"])
    assert run(compose_config(tolerant)) is None
    assert logged_metrics(tmp_path / "tolerant" / "mlruns")["points/probe_writer_failed"] > 0


def test_a_probe_writer_failing_at_one_point_skips_only_that_point(
    openai_stub, tmp_path, mlflow_store
):
    tries = FAST["max_retries"] + 1
    openai_stub.reply = first_requests_garbage(tries)
    overrides = [
        "probe=llm_local",
        *endpoint_overrides("probe.writer", openai_stub.base_url),
        "execution.fail_on_error=0.9",
    ]
    assert run(compose_config(job(tmp_path, overrides))) is not None
    metrics = logged_metrics(tmp_path / "mlruns")
    assert metrics["points/probe_writer_failed"] == 1 < metrics["points/total"]
    assert metrics["probes/total"] > 0 and metrics["probes/failed"] == 0
    assert (
        metrics["headline/more/failed_fraction"] == 1 / metrics["points/total"]
    )  # the share of points skipped
    # Below the share of skipped points, the job fails (after logging).
    strict = job(tmp_path / "strict", [*overrides, "execution.fail_on_error=0.1"])
    openai_stub.reply = first_requests_garbage(tries)
    with pytest.raises(
        JobFailed,
        match="probe writer failed: InvalidReplies: probe_writer call to local failed: invalid",
    ):
        run(compose_config(strict))


# -- failing fast --------------------------------------------------------------------------


def test_a_refused_judge_ends_with_one_line_naming_its_base_url(tmp_path, mlflow_store):
    url = refused_url()
    proc = cli(
        [
            *SMALL_CLI,
            "judge=gpt4o",
            f"judge.endpoint.base_url={url}",
            "++judge.endpoint.preflight=false",  # the job's own fail-fast (test_llm_preflight)
            "judge.endpoint.max_retries=4",
            "judge.endpoint.backoff_initial_s=0.01",
            "probe.per_type=2",
            "execution.progress=off",
        ],
        tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 100.0% of probes failed")
    assert f"judge endpoint 'gpt4o' (gpt-4o) unreachable at {url}: connection refused" in last
    metrics = logged_metrics(tmp_path / "mlruns")
    assert metrics["probes/failed_judgments"] == metrics["probes/total"] > 0
    # At most two tries of a judgment (max_retries=4 would allow five): a dead port is
    # not retried as a transient fault.
    assert metrics["llm/judge/calls"] <= 2 * metrics["probes/total"]


def unreachable_client(url: str, **fields) -> LLMClient:
    # Built unvalidated: the config refuses an unusable base_url up front
    # (tests/test_bad_overrides.py); the client must still fail fast on one made in code.
    endpoint = Endpoint.model_construct(
        name="local", model="m", base_url=url, api_key_env=None, **fields
    )
    return LLMClient(endpoint, role="answerer")


def test_every_call_on_a_dead_endpoint_fails_with_the_same_message():
    url = refused_url()
    client = unreachable_client(url, **FAST)

    async def many() -> list[BaseException]:
        calls = [client.acomplete([{"role": "user", "content": "hi"}]) for _ in range(100)]
        return await asyncio.gather(*calls, return_exceptions=True)

    errors = _Loop.run(many())
    assert all(isinstance(e, EndpointUnreachable) for e in errors)
    expected = f"answerer endpoint 'local' (m) unreachable at {url}: connection refused"
    assert {str(e) for e in errors} == {expected}
    # Each call tried at most twice; once known unreachable, a call makes no attempt at all.
    tried = client.ledger.roles()["answerer"].calls
    assert tried <= 2 * len(errors)
    with pytest.raises(EndpointUnreachable, match=re.escape(expected)):
        client.complete([{"role": "user", "content": "hi"}])
    assert client.ledger.roles()["answerer"].calls == tried


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("not-a-url", "invalid URL"),
        ("ftp://example.com/v1", "not an http(s) URL"),
        ("http://127.0.0.1:99999/v1", "invalid URL"),
    ],
)
def test_an_unusable_url_fails_on_the_first_try(url, reason):
    client = unreachable_client(url, max_retries=4, backoff_initial_s=30)  # no wait happens
    with pytest.raises(EndpointUnreachable, match=f"unreachable at .*: {re.escape(reason)}$"):
        client.complete([{"role": "user", "content": "hi"}])
    assert client.ledger.roles()["answerer"].retries == 0


def test_a_query_in_base_url_is_not_shown():
    url = refused_url()
    with pytest.raises(EndpointUnreachable) as failed:
        client = unreachable_client(f"{url}?key=hunter2", max_retries=0)
        client.complete([{"role": "user", "content": "hi"}])
    assert f"unreachable at {url}: connection refused" in str(failed.value)
    assert "hunter" not in str(failed.value)


def test_an_endpoint_that_answered_once_is_retried_when_it_goes_away():
    """A server that restarts mid-job: its refused connections stay transient."""
    stub = OpenAIStub().start()
    url = stub.base_url
    client = unreachable_client(url, **FAST)
    try:
        client.complete([{"role": "user", "content": "hi"}])
    finally:
        stub.stop()
    with pytest.raises(LLMError) as failed:
        client.complete([{"role": "user", "content": "hi"}])
    assert not isinstance(failed.value, EndpointUnreachable)
    assert client.ledger.roles()["answerer"].retries == FAST["max_retries"]


def test_a_read_timeout_stays_transient(openai_stub):
    from openai_stub import Fault

    openai_stub.queue(Fault.hang(5), times=1)
    client = unreachable_client(openai_stub.base_url, timeout_s=0.2, **FAST)
    completion, _ = client.complete([{"role": "user", "content": "hi"}])
    assert completion.text and client.ledger.roles()["answerer"].retries == 1
