"""The LLM answerer against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import functools
import json

import pytest
from conftest import compose_config, group_options, stub_endpoint
from hydra.utils import instantiate
from omegaconf import OmegaConf
from openai_stub import Fault, OpenAIStub, message_text

from benchmark.answerer import Answer, AnswerRequest, LLMAnswerer
from benchmark.errors import UserError
from benchmark.llm import UsageLedger
from benchmark.text import tokens
from benchmark.transcript.models import Message

KEY_ENV = "BENCH_TEST_ANSWERER_KEY"
SENTINEL = "SENTINEL-dropped-by-compaction-5521"


def endpoint(stub: OpenAIStub, **kw) -> dict:
    return stub_endpoint(stub, KEY_ENV, **kw)


@pytest.fixture
def make_answerer(openai_stub, monkeypatch, stage_on_stub):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    return functools.partial(stage_on_stub, LLMAnswerer, endpoint(openai_stub))


CONTEXT = [
    Message(role="system", content="You are a coding agent."),
    Message(role="user", content="Pin httpx below 0.28 in requirements.txt"),
    Message(role="assistant", content="Pinned httpx==0.27.2."),
]
QUESTION = "Which httpx version did we pin?"


def test_reply_passes_through(openai_stub, make_answerer):
    openai_stub.reply = lambda _: "  httpx==0.27.2\n"
    answerer = make_answerer()
    answer = answerer.answer(AnswerRequest(question=QUESTION, context=CONTEXT))
    assert answer == Answer(text="httpx==0.27.2")
    body = openai_stub.requests[0].body
    assert "response_format" not in body and body["model"] == "gpt-4o-mini"
    usage = answerer.ledger.roles()["answerer"]
    sent = sum(len(message_text(m).split()) for m in body["messages"])
    assert usage.calls == 1 and usage.input_tokens == sent and usage.output_tokens == 1
    assert usage.cost_usd == pytest.approx((sent * 0.15 + 1 * 0.60) / 1e6)


def test_only_question_and_context_reach_the_server(openai_stub, make_answerer):
    """Everything outside the AnswerRequest (the dropped region, the gold) stays local."""
    openai_stub.reply = lambda _: "httpx==0.27.2"
    dropped = Message(role="tool", tool_call_id="t9", content=f"{SENTINEL}: pip freeze output")
    transcript = [*CONTEXT[:2], dropped, CONTEXT[2]]
    kept = [m for m in transcript if m is not dropped]  # what a policy kept
    gold = f"httpx==0.27.2 ({SENTINEL})"
    answerer = make_answerer()
    answerer.answer(AnswerRequest(question=QUESTION, context=kept))
    (received,) = openai_stub.requests
    assert SENTINEL not in json.dumps(received.body) and gold not in json.dumps(received.body)
    system, user = received.body["messages"]
    assert system["role"] == "system" and "NOT IN CONTEXT" in system["content"]
    assert "best guess" in system["content"]
    assert user["role"] == "user"
    # The user message is the context and the question as JSON data, nothing else.
    assert json.loads(user["content"]) == {
        "data": {
            "context": "\n\n".join(f"[{m.role}]\n{m.render()}" for m in kept),
            "question": QUESTION,
        }
    }


def test_context_is_clipped_to_budget_keeping_the_newest(openai_stub, make_answerer):
    openai_stub.reply = lambda _: "ok"
    long = [
        Message(role="assistant", content=f"turn {i}: " + "alpha beta gamma " * 50)
        for i in range(40)
    ]
    answerer = make_answerer(max_context_tokens=500)
    answerer.answer(AnswerRequest(question=QUESTION, context=long))
    user = openai_stub.requests[0].body["messages"][1]["content"]
    shown = json.loads(user)["data"]["context"]
    assert 400 < tokens.count(shown) <= 500
    assert "turn 39:" in shown and "turn 0:" not in shown
    assert answerer.messages(AnswerRequest(question=QUESTION, context=long))[1]["content"] == user


@pytest.mark.parametrize("fault", [Fault.status(500), Fault.status(401), Fault.malformed()])
def test_failure_gives_a_failed_answer(openai_stub, make_answerer, fault):
    openai_stub.reply = lambda _: fault
    answerer = make_answerer(endpoint={"max_retries": 0})
    answer = answerer.answer(AnswerRequest(question=QUESTION, context=CONTEXT))
    assert answer.failed and answer.text == "" and answer.error
    assert "answerer call to stubbed failed" in answer.error
    assert answerer.ledger.roles()["answerer"].failures == 1


def test_missing_key_fails_at_construction(openai_stub, monkeypatch):
    monkeypatch.delenv("BENCH_TEST_ABSENT_KEY", raising=False)
    with pytest.raises(UserError, match="BENCH_TEST_ABSENT_KEY") as info:
        LLMAnswerer(endpoint=endpoint(openai_stub, api_key_env="BENCH_TEST_ABSENT_KEY"))
    assert "answerer" in str(info.value) and "\n" not in str(info.value)


def test_bad_budget_is_rejected(openai_stub, make_answerer):
    with pytest.raises(ValueError, match="max_context_tokens"):
        make_answerer(max_context_tokens=-5)


LLM_OPTIONS = [o for o in group_options("answerer") if o != "extractive"]


def test_llm_options_exist():
    assert set(LLM_OPTIONS) >= {"gpt4o", "gpt4o_mini", "gpt41", "claude", "local"}


@pytest.mark.parametrize("option", LLM_OPTIONS)
def test_every_llm_answerer_option_builds_and_answers(option, openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    cfg = compose_config(
        [f"answerer={option}", f"answerer.endpoint.base_url={openai_stub.base_url}"]
    )
    spec = OmegaConf.to_container(cfg.answerer, resolve=True)
    assert spec.pop("name") == option
    ledger = UsageLedger()
    answerer = instantiate(spec, _convert_="all", ledger=ledger)
    try:
        assert isinstance(answerer, LLMAnswerer) and answerer.endpoint.name == option
        assert answerer.ledger is ledger
        openai_stub.reply = lambda _: "NOT IN CONTEXT\nhttpx==0.27.2"
        answer = answerer.answer(AnswerRequest(question=QUESTION, context=CONTEXT))
        assert answer.text == "NOT IN CONTEXT\nhttpx==0.27.2"
        assert ledger.roles()["answerer"].calls == 1
    finally:
        answerer.close()
