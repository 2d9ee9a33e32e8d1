"""The LLM judge against a scripted OpenAI-compatible server on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import functools
import json

import pytest
import yaml
from conftest import CONF, compose_config, group_options, stub_endpoint
from hydra.utils import instantiate
from omegaconf import OmegaConf
from openai_stub import Fault, OpenAIStub, message_text

from benchmark.errors import UserError
from benchmark.judge import JudgeRequest, Judgment, LLMJudge
from benchmark.judge.llm import parse_rubric
from benchmark.judge.prompts import CRITERIA
from benchmark.llm import Endpoint, UsageLedger
from benchmark.llm.json_reply import extract_json, strict_object
from benchmark.llm.prompting import render_context
from benchmark.probe.models import Fact, Gold
from benchmark.text import tokens
from benchmark.transcript.models import FunctionCall, Message, ToolCall

KEY_ENV = "BENCH_TEST_JUDGE_KEY"
CRITS = ["accuracy_factual", "artifact_key_details", "instruction_format"]
# The name of the policy that produced the context: it must never reach the judge.
POLICY_SENTINEL = "policy-zz-observation-mask-7731"


def endpoint(stub: OpenAIStub, **kw) -> dict:
    prices = {"price_input_per_1m": 2.5, "price_output_per_1m": 10.0}
    return stub_endpoint(stub, KEY_ENV, **{"model": "gpt-4o", **prices, "max_retries": 2, **kw})


@pytest.fixture
def make_judge(openai_stub, monkeypatch, stage_on_stub):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    return functools.partial(stage_on_stub, LLMJudge, endpoint(openai_stub))


def context() -> list[Message]:
    call = ToolCall(id="c1", function=FunctionCall(name="edit", arguments='{"path": "src/db.py"}'))
    return [
        Message(role="user", content="Fix the pool timeout in src/db.py"),
        Message(role="assistant", content="Editing the pool.", tool_calls=[call]),
        Message(role="tool", tool_call_id="c1", content="OK: POOL_TIMEOUT = 30"),
    ]


def request(criteria: list[str] | None = None, scale_max: int = 5) -> JudgeRequest:
    return JudgeRequest(
        probe_question="Which file did we edit, and what value did the timeout get?",
        model_response="We edited src/db.py and set POOL_TIMEOUT = 30.",
        compacted_context=context(),
        ground_truth=Gold(
            answer="src/db.py, POOL_TIMEOUT = 30",
            facts=[Fact(kind="modified", text="src/db.py"), Fact(kind="detail", text="30")],
        ),
        rubric_criteria=criteria or CRITS,
        scale_max=scale_max,
    )


def reply(scores: dict[str, object]) -> str:
    return json.dumps(
        {
            "criterionResults": [
                {"criterionId": c, "score": s, "reasoning": f"why {c}"} for c, s in scores.items()
            ]
        }
    )


def formats(stub: OpenAIStub) -> list[str | None]:
    return [(r.body or {}).get("response_format", {}).get("type") for r in stub.requests]


def test_valid_reply_gives_scores_in_request_order(openai_stub, make_judge):
    openai_stub.reply = lambda body: reply(
        {"instruction_format": 5, "accuracy_factual": 4, "artifact_key_details": 3.5}
    )
    judgment = make_judge().judge(request())
    assert not judgment.failed
    assert [r.criterion for r in judgment.results] == CRITS
    assert judgment.scores() == {
        "accuracy_factual": 4,
        "artifact_key_details": 3.5,
        "instruction_format": 5,
    }
    assert judgment.results[0].reasoning == "why accuracy_factual"
    assert formats(openai_stub) == ["json_schema"]
    schema = openai_stub.requests[0].body["response_format"]["json_schema"]["schema"]
    item = schema["properties"]["criterionResults"]["items"]["properties"]
    assert item["criterionId"]["enum"] == CRITS and item["score"]["maximum"] == 5


def test_fenced_json_amid_prose_is_accepted(openai_stub, make_judge):
    body = reply({c: 2 for c in CRITS})
    openai_stub.reply = lambda _: f"Here is my grading.\n```json\n{body}\n```\nDone."
    assert make_judge().judge(request()).scores() == {c: 2 for c in CRITS}
    assert len(openai_stub.requests) == 1


def test_object_surrounded_by_text_is_extracted():
    text = 'Scores follow {"criterionResults": [{"criterionId": "x", "score": 1}]} thanks {}'
    assert extract_json(text)["criterionResults"][0]["score"] == 1
    with pytest.raises(ValueError, match="not a JSON object"):
        extract_json("no json here [1, 2]")


def test_strict_object_requires_every_property_and_nothing_else():
    schema = strict_object({"b": {"type": "string"}, "a": {"type": "integer"}})
    assert schema == {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
        "required": ["b", "a"],
        "additionalProperties": False,
    }


def test_server_rejecting_json_schema_falls_back_to_json_object(openai_stub, make_judge):
    openai_stub.json_schema = "reject"
    openai_stub.reply = lambda _: reply({c: 3 for c in CRITS})
    judge = make_judge()
    assert judge.judge(request()).scores() == {c: 3 for c in CRITS}
    assert formats(openai_stub) == ["json_schema", "json_object"]
    judge.judge(request())  # the client remembers what worked
    assert formats(openai_stub) == ["json_schema", "json_object", "json_object"]


def test_malformed_reply_is_retried(openai_stub, make_judge):
    replies = iter(["I think it is fine, 4/5 overall.", reply({c: 4 for c in CRITS})])
    openai_stub.reply = lambda _: next(replies)
    judge = make_judge()
    judgment = judge.judge(request())
    assert not judgment.failed and judgment.scores() == {c: 4 for c in CRITS}
    assert len(openai_stub.requests) == 2
    assert judgment.record["raw_outputs"][0].startswith("I think")
    assert judge.ledger.roles()["judge"].failures == 1


@pytest.mark.parametrize("bad", [7, 12345, -1, "4", None, True])
def test_off_scale_scores_every_try_fail_the_judgment(openai_stub, make_judge, bad):
    openai_stub.reply = lambda _: reply({**{c: 3 for c in CRITS}, "accuracy_factual": bad})
    judgment = make_judge().judge(request())
    assert judgment.failed and judgment.results == []
    assert "accuracy_factual" in judgment.error and "3 tries" in judgment.error
    assert len(openai_stub.requests) == 3  # max_retries=2


def test_missing_criterion_is_retried_and_unknown_ones_ignored(openai_stub, make_judge):
    replies = iter(
        [
            reply({"accuracy_factual": 5, "artifact_key_details": 5}),
            reply({**{c: 1 for c in CRITS}, "made_up_criterion": 99}),
        ]
    )
    openai_stub.reply = lambda _: next(replies)
    judge = make_judge()
    judgment = judge.judge(request())
    assert judgment.scores() == {c: 1 for c in CRITS}
    assert len(openai_stub.requests) == 2
    assert len(judgment.record["raw_outputs"]) == 2


def test_missing_criterion_on_every_try_fails():
    with pytest.raises(ValueError, match="lacks criteria"):
        parse_rubric(reply({"accuracy_factual": 5}), CRITS, 5)


def test_transport_failure_is_a_failed_judgment(openai_stub, make_judge):
    openai_stub.reply = lambda _: Fault.status(500)
    judge = make_judge(endpoint={"max_retries": 0})
    judgment = judge.judge(request())
    assert judgment.failed and "500" in judgment.error
    assert judgment.record["failed"] and judgment.record["scores"] == {}


def test_usage_and_cost_recorded_per_role(openai_stub, make_judge):
    openai_stub.reply = lambda _: reply({c: 5 for c in CRITS})
    ledger = UsageLedger()
    judge = make_judge(ledger=ledger)
    assert judge.ledger is ledger
    judge.judge(request())
    judge.judge(request())
    usage = ledger.roles()["judge"]
    # The stub counts whitespace-separated words as tokens.
    sent = sum(len(message_text(m).split()) for m in openai_stub.requests[0].body["messages"])
    got = len(reply({c: 5 for c in CRITS}).split())
    assert usage.calls == 2 and usage.failures == 0
    assert usage.input_tokens == 2 * sent and usage.output_tokens == 2 * got
    assert usage.cost_usd == pytest.approx(2 * (sent * 2.5 + got * 10.0) / 1e6)
    assert ledger.metrics()["llm/judge/cost_usd"] == pytest.approx(usage.cost_usd)


def test_judge_input_is_blind_and_recorded(openai_stub, make_judge):
    openai_stub.reply = lambda _: reply({c: 5 for c in CRITS})
    results_by_policy = {POLICY_SENTINEL: request()}  # what a pipeline might hold
    judge = make_judge()
    judgment = judge.judge(results_by_policy[POLICY_SENTINEL])
    wire = json.dumps([r.body for r in openai_stub.requests])
    assert POLICY_SENTINEL not in wire
    record = judgment.record
    assert POLICY_SENTINEL not in json.dumps(record)
    # The record holds exactly what was sent and what came back.
    assert record["messages"] == openai_stub.requests[0].body["messages"]
    assert record["raw_outputs"] == [reply({c: 5 for c in CRITS})]
    assert record["scores"] == {c: 5 for c in CRITS} and record["error"] is None
    # Everything the judge needs is in the user message, as JSON data.
    payload = json.loads(record["messages"][1]["content"])
    data = payload["data"]
    assert data["model_response"] == request().model_response
    assert data["ground_truth"]["answer"] == "src/db.py, POOL_TIMEOUT = 30"
    assert "[tool result c1]\nOK: POOL_TIMEOUT = 30" in data["compacted_context"]
    assert '[tool call edit] {"path": "src/db.py"}' in data["compacted_context"]
    assert [c["criterionId"] for c in payload["criteria"]] == CRITS
    assert payload["criteria"][0]["score_guide"].keys() == {"0", "3", "5"}
    assert "0 to 5" in record["messages"][0]["content"]


def test_judge_context_is_clipped_to_its_budget(openai_stub, make_judge):
    openai_stub.reply = lambda _: reply({c: 5 for c in CRITS})
    long = [Message(role="user", content=f"note {i}: " + "lorem ipsum " * 40) for i in range(50)]
    judge = make_judge(max_context_tokens=300)
    judgment = judge.judge(request().model_copy(update={"compacted_context": long}))
    shown = json.loads(judgment.record["messages"][1]["content"])["data"]["compacted_context"]
    assert tokens.count(shown) <= 300
    assert "note 49:" in shown and "note 0:" not in shown


def test_render_context_keeps_the_most_recent_part():
    msgs = [Message(role="assistant", content=f"step {i} " + "x y z " * 30) for i in range(20)]
    full = render_context(msgs, 10**6)
    assert full.startswith("[assistant]\nstep 0 ")
    for budget in (1, 7, 50, 333):
        clipped = render_context(msgs, budget)
        assert tokens.count(clipped) <= budget
        assert full.endswith(clipped[-20:])
    clipped = render_context(msgs, 333)
    assert "step 19" in clipped and "step 0 " not in clipped
    assert "[...]" in clipped  # the oldest message kept is cut at its start
    assert render_context([], 100) == ""


def test_2_1_0_mode_gives_one_verdict(openai_stub, make_judge):
    replies = iter(["maybe", '{"reasoning": "file right, value missing", "verdict": "partial"}'])
    openai_stub.reply = lambda _: next(replies)
    judge = make_judge(mode="2_1_0")
    assert set(judge.CRITERIA) == {"recall_correctness"}
    assert set(LLMJudge.CRITERIA) == set(CRITERIA)
    judgment = judge.judge(request(["recall_correctness"], scale_max=2))
    assert judgment.scores() == {"recall_correctness": 1.0}
    assert judgment.results[0].reasoning == "file right, value missing"
    body = openai_stub.requests[-1].body
    assert body["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"] == [
        "correct",
        "partial",
        "wrong",
    ]
    data = json.loads(body["messages"][1]["content"])["data"]
    assert "compacted_context" not in data and data["ground_truth"]["facts"]
    openai_stub.reply = lambda _: '{"reasoning": "exact", "verdict": "correct"}'
    assert judge.judge(request(["recall_correctness"], 2)).scores() == {"recall_correctness": 2}
    openai_stub.reply = lambda _: '{"reasoning": "no", "verdict": "WRONG"}'
    assert judge.judge(request(["recall_correctness"], 2)).scores() == {"recall_correctness": 0}


def test_2_1_0_mode_rejects_other_criteria(openai_stub, make_judge):
    judge = make_judge(mode="2_1_0")
    with pytest.raises(ValueError, match=r"2_1_0.*recall_correctness.*accuracy_factual"):
        judge.judge(request())
    assert openai_stub.requests == []


def test_bad_arguments_and_unknown_criteria(openai_stub, make_judge):
    with pytest.raises(ValueError, match="mode"):
        make_judge(mode="pairwise")
    with pytest.raises(ValueError, match="max_context_tokens"):
        make_judge(max_context_tokens=0)
    with pytest.raises(ValueError, match="unknown criterion 'vibes'"):
        make_judge().judge(request(["vibes"]))


def test_missing_key_fails_at_construction(openai_stub, monkeypatch):
    monkeypatch.delenv("BENCH_TEST_ABSENT_KEY", raising=False)
    with pytest.raises(UserError, match="BENCH_TEST_ABSENT_KEY") as info:
        LLMJudge(endpoint=endpoint(openai_stub, api_key_env="BENCH_TEST_ABSENT_KEY"))
    assert "\n" not in str(info.value)


# Single LLM judges (panels of them are tested in test_judge_panel.py).
LLM_OPTIONS = [
    o
    for o in group_options("judge")
    if yaml.safe_load((CONF / "judge" / f"{o}.yaml").read_text()).get("_target_")
    == "benchmark.judge.LLMJudge"
]
PRICES = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "claude-sonnet-4-20250514": (3.0, 15.0),
}


@pytest.mark.parametrize("option", LLM_OPTIONS)
def test_every_llm_judge_option_builds_and_judges(option, openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    cfg = compose_config([f"judge={option}", f"judge.endpoint.base_url={openai_stub.base_url}"])
    spec = OmegaConf.to_container(cfg.judge, resolve=True)
    assert spec.pop("name") == option
    judge = instantiate(spec, _convert_="all", ledger=UsageLedger())
    try:
        assert isinstance(judge, LLMJudge) and isinstance(judge.endpoint, Endpoint)
        assert judge.endpoint.name in group_options("endpoint")  # conf/endpoint/<name>.yaml
        if judge.endpoint.model in PRICES:
            prices = (judge.endpoint.price_input_per_1m, judge.endpoint.price_output_per_1m)
            assert prices == PRICES[judge.endpoint.model]
        if judge.mode == "2_1_0":
            openai_stub.reply = lambda _: '{"reasoning": "ok", "verdict": "correct"}'
            judgment = judge.judge(request(["recall_correctness"], 2))
        else:
            openai_stub.reply = lambda _: reply({c: 4 for c in CRITS})
            judgment = judge.judge(request())
        assert isinstance(judgment, Judgment) and not judgment.failed
        assert judge.ledger.roles()["judge"].calls == 1
    finally:
        judge.close()


def test_option_defaults(monkeypatch):
    monkeypatch.delenv("LOCAL_LLM_BASE_URL", raising=False)
    claude = compose_config(["judge=claude"]).judge.endpoint
    assert claude.base_url == "https://api.anthropic.com/v1/"
    assert claude.api_key_env == "ANTHROPIC_API_KEY"
    local = OmegaConf.to_container(compose_config(["judge=local"]).judge.endpoint, resolve=True)
    assert local["api_key_env"] is None and local["structured_output"] == "json_schema"
    assert local["base_url"] == "http://localhost:8000/v1"
    monkeypatch.setenv("LOCAL_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    local = OmegaConf.to_container(compose_config(["judge=local"]).judge.endpoint, resolve=True)
    assert local["base_url"] == "http://127.0.0.1:11434/v1"
    assert compose_config(["judge=gpt4o_2_1_0"]).judge.mode == "2_1_0"


def test_2_1_0_mode_from_an_unquoted_override(openai_stub, make_judge):
    cfg = compose_config(["judge=gpt4o", "judge.mode=2_1_0"])
    mode = OmegaConf.to_container(cfg.judge)["mode"]
    assert make_judge(mode=mode).mode == "2_1_0"
