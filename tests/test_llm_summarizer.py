"""The LLM summarizer against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SMALL, compose_config, group_options, stub_endpoint
from hydra.utils import instantiate
from omegaconf import OmegaConf
from openai_stub import Fault, OpenAIStub

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.llm import Endpoint, UsageLedger
from benchmark.policy import AnchoredIterative, Codex, Hermes, Regenerative
from benchmark.run.compaction import CompactionConfig, Segments, find_points, segments
from benchmark.run.pipeline import run_job
from benchmark.summarizer import LLMSummarizer, Summarizer, SummaryRequest
from benchmark.summarizer.prompts import check_reply
from benchmark.text import tokens
from benchmark.transcript.models import Message
from benchmark.transcript.synthetic import generate

KEY_ENV = "BENCH_TEST_SUMMARIZER_KEY"
HEAD = "HEADSENTINEL-7f31"
TAIL = "TAILSENTINEL-c09d"
REGION = "REGIONSENTINEL-a5e2"
SECTIONS = ["Files touched", "Errors and fixes", "Next steps"]
REGION_MESSAGES = [
    Message(role="user", content="Pin httpx below 0.28 in requirements.txt"),
    Message(role="assistant", content="Ran `pip install httpx==0.27.2`; tests pass."),
]


def endpoint(stub: OpenAIStub, **kw) -> dict:
    return stub_endpoint(stub, KEY_ENV, **kw)


def echo_headings(body: dict) -> str:
    """A well-behaved model: every heading the system prompt asks for, one bullet each."""
    system = body["messages"][0]["content"]
    asked = re.findall(r"^## (.+)$", system, re.M)
    return "\n\n".join(f"## {h}\n- httpx==0.27.2 pinned" for h in asked)


def payload(body: dict) -> dict:
    """The JSON the user message carries (all untrusted material is under ``data``)."""
    (user,) = [m for m in body["messages"] if m["role"] == "user"]
    return json.loads(user["content"])


def request(**kw) -> SummaryRequest:
    return SummaryRequest(
        region=kw.pop("region", REGION_MESSAGES), sections=SECTIONS, max_tokens=500, **kw
    )


@pytest.fixture
def make_summarizer(openai_stub, monkeypatch, stage_on_stub):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    openai_stub.reply = echo_headings

    def make(ledger: UsageLedger | None = None, **kw) -> LLMSummarizer:
        return stage_on_stub(LLMSummarizer, endpoint(openai_stub), ledger=ledger, **kw)

    return make


def test_summary_comes_back_and_request_holds_only_the_region(openai_stub, make_summarizer):
    summarizer = make_summarizer()
    assert isinstance(summarizer, Summarizer)
    summary = summarizer.summarize(request())
    assert summary == echo_headings(openai_stub.requests[0].body)
    assert summary.startswith("## Files touched")
    (received,) = openai_stub.requests
    body = received.body
    assert body["model"] == "gpt-4o-mini" and "response_format" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    for heading in SECTIONS:
        assert f"## {heading}" in system["content"]
    assert "500 tokens" in system["content"]
    data = payload(body)
    assert list(data) == ["data"] and list(data["data"]) == ["region"]
    region = data["data"]["region"]
    assert "[user]\nPin httpx below 0.28 in requirements.txt" in region
    assert "pip install httpx==0.27.2" in region
    assert "Pin httpx" not in system["content"]  # untrusted text never in the system role


def test_previous_summary_is_data_and_asks_for_a_merge(openai_stub, make_summarizer):
    previous = "## Files touched\n- requirements.txt (modified)"
    make_summarizer().summarize(request(previous_summary=previous))
    body = openai_stub.requests[0].body
    data = payload(body)["data"]
    assert data["previous_summary"] == previous
    system = body["messages"][0]["content"]
    assert "previous_summary" in system and "Merge" in system
    assert "requirements.txt (modified)" not in system


def test_region_is_clipped_to_its_most_recent_part(openai_stub, make_summarizer):
    old = Message(role="user", content="oldest words " * 400)
    new = Message(role="assistant", content=f"newest statement {REGION}")
    make_summarizer(max_region_tokens=200).summarize(request(region=[old, new]))
    region = payload(openai_stub.requests[0].body)["data"]["region"]
    assert REGION in region and tokens.count(region) <= 200
    assert region.startswith("[user]\n[...] ")  # the old message lost its start
    assert 0 < region.count("oldest words") < 400


def test_reply_is_unwrapped_and_clipped_to_the_budget(openai_stub, make_summarizer):
    body = "## Next steps\n" + "- run the whole suite again\n" * 200
    openai_stub.reply = lambda _: f"```markdown\n{body}```"
    summary = make_summarizer().summarize(request())
    assert summary.startswith("## Next steps") and "```" not in summary
    assert tokens.count(summary) <= 500


def test_invalid_replies_are_retried(openai_stub, make_summarizer):
    replies = iter(["", "Here is a summary without headings.", "## Errors and fixes\n- none"])
    openai_stub.reply = lambda _: next(replies)
    summarizer = make_summarizer()
    assert summarizer.summarize(request()) == "## Errors and fixes\n- none"
    assert len(openai_stub.requests) == 3
    usage = summarizer.ledger.roles()["summarizer"]
    assert usage.calls == 3 and usage.failures == 2


def test_replies_that_never_fit_raise(openai_stub, make_summarizer):
    openai_stub.reply = lambda _: "# Unrelated heading\nprose"
    with pytest.raises(RuntimeError, match="stubbed.*none of the requested headings"):
        make_summarizer().summarize(request())
    assert len(openai_stub.requests) == 5  # the first try and max_retries=4


def test_server_error_on_every_try_raises(openai_stub, make_summarizer):
    openai_stub.reply = lambda _: Fault.status(500, retry_after=0.01)
    with pytest.raises(RuntimeError, match="cannot be compacted.*InternalServerError"):
        make_summarizer().summarize(request())
    assert len(openai_stub.requests) == 5  # the first try and max_retries=4 (Retry-After 0.01 s)


def test_usage_is_recorded_under_the_summarizer_role(openai_stub, make_summarizer):
    ledger = UsageLedger()
    make_summarizer(ledger=ledger).summarize(request())
    usage = ledger.roles()["summarizer"]
    assert usage.calls == 1 and usage.input_tokens > 0 and usage.output_tokens > 0
    expected = (usage.input_tokens * 0.15 + usage.output_tokens * 0.60) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    assert ledger.metrics()["llm/summarizer/calls"] == 1


def test_missing_key_and_bad_options_fail_at_construction(openai_stub, monkeypatch):
    monkeypatch.delenv("BENCH_TEST_ABSENT_KEY", raising=False)
    with pytest.raises(UserError, match="summarizer endpoint.*BENCH_TEST_ABSENT_KEY"):
        LLMSummarizer(endpoint=endpoint(openai_stub, api_key_env="BENCH_TEST_ABSENT_KEY"))
    monkeypatch.setenv(KEY_ENV, "sk-test")
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="max_region_tokens"):
            LLMSummarizer(endpoint=endpoint(openai_stub), max_region_tokens=bad)
    assert openai_stub.requests == []


def test_check_reply_accepts_heading_variants():
    assert check_reply("### next STEPS:\n- go", SECTIONS) == "### next STEPS:\n- go"
    assert check_reply("  **Intro**\n## Files  touched\n- a.py", SECTIONS).endswith("- a.py")
    for bad in ("", "   \n", "Files touched: a.py", "## Other\n- x"):
        with pytest.raises(ValueError):
            check_reply(bad, SECTIONS)


# -- region scoping through every summarizing policy -----------------------------------------


def plant(message: Message, sentinel: str) -> Message:
    return message.model_copy(update={"content": f"{message.content or ''} {sentinel}".strip()})


def planted_segments(whole_tail: bool) -> Segments:
    """A real synthetic session's first compaction point, with sentinels in each segment."""
    transcript = generate(seed=2, target_tokens=40000)
    point = find_points(transcript, CompactionConfig(context_window=24000, tail_tokens=3000))[0]
    seg = segments(transcript, point)
    tail = list(seg.tail)
    for i in range(len(tail)) if whole_tail else [len(tail) - 1]:
        tail[i] = plant(tail[i], TAIL)
    region = [plant(seg.region[0], REGION), *seg.region[1:]]
    return seg.model_copy(
        update={"head": [plant(m, HEAD) for m in seg.head], "region": region, "tail": tail}
    )


