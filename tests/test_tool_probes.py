"""Probes for sessions of API tools and a customer (benchmark/probe/tool_facts.py): a planted
chat session of made-up tools (not tau2's) gets the values its calls returned, the calls made
and the customer's details and requests, with exact gold that the question never states and
that the tail does not restate; the offline answerer reaches them on the uncompacted context;
a coding session is untouched; and a task-success job on the scripted stub asks probes at
every point (a non-null ``probe_overall`` per row of ``task_points_table.json``)."""

from __future__ import annotations

import json

import pytest
from conftest import at_most

from benchmark.answerer.base import AnswerRequest
from benchmark.answerer.extractive import ExtractiveAnswerer
from benchmark.answerer.json_passages import json_pieces
from benchmark.judge.matching import fact_matches
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.models import Message, Transcript

CASE_S = 60


@pytest.fixture(autouse=True)
def _deadline():
    """No case runs past CASE_S seconds."""
    with at_most(CASE_S):
        yield


CUSTOMER = {
    "customer_id": "cus_88123",
    "name": {"first": "Ada", "last": "Lovelace"},
    "payment_methods": {"card_4417": {"id": "card_4417", "kind": "card"}},
    "bookings": ["BK-20931", "BK-55102"],
    "notes": "x " * 400,  # long enough that the line is cut into passages
}
BOOKING = {"booking_id": "BK-20931", "amount": 412.5, "status": "confirmed", "nights": 3}


def _call(cid: str, name: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def _tool(cid: str, data: object) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(data)}


def planted(tail_says: str = "Anything else I can do?") -> Transcript:
    """Head: the request; region: a question, the customer's reply, two lookups, a
    condition; tail: one agent line (``tail_says``) and a last lookup."""
    raw = [
        {"role": "user", "content": "Hi, I need help with a hotel booking."},  # head
        {"role": "assistant", "content": "Could you give me your booking reference and name?"},
        {"role": "user", "content": "It is BK-20931, my name is Ada Lovelace."},
        _call("c1", "lookup_customer", {"name": "Ada Lovelace"}),
        _tool("c1", CUSTOMER),
        _call("c2", "get_booking", {"booking_id": "BK-20931"}),
        _tool("c2", BOOKING),
        {"role": "user", "content": "Please refund it to my card. Do not cancel the flight."},
        {"role": "assistant", "content": tail_says},  # tail from here
        _call("c3", "get_booking", {"booking_id": "BK-55102"}),
        _tool("c3", {"booking_id": "BK-55102", "status": "pending"}),
    ]
    messages = [Message.model_validate(m) for m in raw]
    return Transcript(id="planted", source="test", messages=messages)


def point_of(transcript: Transcript, tail_start: int = 8) -> CompactionPoint:
    end = len(transcript.messages)
    return CompactionPoint(
        transcript_id=transcript.id,
        ordinal=0,
        head_end=1,
        tail_start=tail_start,
        end=end,
        tokens_before=sum(m.tokens for m in transcript.messages),
    )


def probes_of(transcript: Transcript, **kw) -> dict[str, list[str]]:
    config = ProbeConfig(per_type=100, **kw)
    found = generate_probes(transcript, point_of(transcript), config)
    for probe in found:  # exact, checkable gold that the question never states
        for fact in probe.gold.facts:
            assert fact.text.lower() not in probe.question.lower(), probe
            held = [transcript.messages[e.message_index].render() for e in probe.evidence]
            assert any(fact.text in text for text in held), (fact, probe)
        for ev in probe.evidence:
            assert 1 <= ev.message_index < 8  # in the region
    return {p.question: [f.text for f in p.gold.facts] for p in found}


