"""The LLM layer against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import json

import pytest
from conftest import stub_endpoint
from openai_stub import Fault

from benchmark.errors import UserError
from benchmark.llm import Endpoint, LLMClient, LLMError, UsageLedger

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def endpoint(stub, **kw) -> Endpoint:
    fields = {"name": "test", "model": "m", "price_input_per_1m": 2.0, "price_output_per_1m": 8.0}
    return Endpoint(**stub_endpoint(stub, "BENCH_TEST_KEY", **{**fields, "max_retries": 2, **kw}))


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-test")


def parse_x(text: str) -> int:
    data = json.loads(text)
    if not isinstance(data.get("x"), int) or not 0 <= data["x"] <= 5:
        raise ValueError(f"x out of range: {data.get('x')!r}")
    return data["x"]


def test_completion_records_usage_and_cost(openai_stub):
    openai_stub.require_key = "sk-test"
    ledger = UsageLedger()
    client = LLMClient(endpoint(openai_stub), "judge", ledger)
    completion, _ = client.complete([{"role": "user", "content": "one two three"}])
    assert completion.text.startswith("stub reply")
    usage = ledger.roles()["judge"]
    assert usage.calls == 1 and usage.input_tokens == completion.input_tokens > 0
    expected = (usage.input_tokens * 2.0 + usage.output_tokens * 8.0) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    assert ledger.metrics()["llm/judge/calls"] == 1


def test_missing_key_fails_fast_naming_the_variable(openai_stub, monkeypatch):
    monkeypatch.delenv("BENCH_TEST_KEY")
    with pytest.raises(UserError, match="BENCH_TEST_KEY"):
        LLMClient(endpoint(openai_stub), "judge")
    assert openai_stub.requests == []


def test_json_schema_rejected_falls_back_to_json_mode_with_the_schema(openai_stub):
    openai_stub.json_schema = "reject"
    openai_stub.reply = lambda body: '{"x": 3}'
    client = LLMClient(endpoint(openai_stub), "judge")
    completion, x = client.complete(
        [{"role": "user", "content": "q"}], schema=SCHEMA, parse=parse_x
    )
    assert x == 3 and completion.response_format == "json_object_schema"
    kinds = [r.body.get("response_format", {}).get("type") for r in openai_stub.requests]
    assert kinds == ["json_schema", "json_object"]
    assert openai_stub.requests[-1].body["response_format"]["schema"] == SCHEMA
    # The client remembers: the next call goes straight to JSON mode.
    client.complete([{"role": "user", "content": "q"}], schema=SCHEMA, parse=parse_x)
    assert openai_stub.requests[-1].body["response_format"]["type"] == "json_object"


def test_invalid_replies_are_retried_then_fail(openai_stub):
    replies = iter(["not json", '{"x": 7}', '{"x": 4}'])
    openai_stub.reply = lambda body: next(replies)
    ledger = UsageLedger()
    client = LLMClient(endpoint(openai_stub), "judge", ledger)
    _, x = client.complete([{"role": "user", "content": "q"}], schema=SCHEMA, parse=parse_x)
    assert x == 4 and len(openai_stub.requests) == 3
    assert ledger.roles()["judge"].failures == 2

    openai_stub.reply = lambda body: '{"x": 12345}'
    with pytest.raises(LLMError, match="out of range"):
        client.complete([{"role": "user", "content": "q"}], schema=SCHEMA, parse=parse_x)


def test_malformed_body_and_server_errors_become_llm_errors(openai_stub):
    client = LLMClient(endpoint(openai_stub, max_retries=0), "answerer")
    openai_stub.queue(Fault.malformed())
    with pytest.raises(LLMError, match="answerer call to test failed"):
        client.complete([{"role": "user", "content": "q"}])
    openai_stub.queue(Fault.status(500))
    with pytest.raises(LLMError, match="InternalServerError"):
        client.complete([{"role": "user", "content": "q"}])


def test_rate_limit_is_retried_by_the_transport(openai_stub):
    openai_stub.queue(Fault.status(429, retry_after=0.05))
    client = LLMClient(endpoint(openai_stub, max_retries=1), "judge")
    completion, _ = client.complete([{"role": "user", "content": "hello"}])
    assert completion.text and len(openai_stub.requests) == 2
