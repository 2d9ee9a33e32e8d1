"""The preflight: an endpoint that cannot serve the job fails before any work, in one line
naming the role, base_url and model; and the timeouts of one-at-a-time servers: a request's
clock starts when it is sent, and an abandoned request closes its connection."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from conftest import SMALL, compose_config, run_benchmark
from openai_stub import Fault, OpenAIStub
from test_stage_failures import refused_url

from benchmark.__main__ import run
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.llm import Endpoint, LLMClient, LLMError, UsageLedger
from benchmark.llm import preflight as pf
from benchmark.llm.http import ChatTransport
from benchmark.llm.loop import _Loop, submit
from benchmark.run.parts import build_parts

# A job as a user starts it, with a real MLflow store that must stay untouched.
LOCAL = ["judge=local", "answerer=local"]


def user_job(tmp_path, url: str, *extra: str) -> list[str]:
    return [
        *[o for o in SMALL if o != "tracking=disabled"],
        "tracking=mlflow",
        f"tracking.store_dir={tmp_path / 'mlruns'}",
        *LOCAL,
        f"judge.endpoint.base_url={url}",
        f"answerer.endpoint.base_url={url}",
        *extra,
    ]


def endpoint(url: str, **kw) -> Endpoint:
    fields = {"name": "local", "model": "m", "base_url": url, "api_key_env": None, **kw}
    return Endpoint(**fields)


def check(*endpoints: Endpoint, role: str = "judge") -> None:
    """The preflight of clients on ``endpoints`` (as the job's parts would hold them)."""
    pf.preflight([LLMClient(ep, role) for ep in endpoints])


def test_preflight_timeouts_are_short():
    # Unreachable fails within the connect timeout; a misnamed model within connect + listing.
    assert pf.CONNECT_S + pf.LIST_READ_S < 10


def test_a_refused_base_url_fails_before_any_work_in_one_line(tmp_path):
    url = refused_url()
    with pytest.raises(UserError) as failed:
        run(compose_config(user_job(tmp_path, url)))
    message = str(failed.value)
    assert "\n" not in message
    assert f"endpoint 'local' (Qwen/Qwen2.5-7B-Instruct) unreachable at {url}" in message
    assert message.startswith("answerer and judge endpoint")  # one endpoint, both roles
    assert "connection refused" in message
    assert not (tmp_path / "mlruns").exists()  # no run, no store: nothing was done


def test_the_cli_exits_2_with_that_line(tmp_path):
    url = refused_url()
    env = {**os.environ, "OPENAI_API_KEY": ""}
    proc = run_benchmark(user_job(tmp_path, url), tmp_path, env, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: answerer and judge endpoint 'local'")
    assert f"unreachable at {url}" in lines[0] and "Traceback" not in proc.stderr


def test_a_model_the_server_does_not_list_fails_naming_it(openai_stub):
    openai_stub.models = ["qwen2.5-7b", "llama3:latest"]
    with pytest.raises(UserError) as failed:
        check(endpoint(openai_stub.base_url, model="qwen-7b"))
    message = str(failed.value)
    assert "\n" not in message
    assert f"judge endpoint 'local' (qwen-7b): {openai_stub.base_url} does not list" in message
    assert "qwen2.5-7b, llama3:latest" in message and "preflight: false" in message
    assert openai_stub.requests == []  # no completion asked of a misnamed model


def test_a_listed_model_passes_and_is_not_the_jobs_call(openai_stub, tmp_path):
    openai_stub.models = ["m", "llama3:latest"]
    ledger = UsageLedger()
    from benchmark.llm.reply_cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    clients = [
        LLMClient(endpoint(openai_stub.base_url), "judge", ledger, cache),
        LLMClient(endpoint(openai_stub.base_url, model="llama3"), "answerer", ledger, cache),
    ]
    pf.preflight(clients)
    pf.preflight(clients)  # never from the cache: the live server is asked again
    pings = openai_stub.requests
    assert len(pings) == 4 and {r.body["max_tokens"] for r in pings} == {1}
    assert {r.body["model"] for r in pings} == {"m", "llama3"}  # Ollama's name:latest matches
    assert ledger.metrics() == {}  # not counted as the job's calls or cost
    assert cache.stats().entries == 0


def test_a_server_without_models_passes_on_its_completion(openai_stub):
    # The stub answers GET /v1/models with 404, as servers that keep no listing do.
    check(endpoint(openai_stub.base_url))
    (ping,) = openai_stub.requests
    assert ping.path == "/v1/chat/completions" and ping.body["max_tokens"] == 1


def test_a_model_not_found_on_the_completion_fails(openai_stub):
    openai_stub.reply = lambda body: Fault.status(404, message="model 'nope' not found")
    with pytest.raises(UserError) as failed:
        check(endpoint(openai_stub.base_url, model="nope"), role="answerer")
    message = str(failed.value)
    assert message.startswith("answerer endpoint 'local' (nope): not found at ")
    assert "model 'nope' not found" in message and "\n" not in message


def test_a_passing_fault_on_the_completion_does_not_fail_the_job(openai_stub):
    openai_stub.queue(Fault.status(500))
    openai_stub.queue(Fault.status(400, message="max_tokens must be at least 16"))
    check(endpoint(openai_stub.base_url))  # a 5xx: the job's retries apply
    check(endpoint(openai_stub.base_url))  # a 400 not about the model


def test_a_refused_key_names_its_variable(openai_stub, monkeypatch):
    openai_stub.require_key = "sk-right"
    monkeypatch.setenv("BENCH_PREFLIGHT_KEY", "sk-wrong")
    with pytest.raises(UserError) as failed:
        check(endpoint(openai_stub.base_url, api_key_env="BENCH_PREFLIGHT_KEY"))
    message = str(failed.value)
    assert "refused the API key (HTTP 401)" in message and "BENCH_PREFLIGHT_KEY" in message
    assert "sk-wrong" not in message


def test_preflight_false_skips_every_check(openai_stub):
    check(endpoint(refused_url(), preflight=False))  # no error: not even a connection
    check(endpoint(openai_stub.base_url, preflight=False))
    assert openai_stub.requests == []


def test_endpoints_are_checked_once_each_and_concurrently(openai_stub):
    openai_stub.latency = 0.3
    same = endpoint(openai_stub.base_url)
    pf.preflight(
        [
            LLMClient(same, "judge"),
            LLMClient(same, "answerer"),  # the same endpoint: one check for both roles
            LLMClient(endpoint(openai_stub.base_url, model="other"), "summarizer"),
        ]
    )
    assert sorted(r.body["model"] for r in openai_stub.requests) == ["m", "other"]
    assert openai_stub.max_concurrent == 2


def test_the_parts_clients_are_found_where_the_job_uses_them(openai_stub):
    stub = openai_stub.base_url
    panel = [
        "judge=panel",
        "~judge.members.gpt41",
        *(f"judge.members.{m}.endpoint.base_url={stub}" for m in ("gpt4o", "claude")),
        *(f"judge.members.{m}.endpoint.api_key_env=null" for m in ("gpt4o", "claude")),
    ]
    hermes = ["policy=hermes", "summarizer=local"]
    used = build_parts(validate(compose_config([*SMALL, *panel, *hermes])))
    found = pf.targets(pf.llm_clients(used))
    assert sorted((t.roles, t.endpoint.model) for t in found) == [
        (("judge",), "claude-sonnet-4-20250514"),  # every panel member
        (("judge",), "gpt-4o"),
        (("summarizer",), "Qwen/Qwen2.5-7B-Instruct"),  # the summarizer the policy uses
    ]
    # A summarizer the policy does not use is not checked; the offline default checks none.
    unused = build_parts(validate(compose_config([*SMALL, "policy=truncate", "summarizer=local"])))
    assert pf.llm_clients(unused) == []
    assert pf.llm_clients(build_parts(validate(compose_config(SMALL)))) == []


# -- timeouts and abandoned requests ----------------------------------------------------------


def test_the_transport_has_a_connect_and_a_read_timeout_and_no_total():
    timeout = ChatTransport(None, "k", timeout_s=300, connect_timeout_s=7).timeout
    assert (timeout.total, timeout.connect, timeout.sock_read) == (None, 7, 300)


def test_queue_time_does_not_count_against_the_timeout(openai_stub):
    # Each reply takes 0.3 s, under timeout_s=1.5; six queued behind max_concurrency=1
    # take 1.8 s together. Measured from queueing they would time out; from sending, none.
    openai_stub.latency = 0.3
    client = LLMClient(
        endpoint(openai_stub.base_url, timeout_s=1.5, max_concurrency=1, max_retries=0),
        "judge",
    )

    async def calls() -> list[object]:
        messages = [{"role": "user", "content": "hi"}]
        return await asyncio.gather(
            *(client.acomplete(messages) for _ in range(6)), return_exceptions=True
        )

    results = _Loop.run(calls())
    assert not [r for r in results if isinstance(r, BaseException)]
    assert openai_stub.max_concurrent == 1 and client.ledger.metrics()["llm/calls"] == 6


def wait_until(condition, seconds: float = 10.0) -> bool:
    """Poll ``condition`` (the server's view, from another thread) until it holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_cancelled_request_closes_its_connection(openai_stub):
    client = LLMClient(endpoint(openai_stub.base_url, max_retries=0), "judge")
    messages = [{"role": "user", "content": "hi"}]
    client.complete(messages)  # a finished call keeps its connection for the next one
    assert openai_stub.open_connections() == 1
    openai_stub.latency = 30  # a long generation
    call = submit(client.acomplete(messages))
    assert wait_until(lambda: len(openai_stub.requests) == 2)
    call.cancel()  # the job gave up on it
    assert wait_until(lambda: openai_stub.open_connections() == 0)


def test_a_timed_out_request_closes_its_connection(openai_stub):
    openai_stub.latency = 30
    client = LLMClient(endpoint(openai_stub.base_url, timeout_s=0.2, max_retries=0), "judge")
    with pytest.raises(LLMError, match="APITimeoutError"):
        client.complete([{"role": "user", "content": "hi"}])
    assert wait_until(lambda: openai_stub.open_connections() == 0)


def test_the_stub_counts_open_connections():
    with OpenAIStub() as stub:
        assert stub.open_connections() == 0