def test_planted_facts_are_asked_with_exact_gold():
    got = probes_of(planted())
    assert got == {
        "What did the customer tell us when we asked "
        '"Could you give me your booking reference and name?"?': ["BK-20931", "Ada Lovelace"],
        "What `customer_id` value(s) did the `lookup_customer` call with name `Ada Lovelace` "
        "return?": ["cus_88123"],
        "What `payment_methods.id` value(s) did the `lookup_customer` call with name "
        "`Ada Lovelace` return?": ["card_4417"],
        "What `payment_methods.kind` value(s) did the `lookup_customer` call with name "
        "`Ada Lovelace` return?": ["card"],  # a plain word: asked as the one value of its key
        "What `bookings` value(s) did the `lookup_customer` call with name `Ada Lovelace` "
        "return?": ["BK-20931"],  # BK-55102 is in the tail: it cannot be lost
        "What `amount` value(s) did the `get_booking` call with booking_id `BK-20931` return?": [
            "412.5"
        ],
        "What `status` value(s) did the `get_booking` call with booking_id `BK-20931` return?": [
            "confirmed"
        ],
        "Which `lookup_customer` calls had we already made, with which arguments?": [
            "Ada Lovelace"
        ],
        "Which `get_booking` calls had we already made, with which arguments?": ["BK-20931"],
        "What has the customer asked us to do, and on which conditions?": [
            "Please refund it to my card.",
            "Do not cancel the flight.",
        ],
    }


def test_a_value_the_tail_restates_is_not_asked():
    got = probes_of(planted(tail_says="Your customer id is cus_88123 and the total 412.5."))
    facts = {f for gold in got.values() for f in gold}
    assert "cus_88123" not in facts and "412.5" not in facts
    assert "card_4417" in facts


def test_customer_turns_of_a_coding_session_are_not_read():
    t = planted()
    bash = Message.model_validate(_call("c0", "bash", {"command": "ls"}))
    coding = t.model_copy(update={"messages": [*t.messages[:3], bash, *t.messages[3:]]})
    coding = coding.model_copy(update={"messages": coding.messages[:-1]})
    got = probes_of(coding, types=["continuation"])
    assert not any("customer" in q for q in got)


def test_offline_answerer_reaches_the_gold_on_the_uncompacted_context():
    t = planted()
    answerer, point = ExtractiveAnswerer(), point_of(t)
    probes = generate_probes(t, point, ProbeConfig(per_type=100, types=["recall", "artifact"]))
    assert len(probes) >= 7
    for probe in probes:
        answer = answerer.answer(
            AnswerRequest(question=probe.question, context=t.messages[: point.end])
        )
        assert all(fact_matches(f, answer.text) for f in probe.gold.facts), (probe, answer)


def test_a_long_json_line_is_cut_at_its_members():
    line = json.dumps(CUSTOMER)
    pieces = json_pieces(line, 40)
    assert pieces is not None
    assert all(text in line for text, _ in pieces)  # verbatim
    keys = {text: path for text, path in pieces}
    assert keys['"customer_id": "cus_88123"'] == ("customer_id",)
    assert any(p == ("payment_methods",) and "card_4417" in t for t, p in pieces)
    assert json_pieces("not json " * 100, 40) is None
    assert json_pieces('{"a": 1}', 40) is None  # short: one passage as before


def test_task_success_job_asks_probes_at_every_point(tmp_path, offline):
    pytest.importorskip("tau2", reason="the 'tau2' extra is not installed")
    from conftest import compose_config

    from benchmark.config import schema as config_mod
    from benchmark.run.job import job
    from benchmark.task_success.report import TABLE

    cfg = compose_config(
        [
            "+experiment=task_success",
            "task.tasks=[retail/11,retail/20]",
            "tracking=disabled",
            f"cache.dir={tmp_path / 'c'}",
        ]
    )
    resolved = config_mod.resolve(cfg)
    record, outcome = job(config_mod.validate(resolved), resolved)
    assert outcome.failure is None
    rows = json.loads(record.artifacts[TABLE])
    assert len(rows) >= 3
    for row in rows:
        assert row["probes"] > 0 and row["probe_overall"] is not None, row
        assert row["facts_lost"] > 0  # truncate drops the whole region of these sessions
