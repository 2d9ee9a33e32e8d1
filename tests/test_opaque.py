"""Server-side compaction end to end against the loopback stub: the policy, the answerer
continuing through the Responses API, the judge told about the encrypted item, a whole job."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import SMALL, compose_config, run_point, stub_endpoint
from conftest import tool_call as call
from openai_stub import Fault, OpenAIStub, decrypt

from benchmark.answerer import AnswerRequest, LLMAnswerer
from benchmark.answerer.llm import recent
from benchmark.answerer.prompts import ANSWERER_ITEMS_SYSTEM
from benchmark.config.schema import validate
from benchmark.judge import JudgeRequest, LLMJudge
from benchmark.judge.prompts import ENCRYPTED_CONTEXT_NOTE
from benchmark.llm import LLMError, UsageLedger
from benchmark.llm.connect import as_endpoint, connect
from benchmark.llm.native import NativeClient
from benchmark.llm.responses_wire import from_output, provider_of, to_items
from benchmark.policy import Opaque
from benchmark.probe.models import Fact, Gold
from benchmark.run.compaction import Segments, find_points
from benchmark.run.parts import build
from benchmark.run.pipeline import run_job
from benchmark.transcript.models import (
    COMPACTED_PLACEHOLDER,
    Message,
    OpaqueItem,
    Transcript,
)
from benchmark.transcript.synthetic import generate

KEY_ENV = "BENCH_TEST_OPAQUE_KEY"
HEAD, REGION, TAIL, LATER = "hsentinel91c0", "rsentinel3e7d", "tsentinel55af", "lsentinel0b2e"
QUESTION = "Which retry count did the user ask for?"
# Nothing shown to the answerer or the judge may name the method.
BLIND = re.compile(r"opaque", re.I)


def endpoint(stub: OpenAIStub, **kw: Any) -> dict[str, Any]:
    prices = {"price_input_per_1m": 1.0, "price_output_per_1m": 10.0}
    return stub_endpoint(stub, KEY_ENV, **{"model": "gpt-5.2", **prices, "max_retries": 0, **kw})


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")


def session() -> Segments:
    """Head, region and tail; the region's last call is answered in the tail (a crossing span)."""
    head = [
        Message(role="system", content=f"You are a coding agent. {HEAD}"),
        Message(role="user", content=f"Fix the flaky import job. {HEAD}"),
    ]
    region = [
        Message(role="assistant", content="Reading.", tool_calls=[call("r1", "read", path="j.py")]),
        Message(role="tool", tool_call_id="r1", content=f"def run():\n    pass  # {REGION}"),
        Message(role="user", content=f"Keep the retry count at 3. {REGION}"),
        Message(role="assistant", content=f"Noted. {REGION}"),
        Message(role="assistant", content=None, tool_calls=[call("x1", "bash", command="pytest")]),
    ]
    tail = [
        Message(role="tool", tool_call_id="x1", content=f"2 passed {TAIL}"),
        Message(role="assistant", content=f"All green. {TAIL}"),
    ]
    return Segments(head=head, region=region, tail=tail, region_offset=len(head))


def opaque_message(stub: OpenAIStub, **kw: Any) -> Message:
    item = OpaqueItem(
        encrypted_content="enc:W10=",
        item_id="cmp_x",
        provider=stub.base_url,
        model="gpt-5.2",
        tokens=9,
    )
    return Message(role="user", compaction=item.model_copy(update=kw))


# -- the message model and the item conversion ----------------------------------------------


def test_an_encrypted_message_renders_a_neutral_placeholder(openai_stub: OpenAIStub) -> None:
    message = opaque_message(openai_stub)
    assert message.render() == COMPACTED_PLACEHOLDER and not BLIND.search(COMPACTED_PLACEHOLDER)
    assert message.tokens == 9 + 4  # the provider's size plus the per-message overhead
    transcript = Transcript(id="t", source="x", messages=[message])
    assert transcript.message_tokens == [message.tokens]
    for bad in ({"role": "assistant"}, {"content": "text"}):
        with pytest.raises(ValueError, match="compaction"):
            Message(**{"role": "user", "compaction": message.compaction, **bad})
    with pytest.raises(ValueError):
        OpaqueItem(encrypted_content="", provider="p", model="m", tokens=0)
    # Ordinary messages dump (and so hash) exactly as before the field existed.
    plain = Message(role="user", content="hi")
    assert plain.model_dump(exclude_none=True) == {"role": "user", "content": "hi"}