POLICIES = [
    (Regenerative, {}, True),
    (AnchoredIterative, {}, True),
    (Codex, {}, True),
    (Hermes, {"tail_tokens": 4000}, False),
    (Hermes, {"tail_tokens": 10000}, False),
]


@pytest.mark.parametrize(
    ("cls", "kwargs", "whole_tail"),
    POLICIES,
    ids=[f"{c.__name__}-{k.get('tail_tokens', '')}" for c, k, _ in POLICIES],
)
def test_region_scoping_tripwire(cls, kwargs, whole_tail, openai_stub, make_summarizer):
    seg = planted_segments(whole_tail)
    assert len(seg.region) > 5 and seg.tail
    out = cls(summarizer=make_summarizer(), **kwargs).compact(seg)
    bodies = [json.dumps(r.body) for r in openai_stub.requests]
    assert bodies, "the policy never called the summarizer"
    assert not any(HEAD in b or TAIL in b for b in bodies)
    assert any(REGION in b for b in bodies)
    rendered = "\n".join(m.render() for m in out)
    assert HEAD in rendered and TAIL in rendered  # kept verbatim, not summarized
    assert "httpx==0.27.2 pinned" in rendered  # the stub's summary took the region's place


# -- configs ------------------------------------------------------------------------------------

LLM_OPTIONS = [o for o in group_options("summarizer") if o != "offline"]
PRICES = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "claude-sonnet-4-20250514": (3.0, 15.0),
}


