"""The LLM probe writer against a loopback OpenAI-compatible stub: verification, cache, privacy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import call_message, compose_config, result_message
from openai_stub import message_text

from benchmark.config.schema import validate
from benchmark.llm import Endpoint, LLMError, UsageLedger
from benchmark.probe.config import ProbeConfig
from benchmark.probe.set_cache import cache_key, load_or_generate, writer_cache_key
from benchmark.probe.writer import LLMProbeWriter, build_writer, check, write_probes
from benchmark.probe.writer_prompts import CLIP_MARK, render_region
from benchmark.run.compaction import CompactionConfig, CompactionPoint, find_points
from benchmark.run.storage import PROBE_DIR, entry_path
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.synthetic import generate

MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the importer tolerate blank lines."},
    {"role": "assistant", "content": "Running the importer first to see the failure."},
    {"role": "tool", "tool_call_id": "a", "content": "ValueError: empty row at line 12"},
    {"role": "assistant", "content": "I'll add skip_blank_rows to src/importer/rows.py."},
    {"role": "tool", "tool_call_id": "b", "content": "wrote src/importer/rows.py"},
    {
        "role": "assistant",
        "content": "We'll use a generator instead of a list because the files are large.",
    },
    {"role": "user", "content": "ok"},
]
POINT = CompactionPoint(
    transcript_id="t1", ordinal=1, head_end=2, tail_start=7, end=8, tokens_before=0
)
CONFIG = ProbeConfig(types=["recall", "decision"], per_type=2)


def _transcript() -> Transcript:
    return Transcript(id="t1", source="mem", messages=[Message.model_validate(m) for m in MESSAGES])


def _probe(
    ptype="recall",
    question="What error did the importer raise first?",
    quote="ValueError: empty row at line 12",
    index=1,
    facts=None,
    answer="The error.",
):
    facts = facts if facts is not None else [{"kind": "detail", "text": "empty row at line 12"}]
    return {
        "type": ptype,
        "question": question,
        "gold_answer": answer,
        "facts": facts,
        "evidence_quote": quote,
        "message_index": index,
    }


def _serve(stub, *probes) -> None:
    stub.reply = lambda body: json.dumps({"probes": list(probes)})


@pytest.fixture
def writer(openai_stub, monkeypatch) -> LLMProbeWriter:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    endpoint = Endpoint(name="w", model="gpt-4o", base_url=openai_stub.base_url, max_retries=2)
    return LLMProbeWriter(endpoint, ledger=UsageLedger())


def test_valid_probes_come_through_with_absolute_evidence(openai_stub, writer):
    decision = _probe(
        "decision",
        "Why did we pick a generator for the rows?",
        "because the files are large",
        4,
        [
            {"kind": "rationale", "text": "the files are large"},
            {"kind": "alternative", "text": "a list"},
        ],
        "Large files.",
    )
    _serve(openai_stub, _probe(), decision)
    probes, result = write_probes(_transcript(), POINT, CONFIG, writer)
    assert result.dropped == 0 and result.reasons == {}
    assert [p.id for p in probes] == ["t1/p1/recall/0", "t1/p1/decision/0"]
    recall, chosen = probes
    assert recall.evidence[0].message_index == 3 and recall.position == 0.25
    assert chosen.evidence[0].message_index == 6 and chosen.position == 1.0
    assert [f.kind for f in chosen.gold.facts] == ["rationale", "alternative"]
    assert recall.transcript_id == "t1" and recall.point == 1
    body = openai_stub.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["probes"]["items"]["properties"]["type"]["enum"] == [
        "recall",
        "decision",
    ]
    system, user = body["messages"]
    assert system["role"] == "system" and "ValueError" not in system["content"]
    shown = json.loads(user["content"])["data"]["messages"]
    assert [m["index"] for m in shown] == [0, 1, 2, 3, 4]
    assert writer.ledger.roles()["probe_writer"].calls == 1


def test_invented_quote_is_dropped_and_a_wrong_index_is_corrected(openai_stub, writer):
    invented = _probe(question="What did the linter say?", quote="E501 line too long")
    misplaced = _probe(index=0)  # the quote is in region message 1, not 0
    _serve(openai_stub, invented, misplaced)
    probes, result = write_probes(_transcript(), POINT, CONFIG, writer)
    assert result.dropped == 1 and result.reasons == {"quote_not_found": 1}
    assert [p.evidence[0].message_index for p in probes] == [3]
    assert writer.dropped == 1


def test_a_summary_already_in_the_log_is_no_source(openai_stub, writer):
    """The writer is shown a summary empty, and a probe quoting it is dropped."""
    summary = "This session is being continued from a previous conversation: KeyError: 'sku'"
    messages = [*MESSAGES[:4], {"role": "user", "content": summary, "summary": True}]
    transcript = Transcript(
        id="t1",
        source="mem",
        messages=[*map(Message.model_validate, messages), *_transcript().messages[5:]],
    )
    quoting = _probe(
        question="What error was seen earlier?",
        quote="KeyError: 'sku'",
        index=2,
        facts=[{"kind": "detail", "text": "KeyError: 'sku'"}],
    )
    _serve(openai_stub, quoting, _probe())
    probes, result = write_probes(transcript, POINT, CONFIG, writer)
    assert result.reasons == {"quote_not_found": 1}
    assert [p.evidence[0].message_index for p in probes] == [3]
    shown = json.loads(openai_stub.requests[0].body["messages"][1]["content"])["data"]["messages"]
    assert shown[2] == {"index": 2, "role": "user", "text": ""}


def test_facts_not_in_the_region_are_dropped(openai_stub, writer):
    partly = _probe(
        facts=[
            {"kind": "detail", "text": "empty row at line 12"},
            {"kind": "identifier", "text": "ImportError"},
            {"kind": "identifier", "text": "You are a coding agent"},
        ]
    )  # head
    invented = _probe(
        question="Which version did we pin?",
        facts=[{"kind": "identifier", "text": "pandas==2.2.1"}],
    )
    _serve(openai_stub, partly, invented)
    probes, result = write_probes(_transcript(), POINT, CONFIG, writer)
    assert [[f.text for f in p.gold.facts] for p in probes] == [["empty row at line 12"]]
    assert result.reasons == {"no_verified_facts": 1} and result.facts_dropped == 3


def test_fact_found_elsewhere_gets_its_own_evidence(openai_stub, writer):
    both = _probe(
        facts=[
            {"kind": "detail", "text": "empty row at line 12"},
            {"kind": "identifier", "text": "skip_blank_rows"},
        ]
    )
    _serve(openai_stub, both)
    (probe,), _ = write_probes(_transcript(), POINT, CONFIG, writer)
    assert [e.message_index for e in probe.evidence] == [3, 4]
    assert "skip_blank_rows" in probe.evidence[1].quote


def test_question_leaking_its_fact_is_dropped(openai_stub, writer):
    _serve(openai_stub, _probe(question="Where did EMPTY ROW AT LINE 12 come from?"))
    probes, result = write_probes(_transcript(), POINT, CONFIG, writer)
    assert probes == [] and result.reasons == {"fact_in_question": 1}


def test_per_type_cap_duplicates_and_unrequested_types():
    texts = ["alpha beta", "gamma delta", "epsilon zeta"]
    items = [
        _probe(
            question=f"Question {n}?", quote=word, index=9, facts=[{"kind": "weird", "text": word}]
        )
        for n, word in enumerate(["alpha", "gamma", "epsilon"])
    ]
    items += [items[0], _probe("artifact", quote="alpha", facts=[{"kind": "read", "text": "beta"}])]
    result = check(items, texts, 10, ["recall"], per_type=2)
    assert [c.question for c in result.candidates] == ["Question 0?", "Question 1?"]
    assert [c.anchor for c in result.candidates] == [10, 11]
    assert result.candidates[0].facts[0].kind == "detail"  # unknown kind, verbatim text kept
    assert result.capped == 1
    assert result.reasons == {"duplicate": 1, "unrequested_type": 1} and result.dropped == 2


def test_invalid_json_is_retried(openai_stub, writer):
    replies = iter(
        ["Sure! Here are the probes:", '{"questions": []}', json.dumps({"probes": [_probe()]})]
    )
    openai_stub.reply = lambda body: next(replies)
    probes, _ = write_probes(_transcript(), POINT, CONFIG, writer)
    assert len(probes) == 1 and len(openai_stub.requests) == 3
    assert writer.ledger.roles()["probe_writer"].failures == 2
    openai_stub.reply = lambda body: "never JSON"
    with pytest.raises(LLMError, match="invalid reply"):
        write_probes(_transcript(), POINT, CONFIG, writer)


def test_cache_hit_makes_no_calls_and_the_key_follows_the_model(
    openai_stub, writer, tmp_path: Path
):
    _serve(openai_stub, _probe(), _probe(question="Invented?", quote="nowhere"))
    transcript = _transcript()
    first = load_or_generate(transcript, POINT, CONFIG, tmp_path, writer=writer)
    assert len(openai_stub.requests) == 1 and writer.dropped == 1
    again = load_or_generate(transcript, POINT, CONFIG, tmp_path, writer=writer)
    assert again == first and len(openai_stub.requests) == 1
    assert writer.dropped == 2  # the hit reports the stored count: reruns log the same figure
    key = writer_cache_key(transcript, POINT, CONFIG, writer)
    stored = json.loads(entry_path(tmp_path, PROBE_DIR, key).read_text())
    assert stored["dropped"] == 1 and stored["writer"]["model"] == "gpt-4o"
    other = LLMProbeWriter(writer.endpoint.model_copy(update={"model": "gpt-4o-mini"}))
    assert writer_cache_key(transcript, POINT, CONFIG, other) != key
    assert writer_cache_key(transcript, POINT, ProbeConfig(per_type=3), writer) != key
    load_or_generate(transcript, POINT, CONFIG, tmp_path, writer=other)
    assert len(openai_stub.requests) == 2


def test_only_region_text_reaches_the_model(openai_stub, writer):
    base = generate(seed=2, target_tokens=40000)
    point = find_points(base, CompactionConfig(context_window=24000, tail_tokens=3000))[0]
    head, tail = "SENTINEL-HEAD-7f3a", "SENTINEL-TAIL-91c2"
    messages = list(base.messages)
    for i, word in ((point.head_end - 1, head), (point.tail_start, tail)):
        messages[i] = messages[i].model_copy(update={"content": f"{messages[i].content} {word}"})
    transcript = base.model_copy(update={"messages": messages})
    region_text = messages[point.head_end].render()
    _serve(
        openai_stub,
        _probe(
            quote=region_text[:40], index=0, facts=[{"kind": "detail", "text": region_text[:20]}]
        ),
    )
    probes, _ = write_probes(transcript, point, ProbeConfig(), writer)
    sent = " ".join(message_text(m) for m in openai_stub.requests[0].body["messages"])
    assert head not in sent and tail not in sent
    assert json.dumps(region_text, ensure_ascii=False)[1:-1][:30] in sent
    assert probes[0].evidence[0].message_index == point.head_end


def test_long_regions_are_cut_per_message_within_budget():
    region = [
        Message(role="user", content="short note"),
        Message(role="tool", tool_call_id="x", content="log line " * 3000),
    ]
    shown = render_region(region, 400)
    assert shown[0]["text"] == "short note"
    assert shown[1]["text"].endswith(CLIP_MARK) and len(shown[1]["text"]) < 2000
    assert render_region(region, 100000)[1]["text"] == region[1].render()


def test_default_config_keys_are_unchanged():
    assert ProbeConfig().key_data() == {
        "types": list(ProbeConfig().types),
        "per_type": 8,
        "seed": 0,
    }
    with pytest.raises(ValueError, match="_target_"):
        ProbeConfig(writer={"endpoint": {}})


def test_llm_gpt4o_composes_validates_and_builds(openai_stub, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    url = f"probe.writer.endpoint.base_url={openai_stub.base_url}"
    cfg = compose_config(["probe=llm_gpt4o", url])
    config = validate(cfg)
    assert config.probe.writer["endpoint"]["model"] == "gpt-4o"
    ledger = UsageLedger()
    built = build_writer(config.probe, ledger)
    assert isinstance(built, LLMProbeWriter) and built.ledger is ledger
    assert built.max_region_tokens == 60000
    _serve(openai_stub, _probe())
    probes = load_or_generate(_transcript(), POINT, config.probe, tmp_path, writer=built)
    assert [p.type for p in probes] == ["recall"]
    assert ledger.metrics()["llm/probe_writer/calls"] == 1
    assert build_writer(ProbeConfig()) is None
    local = validate(compose_config(["probe=llm_local"]))
    assert local.probe.writer["endpoint"]["api_key_env"] is None
    # A config with a writer keys the extractor cache apart from the default config.
    assert cache_key(_transcript(), POINT, config.probe) != cache_key(
        _transcript(), POINT, ProbeConfig(types=config.probe.types, seed=config.probe.seed)
    )


def test_next_action_probes_stay_extractive_with_a_writer(openai_stub, writer, tmp_path: Path):
    """The writer is never asked for next-action probes (its schema leaves the type out, one
    it writes anyway is dropped); the extractor adds the log's own step after the point."""
    step = [
        call_message("c9", "read_file", {"path": "src/importer/rows.py"}),
        result_message("c9", "def rows(): ..."),
    ]
    messages = [Message.model_validate(m) for m in [*MESSAGES, *step]]
    transcript = Transcript(id="t1", source="mem", messages=messages)
    _serve(openai_stub, _probe(), _probe("next_action", "What next?", "ok", 6))
    config = ProbeConfig(types=["recall", "next_action"], per_type=2)
    probes = load_or_generate(transcript, POINT, config, tmp_path, writer=writer)
    assert [p.type for p in probes] == ["recall", "next_action"]
    schema = openai_stub.requests[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["probes"]["items"]["properties"]["type"]["enum"] == ["recall"]
    action = probes[1].gold.action
    assert action is not None and (action.verb, action.target) == ("open", "src/importer/rows.py")
    assert probes[1].evidence[0].message_index == 8