def test_items_round_trip_and_providers(openai_stub: OpenAIStub) -> None:
    messages = [*session().region[:2], opaque_message(openai_stub)]
    items = to_items(messages)
    assert items == [
        {"type": "message", "role": "assistant", "content": "Reading."},
        {"type": "function_call", "call_id": "r1", "name": "read", "arguments": '{"path": "j.py"}'},
        {"type": "function_call_output", "call_id": "r1", "output": messages[1].content},
        {"type": "compaction", "encrypted_content": "enc:W10=", "id": "cmp_x"},
    ]
    back = from_output(items[1:], provider=openai_stub.base_url, model="gpt-5.2", tokens=9)
    assert back[0].tool_calls == messages[0].tool_calls and back[1] == messages[1]
    assert back[2] == messages[2]
    parts = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}
    assert from_output([parts], "p", "m", 0) == [Message(role="user", content="a")]
    with pytest.raises(ValueError, match="reasoning"):
        from_output([{"type": "reasoning"}], "p", "m", 0)
    assert provider_of(as_endpoint({"model": "m"})) == "default"
    assert provider_of(as_endpoint({"model": "m", "base_url": "https://api.openai.com/v1/"})) == (
        "default"
    )
    assert provider_of(as_endpoint({"model": "m", "base_url": "http://h:1/v1/"})) == "http://h:1/v1"


# -- the policy -----------------------------------------------------------------------------


def test_compact_sends_only_the_region_and_keeps_head_and_tail(openai_stub: OpenAIStub) -> None:
    ledger = UsageLedger(keep_calls=True)
    policy = Opaque(endpoint(openai_stub), ledger=ledger)
    seg = session()
    out = policy.compact(seg)

    (request,) = openai_stub.requests
    assert request.path == "/v1/responses/compact"
    sent = json.dumps(request.body)
    assert HEAD not in sent and TAIL not in sent and REGION in sent
    # The call answered in the tail crosses the region's edge: kept verbatim, not sent.
    assert request.body == {"model": "gpt-5.2", "input": to_items(seg.region[:-1])}
    assert out[:2] == seg.head and out[-3:] == [seg.region[-1], *seg.tail]

    kept, item = out[2], out[3]
    assert kept == Message(role="user", content=f"Keep the retry count at 3. {REGION}")
    assert item.role == "user" and item.content is None and item.compaction is not None
    assert item.compaction.provider == openai_stub.base_url and item.compaction.model == "gpt-5.2"
    assert item.compaction.item_id == "cmp_stub_1"
    assert REGION in decrypt(item.compaction.encrypted_content)
    assert len(out) == 2 + 2 + 3

    usage = ledger.roles()["summarizer"]
    assert usage.calls == 1 and usage.failures == 0
    assert item.compaction.tokens == usage.output_tokens == usage.input_tokens // 4 + 1
    assert usage.cost_usd == pytest.approx((usage.input_tokens + 10 * usage.output_tokens) / 1e6)
    (record,) = ledger.calls()
    assert record.api == "responses.compact" and record.role == "summarizer"
    assert record.request == request.body


def test_iterative_replay_sends_the_earlier_item_back(openai_stub: OpenAIStub) -> None:
    policy = Opaque(endpoint(openai_stub))
    seg = session()
    first = policy.compact(seg)
    earlier = first[3]
    assert earlier.compaction is not None
    later = [
        Message(role="user", content=f"Now add a regression test. {LATER}"),
        Message(role="assistant", content=f"Added tests/test_job.py. {LATER}"),
    ]
    # The live context after the first point, split again: the region opens with its output.
    live = Segments(head=seg.head, region=[*first[2:], later[0]], tail=later[1:], region_offset=2)
    second = policy.compact(live)

    body = openai_stub.requests[-1].body
    assert body is not None
    assert {
        "type": "compaction",
        "encrypted_content": earlier.compaction.encrypted_content,
        "id": "cmp_stub_1",
    } in body["input"]
    assert COMPACTED_PLACEHOLDER not in json.dumps(body)  # sent as the item, never rendered
    items = [m for m in second if m.compaction is not None]
    assert len(items) == 1 and items[0].compaction.item_id == "cmp_stub_2"
    carried = decrypt(items[0].compaction.encrypted_content)
    assert REGION in carried and LATER in carried and HEAD not in carried


def test_endpoint_failures_raise(openai_stub: OpenAIStub) -> None:
    ledger = UsageLedger()
    policy = Opaque(endpoint(openai_stub), ledger=ledger)
    openai_stub.queue(Fault.status(500))
    with pytest.raises(LLMError, match="summarizer call to stubbed failed"):
        policy.compact(session())
    assert ledger.roles()["summarizer"].failures == 1
    openai_stub.queue(Fault.empty_choices())  # a compaction response with no output
    with pytest.raises(LLMError, match="returned 0 compaction items"):
        policy.compact(session())


def test_an_empty_region_makes_no_call(openai_stub: OpenAIStub) -> None:
    seg = session()
    bare = Segments(head=seg.head, region=[], tail=seg.tail[1:], region_offset=2)
    assert Opaque(endpoint(openai_stub)).compact(bare) == bare.messages
    assert openai_stub.requests == []


