"""Claude Code session logs: detection, conversation shape, tool pairing, probes, bad input."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from benchmark.activity.actions import extract
from benchmark.activity.operations import file_ops
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.models import Probe
from benchmark.run.compaction import CompactionPoint
from benchmark.transcript.formats import Imported, TranscriptError, claude_code, import_file

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "claude_code" / "session.jsonl"
SRC = "/home/dev/inventory/src/inventory/"
TEST_FILE = "/home/dev/inventory/tests/test_reserve.py"
SIDECHAIN_CALL = "toolu_01Sg5SubGrep0b"
ORPHAN_RESULT = "toolu_01Lost9BeforeCompact0z"
ORPHAN_CALL = "toolu_01Rd9AdminView5u"
COMPACT_SUMMARY = 23  # message index of Claude Code's own compaction summary


@pytest.fixture(scope="module")
def imported() -> Imported:
    return import_file(FIXTURE)


def _records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def _write(tmp_path: Path, records: list, name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _calls(imported: Imported) -> list:
    return [c for m in imported.transcript.messages for c in m.tool_calls or []]


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["session.jsonl", "session.json", "export.txt"])
def test_detected_by_content_whatever_the_name(tmp_path, name):
    copy = tmp_path / name
    shutil.copyfile(FIXTURE, copy)
    result = import_file(copy)
    assert result.format == "claude_code"
    assert result.transcript.id == copy.stem
    assert len(result.transcript.messages) == 29


def test_claims_claude_code_records_only():
    assert all(claude_code.claims_record(r) for r in _records())
    assert claude_code.claims_record({"type": "summary", "summary": "x", "leafUuid": "u1"})
    chat = {"role": "user", "content": "hi", "sessionId": "s1"}
    assert not claude_code.claims_record(chat)
    for kind in ("session_meta", "response_item", "event_msg", "turn_context", "compacted"):
        assert not claude_code.claims_record({"type": kind, "payload": {"type": "message"}})
    assert not claude_code.claims_record({"type": "message", "text": "hello"})


def test_chat_jsonl_is_still_chat(tmp_path):
    path = _write(
        tmp_path,
        [{"role": "user", "content": "Fix it."}, {"role": "assistant", "content": "Done."}],
        "chat.jsonl",
    )
    assert import_file(path).format == "chat"


# --- conversation shape ---------------------------------------------------------------------


def test_counts_by_role_and_tool(imported):
    roles = Counter(m.role for m in imported.transcript.messages)
    assert roles == {"user": 6, "assistant": 11, "tool": 12}
    assert Counter(c.function.name for c in _calls(imported)) == {
        "Read": 3,
        "Bash": 3,
        "Edit": 2,
        "Grep": 1,
        "TodoWrite": 1,
        "Task": 1,
        "Write": 1,
        "MultiEdit": 1,
    }


def test_results_answer_their_calls(imported):
    messages = imported.transcript.messages
    call_ids = [c.id for c in _calls(imported)]
    assert len(call_ids) == len(set(call_ids))
    for i, msg in enumerate(messages):
        if msg.role != "tool":
            continue
        caller = max(j for j in range(i) if messages[j].tool_calls)
        assert msg.tool_call_id in {c.id for c in messages[caller].tool_calls}
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    assert set(call_ids) - answered == {ORPHAN_CALL}
    bash = next(c for c in _calls(imported) if c.function.name == "Bash")
    assert bash.function.args()["command"] == "python -m pytest tests/test_store.py -q"


def test_lines_of_one_api_message_are_merged(imported):
    messages = imported.transcript.messages
    first = messages[2]  # a thinking line and three tool_use lines of one message id
    assert first.content is None
    assert [c.function.name for c in first.tool_calls] == ["Read", "Read", "Grep"]
    assert [m.role for m in messages[3:6]] == ["tool", "tool", "tool"]
    edit = messages[14]  # a text line and a tool_use line
    assert edit.content.startswith("The root cause is that reserve()")
    assert [c.function.name for c in edit.tool_calls] == ["Edit"]
    blob = json.dumps([m.model_dump() for m in messages])
    assert "Read the store and the errors module first" not in blob  # thinking is dropped
    assert "EqQBCkYIBhgCKkBsig0000" not in blob


def test_what_the_model_saw_is_kept_verbatim(imported):
    messages = imported.transcript.messages
    assert messages[0].role == "user" and messages[0].content.startswith("Caveat:")  # isMeta
    assert messages[1].content.startswith("Store.reserve() in src/inventory/store.py")
    summary = messages[COMPACT_SUMMARY]
    assert summary.role == "user" and summary.content.startswith("This session continues")
    failed_edit = next(m for m in messages if m.tool_call_id == "toolu_01Ed2GuardStock7c")
    assert failed_edit.content.startswith("<tool_use_error>String to replace not found in file.")
    read = next(m for m in messages if m.tool_call_id == "toolu_01Rd5StoreModule9x")
    assert read.content.startswith("     1\u2192from inventory.errors import InsufficientStock")
    assert "numLines" not in read.content  # the structured toolUseResult copy is ignored
    task = next(m for m in messages if m.tool_call_id == "toolu_01Tk8CallerAudit2p")
    assert task.content.startswith("OrderService.place() in src/inventory/orders.py")
    # Text after the tool result in the same event: a user message right after it.
    assert messages[21].tool_call_id == "toolu_01Me4RenameBase8f"
    assert messages[22].role == "user" and "pytest.raises(match=...)" in messages[22].content
    screenshot = messages[27]
    assert screenshot.content == (
        "Thanks. The admin page still shows the old count, see the screenshot.\n[image omitted]"
    )


def test_sidechain_is_skipped_with_one_warning(imported):
    blob = json.dumps([m.model_dump() for m in imported.transcript.messages])
    assert SIDECHAIN_CALL not in blob
    assert "it does not check stock first." not in blob  # the sub-agent's own report
    sidechain = [w for w in imported.warnings if "isSidechain" in w]
    assert sidechain == [
        "line 18: skipped 4 sub-agent (isSidechain) events: a Task tool's own conversation, "
        "which the main session only saw as the Task result"
    ]


def test_orphans_are_warned_and_kept(imported):
    assert len(imported.warnings) == 3
    orphan_result = next(w for w in imported.warnings if ORPHAN_RESULT in w)
    assert orphan_result.startswith("line 37: tool result for call")
    orphan_call = next(w for w in imported.warnings if ORPHAN_CALL in w)
    assert "'Read'" in orphan_call and "line 42" in orphan_call and "log ends" in orphan_call
    kept = imported.transcript.messages[24]
    assert (kept.role, kept.name, kept.content) == ("user", "orphaned_tool_result", "Exit code 0")


def test_skips_unknown_events_and_warns_on_unknown_blocks(tmp_path):
    records = _records()
    records.append({"type": "queue-operation", "operation": "enqueue", "sessionId": "s"})
    for line in (14, 25):  # warned about once
        records[line - 1]["message"]["content"].append({"type": "server_tool_use", "id": "x"})
    result = import_file(_write(tmp_path, records))
    assert result.warnings == [
        "line 14: skipped assistant content blocks of type 'server_tool_use' (first here)",
        *import_file(FIXTURE).warnings,
    ]
    assert len(result.transcript.messages) == 29


# --- probes ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def probes(imported) -> list[Probe]:
    transcript = imported.transcript
    point = CompactionPoint(  # where Claude Code itself compacted: the region is the work
        transcript_id=transcript.id,
        ordinal=0,
        head_end=2,
        tail_start=COMPACT_SUMMARY,
        end=len(transcript.messages),
        tokens_before=0,
    )
    return generate_probes(transcript, point, ProbeConfig(per_type=20))


def _facts(probes: list[Probe], ptype: str, *kinds: str) -> set[str]:
    return {
        f.text
        for p in probes
        if p.type == ptype
        for f in p.gold.facts
        if not kinds or f.kind in kinds
    }


def test_artifact_probes_name_the_files(probes):
    assert _facts(probes, "artifact", "created") == {TEST_FILE}
    assert _facts(probes, "artifact", "modified") == {SRC + "store.py"}  # read, then edited
    assert _facts(probes, "artifact", "read") == {SRC + "errors.py"}
    assert "test_reserve_beyond_stock_raises" in _facts(probes, "artifact")


def test_recall_probes_carry_errors_and_commands(probes):
    facts = _facts(probes, "recall")
    assert (
        "ImportError: cannot import name 'ReservationError' from 'inventory.errors' "
        "(/home/dev/inventory/src/inventory/errors.py)"
    ) in facts
    assert "python -m pytest tests/ -q" in facts
    assert "tests/test_store.py::test_reserve_more_than_stock" in facts
    assert "Failed: DID NOT RAISE <class 'inventory.errors.InsufficientStock'>" in facts
    # The rejected Edit failed with the tool's own error reply: a real error, quoted whole.
    edit_errors = [f for f in facts if "String to replace" in f]
    assert all(f.startswith("<tool_use_error>String to replace not found") for f in edit_errors)


def test_notebook_edit_is_a_modification(tmp_path):
    base = {"sessionId": "s1", "isSidechain": False}
    path = _write(
        tmp_path,
        [
            {**base, "type": "user", "message": {"role": "user", "content": "Fix cell 3."}},
            {
                **base,
                "type": "assistant",
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "NotebookEdit",
                            "input": {
                                "notebook_path": "/w/analysis.ipynb",
                                "cell_id": "c3",
                                "new_source": "df = load_orders(limit=500)",
                            },
                        }
                    ],
                },
            },
            {
                **base,
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Updated c3"}
                    ],
                },
            },
        ],
    )
    messages = import_file(path).transcript.messages
    texts = {i: m.render() for i, m in enumerate(messages)}
    (op,) = file_ops(extract(messages, texts, 0, len(messages)), texts)
    assert (op.kind, op.path, op.added) == (
        "edit",
        "/w/analysis.ipynb",
        "df = load_orders(limit=500)",
    )


# --- bad input ------------------------------------------------------------------------------


def _break_message(record: dict, value) -> None:
    record["message"] = value


def _break_content(record: dict, value) -> None:
    record["message"]["content"] = value


def _break_block(key: str, value):
    def change(record: dict) -> None:
        block = record["message"]["content"][-1]
        if value is None:
            del block[key]
        else:
            block[key] = value

    return change


@pytest.mark.parametrize(
    ("line", "change", "expected"),
    [
        (4, lambda r: _break_message(r, "Fix the bug"), "field 'message': expected an object"),
        (16, lambda r: _break_content(r, 42), "field 'message.content': expected text or a list"),
        (15, lambda r: _break_content(r, ["run"]), "field 'message.content.0': expected a content"),
        (15, _break_block("id", None), "field 'message.content.0.id': a tool_use block needs"),
        (26, _break_block("name", ""), "field 'message.content.0.name': tool_use"),
        (26, _break_block("input", "x"), "field 'message.content.0.input': expected an object"),
        (9, _break_block("tool_use_id", None), "field 'message.content.0.tool_use_id'"),
        (16, _break_block("content", 7), "field 'message.content.0.content': content must be"),
        (14, _break_block("text", ["a"]), "field 'message.content.0.text': expected text"),
    ],
)
def test_malformed_events_name_file_line_and_field(tmp_path, line, change, expected):
    records = _records()
    change(records[line - 1])
    path = _write(tmp_path, records)
    with pytest.raises(TranscriptError) as info:
        import_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: line {line}: {expected}")
    assert "\n" not in message and info.value.line == line


def test_a_line_that_is_not_an_object(tmp_path):
    records = _records()
    records[9] = ["tool_result"]
    path = _write(tmp_path, records)
    with pytest.raises(TranscriptError, match=r"line 10: expected a JSON object per line"):
        import_file(path)


def test_a_sub_agent_log_alone_is_refused(tmp_path):
    sidechain = [r for r in _records() if r.get("isSidechain")]
    path = _write(tmp_path, sidechain)
    with pytest.raises(TranscriptError, match="all 4 conversation events are a sub-agent's"):
        import_file(path)


def test_forced_on_a_json_document(tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    with pytest.raises(TranscriptError, match="expected JSON Lines"):
        import_file(path, format="claude_code")


# --- the plan kept with TodoWrite -----------------------------------------------------------


def test_todo_write_plan_is_the_open_tasks(probes, imported):
    # The only TodoWrite call (in the region) never got a later update: all three are open.
    assert _facts(probes, "continuation", "pending") == {
        "Reproduce the overselling bug",
        "Make reserve() raise InsufficientStock",
        "Add a regression test for reserving beyond stock",
    }
    plan = next(p for p in probes if "plan or checklist" in p.question)
    todo_call = 6
    assert {ev.message_index for ev in plan.evidence} == {todo_call}
    assert imported.transcript.messages[todo_call].tool_calls[0].function.name == "TodoWrite"
