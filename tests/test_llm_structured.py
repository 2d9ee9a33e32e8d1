"""Structured output on servers that do it their own way, and retries that change the request.

Every test talks to the real loopback stub; its reply hook plays the server (a llama.cpp-class
500 on ``json_schema``, JSON mode with the schema, replies cut at ``max_tokens``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import SMALL, compose_config
from openai_stub import Fault, scripted_reply

from benchmark.answerer.base import AnswerRequest
from benchmark.answerer.llm import LLMAnswerer
from benchmark.config.schema import validate
from benchmark.llm import Completion, Endpoint, LLMClient, LLMError, UsageLedger
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.structured_output import Repair
from benchmark.run.pipeline import run_job
from benchmark.stub.chat_route import Cut

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
ASK = [{"role": "system", "content": "Reply in JSON."}, {"role": "user", "content": "q"}]
# What a llama.cpp-class server answers to response_format json_schema (HTTP 500).
LLAMA_REFUSAL = 'response_format type must be one of "text" or "json_object", but got: json_schema'


def endpoint(stub, **kw) -> Endpoint:
    fields = dict(name="local", model="m", base_url=stub.base_url, api_key_env=None, max_retries=3)
    fields.update(kw)
    return Endpoint(**fields)


def parse_x(text: str) -> int:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("x"), int):
        raise ValueError(f"no integer x in {text[:40]!r}")
    return data["x"]


def rung(body: dict | None) -> str:
    """Which rung a request body asks on."""
    body = body or {}
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return "json_schema"
    if fmt.get("type") == "json_object":
        return "json_object_schema" if "schema" in fmt else "json_object"
    for dialect in ("guided_json", "structured_outputs"):
        if dialect in body:
            return dialect
    return "none"


def rungs(stub) -> list[str]:
    return [rung(r.body) for r in stub.requests]


def failing_on(failing: list[str], fault: Fault, reply: str) -> Callable[[dict], str | Fault]:
    """A server answering ``fault`` on the ``failing`` rungs and ``reply`` on the others."""
    return lambda body: fault if rung(body) in failing else reply


def ask(stub, ledger: UsageLedger, role: str = "judge") -> tuple[Completion, int]:
    """One structured call for ``x`` through a fresh client of the stub."""
    return LLMClient(endpoint(stub), role, ledger).complete(ASK, schema=SCHEMA, parse=parse_x)


def bodies(stub) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in stub.requests]


@pytest.mark.parametrize("status", [400, 422, 500, 501])
def test_a_named_refusal_steps_down_whatever_its_status(openai_stub, status):
    refusal = Fault.status(status, message=LLAMA_REFUSAL)
    openai_stub.reply = failing_on(["json_schema"], refusal, '{"x": 3}')
    ledger = UsageLedger()
    completion, x = ask(openai_stub, ledger)
    assert x == 3 and completion.response_format == "json_object_schema"
    assert rungs(openai_stub) == ["json_schema", "json_object_schema"]
    assert openai_stub.requests[-1].body["response_format"]["schema"] == SCHEMA
    assert ledger.metrics()["llm/judge/fallbacks"] == 1
    # Remembered per endpoint: another client of it (another role) starts on the new rung.
    ask(openai_stub, ledger, "probe_writer")
    assert rungs(openai_stub)[2:] == ["json_object_schema"]
    assert ledger.metrics()["llm/fallbacks"] == 1


def test_an_unexplained_error_steps_down_only_when_the_rung_below_works(openai_stub):
    openai_stub.reply = failing_on(["json_schema"], Fault.status(500), '{"x": 1}')
    ledger = UsageLedger()
    completion, _ = ask(openai_stub, ledger)
    assert completion.response_format == "json_object_schema"
    assert rungs(openai_stub) == ["json_schema", "json_object_schema"]
    assert ledger.roles()["judge"].fallbacks == 1


def test_a_transient_500_after_the_rung_worked_demotes_nothing(openai_stub):
    openai_stub.reply = lambda body: '{"x": 2}'
    ledger = UsageLedger()
    client = LLMClient(endpoint(openai_stub, backoff_initial_s=0.01), "judge", ledger)
    client.complete(ASK, schema=SCHEMA, parse=parse_x)
    openai_stub.queue(Fault.status(500), times=2)
    _, x = client.complete(ASK, schema=SCHEMA, parse=parse_x)
    assert x == 2 and rungs(openai_stub) == ["json_schema"] * 4
    usage = ledger.roles()["judge"]
    assert usage.fallbacks == 0 and usage.retries == 2


def test_an_unexplained_error_on_both_rungs_is_an_error_not_a_demotion(openai_stub):
    openai_stub.reply = lambda body: Fault.status(400, message="bad request")
    ledger = UsageLedger()
    with pytest.raises(LLMError, match="BadRequestError"):
        ask(openai_stub, ledger)
    assert rungs(openai_stub) == ["json_schema", "json_object_schema"]
    assert ledger.roles()["judge"].fallbacks == 0


def test_the_ladder_ends_in_plain_text_with_the_schema_in_the_prompt(openai_stub):
    unsupported = Fault.status(400, message="unsupported parameter: response_format")
    openai_stub.reply = failing_on(
        ["json_schema", "json_object_schema", "json_object"], unsupported, '{"x": 5}'
    )
    ledger = UsageLedger()
    completion, x = ask(openai_stub, ledger)
    assert x == 5 and completion.response_format == "none"
    assert rungs(openai_stub) == ["json_schema", "json_object_schema", "json_object", "none"]
    system = openai_stub.requests[-1].body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Reply in JSON.")
    assert json.dumps(SCHEMA, sort_keys=True) in system["content"]
    assert ledger.roles()["judge"].fallbacks == 3


@pytest.mark.parametrize(
    ("dialect", "field", "value"),
    [
        ("guided_json", "guided_json", SCHEMA),
        ("structured_outputs", "structured_outputs", {"json": SCHEMA}),
    ],
)
def test_vllm_dialects_carry_the_schema_and_step_down_to_json_mode(
    openai_stub, dialect, field, value
):
    def server(body: dict) -> str | Fault:
        return Fault.status(400, message=f"unknown field {field}") if field in body else '{"x": 0}'

    openai_stub.reply = server
    client = LLMClient(endpoint(openai_stub, structured_output=dialect), "judge")
    completion, _ = client.complete(ASK, schema=SCHEMA, parse=parse_x)
    first = openai_stub.requests[0].body
    assert first[field] == value and "response_format" not in first
    assert rungs(openai_stub) == [dialect, "json_object"]
    assert completion.response_format == "json_object"


def test_a_retry_after_an_invalid_reply_is_never_the_same_request(openai_stub, tmp_path):
    openai_stub.reply = lambda body: "Sure! The answer is three."
    cache = ResponseCache(tmp_path / "cache.sqlite")
    client = LLMClient(endpoint(openai_stub, max_retries=3), "judge", UsageLedger(), cache)
    with pytest.raises(LLMError, match="invalid reply after 4 tries"):
        client.complete(ASK, schema=SCHEMA, parse=parse_x)
    sent = bodies(openai_stub)
    assert len(sent) == 4 and len(set(sent)) == 4
    repaired = openai_stub.requests[1].body["messages"]
    assert repaired[:2] == ASK
    assert repaired[2] == {"role": "assistant", "content": "Sure! The answer is three."}
    assert repaired[3]["role"] == "user"
    assert "Expecting value" in repaired[3]["content"]  # the parse error, quoted
    # A rerun replays the same repaired sequence from the cache: no call is repeated.
    with pytest.raises(LLMError, match="invalid reply after 4 tries"):
        client.complete(ASK, schema=SCHEMA, parse=parse_x)
    assert len(openai_stub.requests) == 4


def test_a_cut_structured_reply_is_asked_again_with_more_tokens(openai_stub):
    replies = iter([Cut('{"x": '), '{"x": 4}'])
    openai_stub.reply = lambda body: next(replies)
    ledger = UsageLedger()
    _, x = LLMClient(endpoint(openai_stub, max_tokens=300), "summarizer", ledger).complete(
        ASK, schema=SCHEMA, parse=parse_x
    )
    first, second = (r.body for r in openai_stub.requests)
    assert x == 4 and (first["max_tokens"], second["max_tokens"]) == (300, 600)
    assert first["messages"] == second["messages"] == ASK
    assert ledger.roles()["summarizer"].failures == 1


def test_a_cut_reply_with_no_room_left_gets_a_repair_instead():
    cut = Completion(text='{"x": ', finish_reason="length", input_tokens=700)
    repair = Repair(ASK, 300, context_window=1024)
    repair.after(cut, "reply cut at max_tokens")
    assert repair.max_tokens == 324 and repair.messages == ASK  # up to the window, not 600
    repair.after(cut, "reply cut at max_tokens")
    assert repair.max_tokens == 324 and repair.messages[-2]["content"] == '{"x": '
    assert "cut off at the 324-token limit" in repair.messages[-1]["content"]
    before = repair.messages
    repair.after(cut, "reply cut at max_tokens")
    assert repair.messages != before  # the same repair twice still differs (retry number)


def test_a_plain_answer_cut_at_max_tokens_is_used_and_flagged(openai_stub):
    openai_stub.reply = lambda body: Cut("The build failed because")
    ledger = UsageLedger()
    answerer = LLMAnswerer(endpoint(openai_stub).model_dump(), ledger=ledger)
    answer = answerer.answer(AnswerRequest(question="Why did it fail?", context=[]))
    assert answer.text == "The build failed because" and answer.truncated
    assert not answer.failed and len(openai_stub.requests) == 1
    assert ledger.metrics()["llm/answerer/truncated"] == 1


def small_model(body: dict) -> str | Fault:
    """A small local model on a llama.cpp-class server: 500 on json_schema, and prose unless
    the schema rides along in JSON mode (the grammar); its answers run out of tokens."""
    kind = rung(body)
    if kind == "json_schema":
        return Fault.status(500, message=LLAMA_REFUSAL)
    reply = scripted_reply(body)
    if kind == "json_object_schema":
        return reply
    if "criterionResults" in reply:
        return "I think the answer is mostly right, maybe a 3."
    return Cut(reply)  # the answerer


def test_a_small_local_judge_scores_with_the_schema_in_json_mode(openai_stub):
    openai_stub.reply = small_model
    cfg = compose_config(
        [
            *SMALL,
            "probe.per_type=1",
            "judge=local",
            "answerer=local",
            f"judge.endpoint.base_url={openai_stub.base_url}",
            f"answerer.endpoint.base_url={openai_stub.base_url}",
            "judge.endpoint.structured_output=json_schema",
        ]
    )
    result = run_job(validate(cfg))
    metrics = result.metrics()
    assert result.probe_results and not any(r.failed for r in result.probe_results)
    # Calls in flight when the first refusal came are refused too; the rung moves once.
    assert metrics["llm/judge/fallbacks"] == 1 and metrics["llm/judge/failures"] >= 1
    assert all(r.score is not None for r in result.probe_results)
    judged = [r for r in openai_stub.requests if rung(r.body) == "json_object_schema"]
    assert len(judged) == len(result.probe_results)
    rows = result.rows()
    assert rows and all(row["truncated"] is True for row in rows)
    assert metrics["llm/answerer/truncated"] == len(rows)


def test_a_job_never_resends_a_request_after_an_invalid_reply(openai_stub):
    def server(body: dict) -> str:
        reply = scripted_reply(body)
        repaired = any(m["role"] == "assistant" for m in body["messages"])
        if "criterionResults" in reply and not repaired:
            return reply.replace('"score": 1', '"score": 9')  # off the scale: invalid
        return reply

    openai_stub.reply = server
    cfg = compose_config(
        [
            *SMALL,
            "probe.per_type=1",
            "judge=local",
            f"judge.endpoint.base_url={openai_stub.base_url}",
        ]
    )
    result = run_job(validate(cfg))
    assert result.probe_results and not any(r.failed for r in result.probe_results)
    assert result.metrics()["llm/judge/failures"] == len(result.probe_results)
    sent = bodies(openai_stub)
    assert len(sent) == 2 * len(result.probe_results) and len(set(sent)) == len(sent)


def test_a_server_that_fails_everything_is_probed_one_rung_down_once(openai_stub):
    openai_stub.reply = lambda body: Fault.status(503)
    client = LLMClient(endpoint(openai_stub, max_retries=0), "judge", UsageLedger())
    for _ in range(3):
        with pytest.raises(LLMError, match="InternalServerError"):
            client.complete(ASK, schema=SCHEMA, parse=parse_x)
    assert rungs(openai_stub) == ["json_schema", "json_object_schema", "json_schema", "json_schema"]