def test_the_client_compacts_messages_and_sends_nothing_for_none(openai_stub: OpenAIStub) -> None:
    _, _, client = connect(endpoint(openai_stub), "summarizer", None, kind=NativeClient)
    silent = [Message(role="assistant", content="")]  # no Responses API item to send
    assert client.compact(silent) == silent and openai_stub.requests == []
    kept = client.compact(session().region[:-1])
    assert [m.compaction is not None for m in kept].count(True) == 1
    assert client.provider == openai_stub.base_url
    client.close()


def test_config_builds_cheaply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = validate(compose_config([*SMALL, "policy=opaque", "answerer=gpt4o"]))
    policy = build(config.policy, "policy", "compact", ledger=UsageLedger())
    assert isinstance(policy, Opaque) and policy.endpoint.model == "gpt-5.2"
    assert policy.provider == "default"


# -- the answerer ---------------------------------------------------------------------------


def test_answerer_continues_through_the_responses_api(openai_stub: OpenAIStub) -> None:
    context = Opaque(endpoint(openai_stub)).compact(session())
    openai_stub.reply = lambda body: "3" if "input" in body else "wrong route"
    ledger = UsageLedger(keep_calls=True)
    answerer = LLMAnswerer(endpoint(openai_stub), ledger=ledger)
    request = AnswerRequest(question=QUESTION, context=context)
    answer = answerer.answer(request)
    assert answer.text == "3" and not answer.failed

    seen = openai_stub.requests[-1]
    assert seen.path == "/v1/responses" and seen.body is not None
    assert seen.body["input"] == answerer.client.input_items(*answerer.resumed(request))
    assert seen.body["instructions"] == ANSWERER_ITEMS_SYSTEM and seen.body["store"] is False
    item = context[3].compaction
    assert item is not None
    assert [i for i in seen.body["input"] if i["type"] == "compaction"] == [
        {"type": "compaction", "encrypted_content": item.encrypted_content, "id": item.item_id}
    ]
    assert seen.body["input"][-1] == {
        "type": "message",
        "role": "user",
        "content": f"Question: {QUESTION}",
    }
    text = json.dumps(seen.body)
    assert COMPACTED_PLACEHOLDER not in text and not BLIND.search(text)
    assert HEAD in text and TAIL in text  # the kept context is sent whole
    assert ledger.roles()["answerer"].calls == 1 and ledger.calls()[-1].api == "responses"


def test_answerer_refuses_an_item_from_another_provider(openai_stub: OpenAIStub) -> None:
    answerer = LLMAnswerer(endpoint(openai_stub, base_url="http://127.0.0.1:9/v1"))
    context = [*session().head, opaque_message(openai_stub)]
    answer = answerer.answer(AnswerRequest(question=QUESTION, context=context))
    assert answer.failed and openai_stub.base_url in (answer.error or "")
    assert "http://127.0.0.1:9/v1" in (answer.error or "")
    assert openai_stub.requests == []


def test_answerer_failure_gives_a_failed_answer(openai_stub: OpenAIStub) -> None:
    answerer = LLMAnswerer(endpoint(openai_stub))
    openai_stub.queue(Fault.status(500))
    context = [*session().head, opaque_message(openai_stub)]
    answer = answerer.answer(AnswerRequest(question=QUESTION, context=context))
    assert answer.failed and "answerer call to stubbed failed" in (answer.error or "")


def test_clipping_keeps_whole_recent_messages() -> None:
    messages = session().messages
    budget = sum(m.tokens for m in messages[-2:])
    # The newest two start on a tool result whose call would be cut off: it goes too.
    assert recent(messages, budget) == messages[-1:]
    assert recent(messages, budget + messages[-3].tokens) == messages[-3:]
    assert recent(messages, 10**6) == messages


# -- the judge ------------------------------------------------------------------------------


def judge_request(context: list[Message], criteria: list[str]) -> JudgeRequest:
    return JudgeRequest(
        probe_question=QUESTION,
        model_response="The retry count stays at 3.",
        compacted_context=context,
        ground_truth=Gold(answer="3", facts=[Fact(kind="detail", text="retry count at 3")]),
        rubric_criteria=criteria,
    )


def scripted(body: dict[str, Any]) -> str:
    """A stand-in model: a short answer on the Responses route, valid grades on chat."""
    if "input" in body:
        return "NOT IN CONTEXT\nscripted guess"
    system = body["messages"][0]["content"]
    if "verdict" in system:
        return json.dumps({"reasoning": "scripted", "verdict": "partial"})
    asked = [c["criterionId"] for c in json.loads(body["messages"][-1]["content"])["criteria"]]
    results = [{"criterionId": c, "score": 2, "reasoning": "scripted"} for c in asked]
    return json.dumps({"criterionResults": results})