def test_every_llm_option_is_there():
    assert LLM_OPTIONS == ["claude", "gpt41", "gpt4o", "gpt4o_mini", "local"]


@pytest.mark.parametrize("option", LLM_OPTIONS)
def test_every_llm_option_builds_and_summarizes(option, openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    openai_stub.reply = echo_headings
    overrides = [f"summarizer={option}", f"summarizer.endpoint.base_url={openai_stub.base_url}"]
    spec = OmegaConf.to_container(compose_config(overrides).summarizer, resolve=True)
    assert spec.pop("name") == option
    summarizer = instantiate(spec, _convert_="all", ledger=UsageLedger())
    assert isinstance(summarizer, LLMSummarizer) and isinstance(summarizer.endpoint, Endpoint)
    assert summarizer.endpoint.name == option
    if summarizer.endpoint.model in PRICES:
        prices = (summarizer.endpoint.price_input_per_1m, summarizer.endpoint.price_output_per_1m)
        assert prices == PRICES[summarizer.endpoint.model]
    assert summarizer.summarize(request()).startswith("## Files touched")
    assert summarizer.ledger.roles()["summarizer"].calls == 1


def test_a_small_job_runs_with_an_llm_summarizer(openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_stub.reply = echo_headings
    config = validate(
        compose_config(
            [
                *SMALL,
                "policy=regenerative",
                "summarizer=gpt4o_mini",
                f"summarizer.endpoint.base_url={openai_stub.base_url}",
            ]
        )
    )
    result = run_job(config)
    metrics = result.metrics()
    assert metrics["llm/summarizer/calls"] > 0 and metrics["llm/summarizer/failures"] == 0
    assert metrics["llm/summarizer/calls"] == len(openai_stub.requests)
    assert result.scores().n > 0
