"""Every LLM role fits its whole request into the endpoint's ``context_window``."""

from __future__ import annotations

import json

import pytest
from conftest import SMALL, compose_config

from benchmark.answerer import prompts as answerer_prompts
from benchmark.answerer.base import AnswerRequest
from benchmark.answerer.llm import LLMAnswerer
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.judge import prompts
from benchmark.judge.base import JudgeRequest
from benchmark.judge.llm import LLMJudge, rubric_schema
from benchmark.llm import UsageLedger
from benchmark.llm.budget import chat_tokens, padded
from benchmark.llm.prompting import render_context
from benchmark.llm.window import prompt_room
from benchmark.policy.summarizing import REGENERATIVE_SECTIONS
from benchmark.probe.models import Fact, Gold
from benchmark.probe.writer import LLMProbeWriter
from benchmark.probe.writer_prompts import reply_schema, writer_messages
from benchmark.run.parts import build_parts
from benchmark.run.pipeline import run_job
from benchmark.stub import scripted_reply
from benchmark.summarizer import prompts as summary_prompts
from benchmark.summarizer.base import SummaryRequest
from benchmark.summarizer.llm import LLMSummarizer
from benchmark.text import tokens
from benchmark.transcript.models import Message

CRITERIA = list(prompts.CRITERIA)[:14]


def endpoint(base_url: str, window: int | None, max_tokens: int = 256) -> dict:
    return {
        "name": "small",
        "model": "small-model",
        "base_url": base_url,
        "api_key_env": None,
        "max_tokens": max_tokens,
        "max_retries": 0,
        "context_window": window,
    }


def session(n: int, words: int = 120) -> list[Message]:
    """``n`` messages of distinct text, quotes and newlines included (JSON escaping costs)."""
    roles = ["user", "assistant"]
    return [
        Message(
            role=roles[i % 2],
            content=f'step {i}: edited "src/mod_{i}.py"\n'
            + " ".join(f"tok{i}_{j}" for j in range(words)),
        )
        for i in range(n)
    ]


def assert_all_fit(bodies: list[dict], window: int) -> None:
    """Each body as received, counted in cl100k with the margin, plus its reply, fits."""
    assert bodies
    for body in bodies:
        assert padded(chat_tokens(body["messages"])) + body["max_tokens"] <= window


def judge_request(context: list[Message], answer_words: int = 40) -> JudgeRequest:
    return JudgeRequest(
        probe_question="Which file was edited last?",
        model_response="word " * answer_words,
        compacted_context=context,
        ground_truth=Gold(
            answer="src/mod_59.py", facts=[Fact(kind="modified", text="src/mod_59.py")]
        ),
        rubric_criteria=CRITERIA,
    )


def test_every_role_fits_a_small_window_and_counts_its_clips(openai_stub, caplog):
    openai_stub.reply = scripted_reply
    window = 3000
    ledger = UsageLedger()
    context = session(60)  # ~9K tokens: far over the window
    ep = endpoint(openai_stub.base_url, window)
    answerer = LLMAnswerer(ep, ledger=ledger)
    judge = LLMJudge(ep, ledger=ledger)
    summarizer = LLMSummarizer(ep, ledger=ledger)
    writer = LLMProbeWriter(ep, ledger=ledger)

    answer = answerer.answer(AnswerRequest(question="Which file was edited last?", context=context))
    judgment = judge.judge(judge_request(context))
    summary = summarizer.summarize(
        SummaryRequest(region=context, sections=["Goal", "Files"], max_tokens=200)
    )
    written = writer.write(context, 10, ["recall"], 1)

    assert not answer.failed and not judgment.failed and "## Files" in summary
    assert_all_fit([r.body for r in openai_stub.requests], window)
    # The newest part is kept: the last message is in every prompt, the first in none.
    for request in openai_stub.requests:
        text = request.body["messages"][-1]["content"]
        assert "tok59_" in text and "tok0_" not in text
    m = ledger.metrics()
    for role in ("answerer", "judge", "summarizer", "probe_writer"):
        assert m[f"llm/{role}/clipped"] == 1 and m[f"llm/{role}/clipped_tokens"] > 1000
        assert m[f"llm/{role}/too_long"] == 0
    told = [r.getMessage() for r in caplog.records if r.name == "benchmark.llm.window"]
    assert len(told) == 4 and all("context_window=3000" in line for line in told)
    # The writer showed only the newest messages; its evidence indices are absolute.
    (candidate,) = written.candidates
    (evidence,) = candidate.evidence
    assert evidence.message_index > 10 + 30
    assert evidence.quote in context[evidence.message_index - 10].render()


def test_a_prompt_too_big_for_the_window_is_not_sent(openai_stub):
    ledger = UsageLedger()
    ep = endpoint(openai_stub.base_url, window=900, max_tokens=512)
    answerer = LLMAnswerer(ep, ledger=ledger)
    judge = LLMJudge(ep, ledger=ledger)
    summarizer = LLMSummarizer(ep, ledger=ledger)

    answer = answerer.answer(AnswerRequest(question="Which file?", context=session(3)))
    judgment = judge.judge(judge_request(session(3)))
    with pytest.raises(RuntimeError) as summary_error:
        summarizer.summarize(SummaryRequest(region=session(3), sections=["Goal"], max_tokens=100))

    assert not openai_stub.requests
    for error in (answer.error, judgment.error, str(summary_error.value)):
        assert error is not None and "\n" not in error
        assert "not sent" in error and "context_window=900" in error and "max_tokens=512" in error
    m = ledger.metrics()
    for role in ("answerer", "judge", "summarizer"):
        assert m[f"llm/{role}/too_long"] == m[f"llm/{role}/failures"] == 1
        assert m[f"llm/{role}/calls"] == 0


