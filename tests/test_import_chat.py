"""OpenAI chat format: {"messages": [...]}, a bare list, JSON Lines; tool calls paired by id."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import probes_at_last_point

from benchmark.transcript.formats import TranscriptError, import_file

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "chat" / "ledger_fix.jsonl"


def _messages() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def _tools(transcript) -> Counter:
    return Counter(c.function.name for m in transcript.messages for c in m.tool_calls or [])


def test_jsonl_fixture_round_trips():
    imported = import_file(FIXTURE)
    t = imported.transcript
    assert imported.format == "chat" and imported.warnings == []
    roles = {"system": 1, "user": 2, "assistant": 9, "tool": 7}
    assert Counter(m.role for m in t.messages) == roles
    assert _tools(t) == {"read_file": 2, "bash": 2, "edit_file": 2, "write_file": 1}
    calls = [c.id for m in t.messages for c in m.tool_calls or []]
    results = [m.tool_call_id for m in t.messages if m.role == "tool"]
    assert calls == results  # every call answered, in order, by id
    assert t.id == "ledger_fix" and t.source == str(FIXTURE)
    assert len(imported.sha256) == 64 and imported.size == FIXTURE.stat().st_size


def test_object_list_and_lines_are_the_same_transcript(tmp_path):
    obj, bare = tmp_path / "a.json", tmp_path / "b.json"
    obj.write_text(json.dumps({"messages": _messages()}))
    bare.write_text(json.dumps(_messages(), indent=2))
    lines = import_file(FIXTURE).transcript
    for path in (obj, bare):
        imported = import_file(path)
        assert imported.format == "chat"
        assert imported.transcript.content_hash == lines.content_hash  # content, not path


def test_detected_by_content_not_extension(tmp_path):
    odd = tmp_path / "session.log"
    odd.write_bytes(FIXTURE.read_bytes())
    assert import_file(odd).format == "chat"


def test_probes_from_the_fixture():
    probes = probes_at_last_point(import_file(FIXTURE).transcript)
    facts = {(p.type, f.kind, f.text) for p in probes for f in p.gold.facts}
    assert ("artifact", "created", "tests/test_export_empty.py") in facts
    assert ("artifact", "modified", "ledger/export.py") in facts
    assert ("recall", "detail", "IndexError: list index out of range") in facts
    assert ("recall", "identifier", "python -m pytest tests/test_export.py -q") in facts
    assert {"recall", "artifact", "continuation"} <= {p.type for p in probes}


def test_developer_role_is_system(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text(
        json.dumps([{"role": "developer", "content": "rules"}, {"role": "user", "content": "hi"}])
    )
    assert [m.role for m in import_file(path).transcript.messages] == ["system", "user"]


def test_orphans_are_reported_and_kept(tmp_path):
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "never mind"},  # c1 gets no result
        {"role": "tool", "tool_call_id": "c9", "content": "output of a call not in the log"},
    ]
    path = tmp_path / "orphans.json"
    path.write_text(json.dumps(messages))
    imported = import_file(path)
    orphan, unanswered = imported.warnings  # c1 is given up on only when the log ends
    assert "'c9'" in orphan and "not in the log" in orphan
    assert "'bash' (c1)" in unanswered and "has no result (the log ends)" in unanswered
    last = imported.transcript.messages[-1]
    assert (last.role, last.name, last.content) == (
        "user",
        "orphaned_tool_result",
        "output of a call not in the log",
    )


def test_a_message_between_call_and_result_does_not_orphan_them(tmp_path):
    """A system or user message logged while calls wait goes after their results."""

    def call(call_id, command):
        function = {"name": "bash", "arguments": json.dumps({"command": command})}
        return {"id": call_id, "type": "function", "function": function}

    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "ls"), call("c2", "pwd")]},
        {"role": "system", "content": "Approved command prefix saved"},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "user", "content": "also check b"},
        {"role": "tool", "tool_call_id": "c2", "content": "/w"},
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "cat b")]},
        {"role": "tool", "tool_call_id": "c3", "content": "b"},
        {"role": "assistant", "content": "done"},
    ]
    path = tmp_path / "interposed.json"
    path.write_text(json.dumps(messages))
    imported = import_file(path)
    assert imported.warnings == []
    t = imported.transcript
    assert [(m.role, m.tool_call_id or m.content) for m in t.messages] == [
        ("user", "go"),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("system", "Approved command prefix saved"),
        ("user", "also check b"),
        ("assistant", None),
        ("tool", "c3"),
        ("assistant", "done"),
    ]


def test_reused_call_ids_are_made_unique_and_paired_in_order(tmp_path):
    def call(path):
        function = {"name": "read_file", "arguments": json.dumps({"path": path})}
        return {"id": "c1", "type": "function", "function": function}

    messages = [
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": None, "tool_calls": [call("a.py"), call("b.py")]},
        {"role": "tool", "tool_call_id": "c1", "content": "contents of a.py"},
        {"role": "tool", "tool_call_id": "c1", "content": "contents of b.py"},
        {"role": "assistant", "content": None, "tool_calls": [call("c.py")]},
        {"role": "tool", "tool_call_id": "c1", "content": "contents of c.py"},
        {"role": "tool", "tool_call_id": "c1", "content": "a result too many"},
    ]
    path = tmp_path / "reused.json"
    path.write_text(json.dumps(messages))
    imported = import_file(path)
    t = imported.transcript
    assert [c.id for c in t.messages[1].tool_calls] == ["c1", "c1#2"]
    assert [c.id for c in t.messages[4].tool_calls] == ["c1#3"]
    assert [(m.tool_call_id, m.content) for m in t.messages if m.role == "tool"] == [
        ("c1", "contents of a.py"),
        ("c1#2", "contents of b.py"),
        ("c1#3", "contents of c.py"),
    ]
    assert messages[1]["tool_calls"][1]["id"] == "c1"  # the caller's data is not changed
    assert (t.messages[-1].role, t.messages[-1].name) == ("user", "orphaned_tool_result")
    orphan, reuse = imported.warnings  # the reuse summary comes at the end
    assert reuse.startswith("2 tool call(s) reuse") and "'c1' at message 1" in reuse
    assert "'c1'" in orphan and "not in the log" in orphan


GOOD = {"role": "system", "content": "You are a coding agent."}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("{not json", "line 1: invalid JSON"),
        (json.dumps({"msgs": []}), "unrecognised transcript format"),
        (json.dumps([]), "no messages"),
        (json.dumps([{"role": "robot", "content": "hi"}]), "message 0: field 'role'"),
        (
            json.dumps([GOOD, {"role": "tool", "content": "x"}]),
            "message 1: field 'message': a tool message needs 'tool_call_id'",
        ),
        (json.dumps([GOOD, {"role": "user", "content": 5}]), "message 1: field 'content'"),
        (json.dumps([GOOD, "hello"]), "message 1: expected an object"),
        (json.dumps(GOOD) + "\n" + json.dumps({"role": "robot"}), "line 2: field 'role'"),
        (json.dumps(GOOD) + '\n{"role": "user", ', "line 2: invalid JSON"),
        (
            json.dumps({"messages": [GOOD]}) + "\n" + json.dumps({"messages": [GOOD]}),
            "line 1: one conversation per line",
        ),
    ],
)
def test_malformed_files_name_file_line_and_field(tmp_path, payload, expected):
    path = tmp_path / "broken.json"
    path.write_text(payload)
    with pytest.raises(TranscriptError) as err:
        import_file(path)
    message = str(err.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(TranscriptError, match="file not found"):
        import_file(tmp_path / "nope.json")