@pytest.mark.parametrize(
    ("mode", "criteria"),
    [("rubric", ["accuracy_factual", "recall_correctness"]), ("2_1_0", ["recall_correctness"])],
)
def test_judge_is_told_neutrally_about_the_encrypted_item(
    openai_stub: OpenAIStub, mode: str, criteria: list[str]
) -> None:
    context = Opaque(endpoint(openai_stub)).compact(session())
    openai_stub.reply = scripted
    judge = LLMJudge(endpoint(openai_stub, model="gpt-4o"), mode=mode)  # type: ignore[arg-type]
    assert not judge.judge(judge_request(context, criteria)).failed
    body = openai_stub.requests[-1].body
    assert body is not None and openai_stub.requests[-1].path == "/v1/chat/completions"
    system, user = body["messages"]
    assert system["content"].endswith(ENCRYPTED_CONTEXT_NOTE)
    if mode == "rubric":
        shown = json.loads(user["content"])["data"]["compacted_context"]
        assert COMPACTED_PLACEHOLDER in shown and REGION in shown  # the kept user message
    text = json.dumps(body)
    item = context[3].compaction
    assert item is not None and item.encrypted_content not in text
    assert not BLIND.search(text)
    # A context without an encrypted item gets no note.
    judge.judge(judge_request(session().messages, criteria))
    assert ENCRYPTED_CONTEXT_NOTE not in json.dumps(openai_stub.requests[-1].body)


# -- in the pipeline ------------------------------------------------------------------------


def with_sentinels(t: Transcript, start: int, stop: int, tag: str) -> Transcript:
    msgs = list(t.messages)
    for i in range(start, stop):
        msgs[i] = msgs[i].model_copy(update={"content": f"{msgs[i].content or ''}\n{tag}-{i}"})
    return t.model_copy(update={"messages": msgs})


def stub_overrides(stub: OpenAIStub) -> list[str]:
    return [
        *SMALL,
        "policy=opaque",
        f"policy.endpoint.base_url={stub.base_url}",
        "answerer=gpt4o",
        f"answerer.endpoint.base_url={stub.base_url}",
        "judge=gpt4o",
        f"judge.endpoint.base_url={stub.base_url}",
        "probe.per_type=2",
    ]


def test_point_scoping_and_blinding(openai_stub: OpenAIStub, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.reply = scripted
    config = validate(compose_config(stub_overrides(openai_stub)))
    t = generate(seed=5, target_tokens=30000)
    point = find_points(t, config.compaction)[0]
    t = with_sentinels(t, 0, point.head_end, "HEAD_SENTINEL")
    t = with_sentinels(t, point.head_end, point.tail_start, "REGION_SENTINEL")
    t = with_sentinels(t, point.tail_start, point.end, "TAIL_SENTINEL")
    t = with_sentinels(t, point.end, len(t.messages), "FUTURE_SENTINEL")
    parts = [
        build(config.policy, "policy", "compact"),
        build(config.answerer, "answerer", "answer"),
        build(config.judge, "judge", "judge"),
    ]
    result = run_point(config, t, point, *parts)
    assert result.probes and all(r.score is not None for r in result.probes)
    assert result.tokens_after < point.tokens_before

    by_path: dict[str, list[str]] = {}
    for r in openai_stub.requests:
        by_path.setdefault(r.path, []).append(json.dumps(r.body))
    (compacted,) = by_path["/v1/responses/compact"]
    assert "REGION_SENTINEL" in compacted
    for absent in ("HEAD_SENTINEL", "TAIL_SENTINEL", "FUTURE_SENTINEL"):
        assert absent not in compacted
    assert len(by_path["/v1/responses"]) == len(result.probes)
    for text in [*by_path["/v1/responses"], *by_path["/v1/chat/completions"]]:
        assert "FUTURE_SENTINEL" not in text and not BLIND.search(text)


def test_whole_job_scores_probes(openai_stub: OpenAIStub, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.reply = scripted
    config = validate(compose_config(stub_overrides(openai_stub)))
    result = run_job(config)
    assert len(result.points) >= 2
    scores = result.scores()
    assert scores.n > 0 and scores.overall is not None
    metrics = result.metrics()
    assert metrics["llm/summarizer/calls"] == len(result.points)
    assert metrics["llm/answerer/calls"] == len(result.probe_results)
    for point in result.points:
        assert sum(m.compaction is not None for m in point.context) == 1
    # Iterative replay: the second compaction got the first one's item back as an input item.
    compacts = [r.body for r in openai_stub.requests if r.path == "/v1/responses/compact"]
    first = result.points[0].context
    item = next(m.compaction for m in first if m.compaction is not None)
    assert item is not None
    assert any(
        i.get("encrypted_content") == item.encrypted_content
        for i in compacts[1]["input"]  # type: ignore[index]
    )