def test_the_tighter_of_max_context_tokens_and_the_window_wins(openai_stub):
    ledger = UsageLedger()
    context = session(60)
    question = "Which file was edited last?"
    capped = LLMAnswerer(endpoint(openai_stub.base_url, 100_000), max_context_tokens=300)
    unbounded = LLMAnswerer(endpoint(openai_stub.base_url, None), max_context_tokens=300)
    wide = LLMAnswerer(endpoint(openai_stub.base_url, 100_000), ledger=ledger)

    request = AnswerRequest(question=question, context=context)
    expected = answerer_prompts.answerer_messages(question, render_context(context, 300))
    assert capped.messages(request) == unbounded.messages(request) == expected
    assert wide.messages(request) == answerer_prompts.answerer_messages(
        question, render_context(context, 60_000)
    )
    assert ledger.metrics().get("llm/answerer/clipped", 0) == 0


def test_a_window_without_room_for_the_reply_is_a_config_error():
    cfg = compose_config(
        [
            *SMALL,
            "judge=local",
            "judge.endpoint.context_window=1000",
            "judge.endpoint.max_tokens=1024",
        ]
    )
    with pytest.raises(UserError, match=r"judge.endpoint'.*context_window \(1000\)"):
        validate(cfg)


ALL_LOCAL = ["judge=local", "answerer=local", "summarizer=local", "policy=hermes"]


def local_roles() -> dict[str, object]:
    """Each LLM role as the shipped local configs build it (real composition and parts)."""
    parts = build_parts(validate(compose_config([*SMALL, *ALL_LOCAL, "probe=llm_local"])))
    panel = build_parts(validate(compose_config([*SMALL, "judge=panel_local"])))
    return {
        "judge": parts.judge,
        "answerer": parts.answerer,
        "summarizer": parts.policy.summarizer,
        "probe_writer": parts.writer,
        "panel member": panel.judge.members["local"],
    }


def test_local_configs_fit_an_8k_server_with_room_for_context():
    """As shipped: one at a time, an 8K window, and after the fixed prompt (with a
    full-length answer or previous summary in it) and the reply, thousands of context tokens."""
    probe = compose_config([*SMALL, "probe=llm_local"]).probe
    for name, role in local_roles().items():
        ep = role.endpoint
        assert (ep.context_window, ep.max_concurrency) == (8192, 1), name
        assert ep.max_tokens <= 1536, name
        if isinstance(role, LLMJudge):
            request = judge_request([], answer_words=512)  # the local answerer's longest reply
            fixed = chat_tokens(prompts.rubric_messages(request, "", CRITERIA))
            fixed += tokens.count(json.dumps(rubric_schema(CRITERIA, 5)))
        elif isinstance(role, LLMAnswerer):
            fixed = chat_tokens(
                answerer_prompts.answerer_messages("Which file was edited last?", "")
            )
        elif isinstance(role, LLMSummarizer):
            previous = "word " * ep.max_tokens  # an earlier summary as long as a reply can be
            sections = list(REGENERATIVE_SECTIONS)  # the longest list of headings
            fixed = chat_tokens(summary_prompts.messages("", sections, ep.max_tokens, previous))
        else:
            types = list(probe.types)
            fixed = chat_tokens(writer_messages([], types, probe.per_type))
            fixed += tokens.count(json.dumps(reply_schema(types)))
        room = prompt_room(ep)
        assert room is not None and room - fixed >= 3000, (name, room, fixed)
        assert padded(room) + ep.max_tokens <= 8192 + 1


def test_a_job_with_every_local_role_sends_nothing_over_the_window(openai_stub):
    """judge=local answerer=local summarizer=local probe=llm_local on the stub, as shipped
    (8K window, concurrency 1): every request fits, the clips are counted."""
    openai_stub.reply = scripted_reply
    overrides = [*SMALL, "probe.per_type=1", "execution.progress=off"]
    for group, option, key in (
        ("judge", "local", "judge"),
        ("answerer", "local", "answerer"),
        ("summarizer", "local", "summarizer"),
        ("probe", "llm_local", "probe.writer"),
    ):
        overrides += [f"{group}={option}", f"{key}.endpoint.base_url={openai_stub.base_url}"]
    result = run_job(validate(compose_config([*overrides, "policy=hermes"])))

    assert result.probe_results and not any(r.failed for r in result.probe_results)
    assert_all_fit([r.body for r in openai_stub.requests], 8192)
    roles = {"judge", "answerer", "summarizer", "probe_writer"}
    assert all(result.usage[f"llm/{role}/calls"] > 0 for role in roles)
    assert result.usage["llm/clipped"] > 0 and result.usage["llm/too_long"] == 0
