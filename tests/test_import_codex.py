"""Codex CLI rollouts: both generations detected and converted, tool calls paired, what the
activity readers and probes find in them, and one-line errors for malformed lines."""

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
from benchmark.transcript.formats import TranscriptError, codex, import_file
from benchmark.transcript.models import Transcript

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "codex"
CURRENT = FIXTURES / "rollout-2025-10-14T09-12-03-tinyq.jsonl"
LEGACY = FIXTURES / "rollout-2025-06-03T14-02-11-legacy.jsonl"
TASK = "Please fix the backoff in tinyq and add a test for it."

META = {
    "timestamp": "2025-10-20T08:00:00.000Z",
    "type": "session_meta",
    "payload": {
        "id": "0199f3a0-1111-7000-8000-000000000001",
        "timestamp": "2025-10-20T08:00:00.000Z",
        "cwd": "/w",
        "originator": "codex_cli_rs",
        "cli_version": "0.47.0",
        "instructions": "Be brief.",
    },
}
LEGACY_META = {"id": "6b1f0e3a", "timestamp": "2025-06-01T10:00:00.000Z", "instructions": None}


def _item(payload: dict) -> dict:
    return {"timestamp": "2025-10-20T08:00:01.000Z", "type": "response_item", "payload": payload}


def _user(text: str) -> dict:
    return _item(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )


def _call(name: str, args: dict, call_id: str) -> dict:
    return _item(
        {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": call_id}
    )


def _output(call_id: str, text: str) -> dict:
    return _item({"type": "function_call_output", "call_id": call_id, "output": text})


def _write(tmp_path: Path, records: list, name: str = "rollout.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _calls(transcript: Transcript) -> list:
    return [c for m in transcript.messages for c in m.tool_calls or []]


# --- the current generation ----------------------------------------------------------------


@pytest.fixture(scope="module")
def current():
    return import_file(CURRENT)


def test_current_rollout_counts_and_pairing(current):
    transcript = current.transcript
    assert current.format == "codex" and current.warnings == []
    roles = {"system": 2, "user": 5, "assistant": 11, "tool": 11}
    assert Counter(m.role for m in transcript.messages) == roles
    calls = _calls(transcript)
    assert Counter(c.function.name for c in calls) == {
        "shell": 6,
        "apply_patch": 3,
        "update_plan": 2,
    }
    results = [m.tool_call_id for m in transcript.messages if m.role == "tool"]
    assert sorted(results) == sorted(c.id for c in calls)
    for i, message in enumerate(transcript.messages):  # each result follows its own call
        if message.role == "tool":
            earlier = [c.id for m in transcript.messages[:i] for c in m.tool_calls or []]
            assert message.tool_call_id in earlier


def test_current_rollout_content(current):
    messages = current.transcript.messages
    texts = [m.render() for m in messages]
    assert messages[0].role == "system" and "apply_patch tool" in messages[0].content
    assert messages[1].role == "system" and "<permissions instructions>" in messages[1].content
    assert "<environment_context>" in messages[3].content and messages[3].role == "user"
    assert sum(TASK in t for t in texts) == 1  # the event_msg copy is not a second message
    assert not any("Looking at the retry policy" in t for t in texts)  # reasoning is skipped
    summary = next(m for m in messages if m.content and m.content.startswith("Progress so far"))
    assert summary.role == "user"
    # Two shell calls issued after the assistant's remark belong to that assistant message.
    reading = next(m for m in messages if m.content and m.content.startswith("I'll read"))
    assert [c.function.args()["command"][2] for c in reading.tool_calls] == [
        "sed -n '1,80p' tinyq/retry.py",
        "cat tinyq/config.py",
    ]
    patch = next(c for c in _calls(current.transcript) if c.function.name == "apply_patch")
    assert patch.function.args()["input"].startswith(
        "*** Begin Patch\n*** Add File: tests/test_backoff_cap.py\n"
    )
    patched = next(m for m in messages if m.tool_call_id == patch.id)
    assert patched.content == (
        "Exit code: 0\nSuccess. Updated the following files:\nA tests/test_backoff_cap.py\n"
    )


def test_detected_by_content_not_name(tmp_path, current):
    copy = tmp_path / "session.json"
    shutil.copy(CURRENT, copy)
    imported = import_file(copy)
    assert imported.format == "codex"
    assert imported.transcript.messages == current.transcript.messages


# --- the older generation ------------------------------------------------------------------


def test_legacy_rollout():
    imported = import_file(LEGACY)
    messages = imported.transcript.messages
    assert imported.format == "codex" and imported.warnings == []
    assert [m.role for m in messages] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[0].content == "Run `ruff check .` before you say you are done."
    # The JSON-wrapped output is unwrapped: the traceback's lines are lines again.
    assert messages[4].content.endswith(
        "    newest = entries[0]\nIndexError: list index out of range\n"
    )
    local = messages[5].tool_calls[0]
    assert local.function.name == "local_shell"
    assert local.function.args() == {
        "command": ["bash", "-lc", "sed -n '15,30p' notes/cli.py"],
        "workdir": "/home/dev/notes-cli",
    }
    assert messages[6].tool_call_id == local.id == "call_3TnVb7RsYp1c"
    texts = {i: m.render() for i, m in enumerate(messages)}
    commands = [a.command for a in extract(messages, texts, 0, len(messages))]
    assert commands == ["notes list --dir /tmp/empty-notes", "sed -n '15,30p' notes/cli.py"]


# --- detection -----------------------------------------------------------------------------


def test_claims_both_generations_and_nothing_else():
    for path in (CURRENT, LEGACY):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert codex.claims_record(records[0])
        assert all(codex.claims_record(r) for r in records)
    assert codex.claims_record({"type": "message", "role": "user", "content": []})
    foreign = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {
            "parentUuid": None,
            "sessionId": "5d0e",
            "type": "user",
            "message": {"role": "user", "content": "hi"},
            "uuid": "a1",
            "timestamp": "2025-08-01T10:00:00Z",
        },
        {"type": "assistant", "message": {"role": "assistant", "content": []}, "uuid": "a2"},
        {"type": "summary", "summary": "Fixed the parser", "leafUuid": "a2"},
        {"type": "message", "role": "user", "message": {"role": "user"}, "sessionId": "5d0e"},
    ]
    assert not any(codex.claims_record(r) for r in foreign)


def test_chat_jsonl_is_still_chat(tmp_path):
    records = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    path = _write(tmp_path, records, "chat.jsonl")
    assert import_file(path).format == "chat"
    with pytest.raises(TranscriptError, match=r"line 1: field 'type': .* missing"):
        import_file(path, format="codex")


# --- other tools, skipped records and orphans -------------------------------------------------


def test_skips_and_orphans_are_warnings(tmp_path):
    records = [
        META,
        _user("What changed?"),
        _call("shell_command", {"command": "git status --short", "workdir": "/w"}, "call_a"),
        _output("call_a", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n M src/app.py\n"),
        _item({"type": "web_search_call", "status": "completed", "action": {"type": "search"}}),
        _item({"type": "web_search_call", "status": "completed", "action": {"type": "search"}}),
        _item({"type": "ghost_snapshot", "ghost_commit": {"id": "9c1e"}}),
        {"timestamp": "2025-10-20T08:00:02.000Z", "type": "future_record", "payload": {}},
        _call("shell", {"command": ["bash", "-lc", "sleep 600"]}, "call_orphan"),
        _user("Stop that, it hangs."),
        _output("call_ghost", "output of a call the log lost"),
        {"timestamp": "2025-10-20T08:00:03.000Z", "type": "compacted", "payload": {"message": ""}},
    ]
    imported = import_file(_write(tmp_path, records))
    messages = imported.transcript.messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"] + [
        "user",
        "user",
    ]
    assert messages[0].content == "Be brief."
    assert messages[-1].name == "orphaned_tool_result"
    assert messages[-1].content == "output of a call the log lost"
    texts = {i: m.render() for i, m in enumerate(messages)}
    actions = extract(messages, texts, 0, len(messages))
    assert [a.command for a in actions] == ["git status --short", "sleep 600"]
    assert actions[0].result.endswith(" M src/app.py\n") and actions[1].result_index is None
    warnings = imported.warnings
    assert len(warnings) == 5, warnings
    assert warnings[0].startswith("line 11: tool result for call 'call_ghost'")
    assert warnings[1] == "line 12: a compaction record with an empty summary; skipped"
    assert "skipped 2 'web_search_call' record(s)" in warnings[2] and "line 5" in warnings[2]
    # Codex's own undo snapshots (ghost_snapshot) are harness records: skipped silently
    assert "skipped 1 'future_record' record(s)" in warnings[3] and "line 8" in warnings[3]
    # the user's message does not give up on the call: only the log's end does
    assert warnings[4] == "tool call 'shell' (call_orphan) at line 9 has no result (the log ends)"


def test_a_developer_message_between_call_and_output_keeps_the_pair(tmp_path):
    """Codex logs an approval notice between a call and its output; the pair holds and the
    notice follows the output. Reasoning between them is skipped as ever."""
    developer = _item(
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "Approved command prefix saved"}],
        }
    )
    reasoning = _item({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"})
    records = [
        META,
        _user("Build it."),
        _call("exec_command", {"cmd": "make", "workdir": "/w"}, "call_make"),
        developer,
        reasoning,
        _output("call_make", "Chunk ID: 1\nProcess exited with code 0\nOutput:\nok\n"),
        _item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Built."}],
            }
        ),
    ]
    imported = import_file(_write(tmp_path, records))
    assert imported.warnings == []
    messages = imported.transcript.messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "system"] + [
        "assistant"
    ]
    assert messages[3].tool_call_id == "call_make"
    assert messages[4].content == "Approved command prefix saved"
    texts = {i: m.render() for i, m in enumerate(messages)}
    (action,) = extract(messages, texts, 0, len(messages))
    assert (action.command, action.result_index) == ("make", 3)


def test_output_forms(tmp_path):
    """Plain text, JSON-wrapped text, content parts; a JSON output that is no wrapper stays."""
    records = [META, _user("Go.")]
    outputs = [
        "plain text",
        json.dumps({"output": "wrapped\nlines", "metadata": {"exit_code": 0}}),
        [{"type": "input_text", "text": "a part"}, {"type": "input_image", "image_url": "data:"}],
        '{"output": "x", "status": "ok"}',
    ]
    for n, output in enumerate(outputs):
        records += [_call("mcp_tool", {}, f"c{n}"), _output(f"c{n}", output)]
    results = [
        m.content for m in import_file(_write(tmp_path, records)).transcript.messages[2:][1::2]
    ]
    assert results == [
        "plain text",
        "Exit code: 0\nwrapped\nlines",
        "a part\n[image omitted]",
        '{"output": "x", "status": "ok"}',
    ]


def test_a_wrapped_output_keeps_its_exit_status(tmp_path):
    """The older wrapper's exit code decides whether the call failed, as the newer text does."""
    from benchmark.probe.runs import exit_status

    records = [META, _user("Go.")]
    for n, code in enumerate((0, 2)):
        wrapped = json.dumps(
            {"output": "warning: deprecated flag", "metadata": {"exit_code": code}}
        )
        records += [_call("shell", {"command": ["bash", "-lc", "make"]}, f"c{n}")]
        records += [_output(f"c{n}", wrapped)]
    results = [
        m for m in import_file(_write(tmp_path, records)).transcript.messages if m.role == "tool"
    ]
    assert [exit_status(m.content) for m in results] == [0, 2]


# --- probes ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def probes(current) -> tuple[Transcript, CompactionPoint, list[Probe]]:
    transcript = current.transcript
    head_end = next(i for i, m in enumerate(transcript.messages) if TASK in (m.content or "")) + 1
    n = len(transcript.messages)
    point = CompactionPoint(
        transcript_id=transcript.id,
        ordinal=0,
        head_end=head_end,
        tail_start=n - 1,
        end=n,
        tokens_before=transcript.total_tokens,
    )
    return transcript, point, generate_probes(transcript, point, ProbeConfig(per_type=20))


def _facts(probes: list[Probe], *kinds: str) -> set[str]:
    return {f.text for p in probes for f in p.gold.facts if not kinds or f.kind in kinds}


def test_probes_are_grounded(probes):
    transcript, point, found = probes
    assert {"recall", "artifact"} <= {p.type for p in found}
    for probe in found:
        quoted = []
        for ev in probe.evidence:
            assert point.head_end <= ev.message_index < point.tail_start
            text = transcript.messages[ev.message_index].render()
            assert ev.quote in text
            quoted.append(text)
        assert all(any(f.text in text for text in quoted) for f in probe.gold.facts)


def test_artifact_probes_see_patches_and_reads(probes):
    artifact = [p for p in probes[2] if p.type == "artifact"]
    assert _facts(artifact, "created") == {"tests/test_backoff_cap.py"}
    assert _facts(artifact, "modified") == {"tinyq/retry.py", "CHANGELOG.md"}
    assert _facts(artifact, "read") == {"tinyq/config.py", "tests/test_retry.py"}
    by_question = {p.question: p for p in artifact}
    new_file = by_question["What did we put in the new file `tests/test_backoff_cap.py`?"]
    assert "test_delay_never_exceeds_max_delay" in _facts([new_file])


def test_recall_probes_quote_real_errors(probes):
    by_question = {p.question: p for p in probes[2] if p.type == "recall"}
    pytest_run = by_question[
        "What exact error did `pytest -q tests/test_backoff_cap.py` fail with?"
    ]
    assert "assert 1024.0 == 30.0" in _facts([pytest_run], "detail")
    assert "tests/test_backoff_cap.py::test_delay_never_exceeds_max_delay" in _facts([pytest_run])
    module = by_question["Which command failed with a `ModuleNotFoundError`?"]
    assert _facts([module]) == {"python scripts/backoff_table.py"}
    script = by_question["What exact error did `python scripts/backoff_table.py` fail with?"]
    assert _facts([script]) == {"ModuleNotFoundError: No module named 'tinyq'"}


# --- malformed lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "line", "reason"),
    [
        (
            [META, _item({"type": "function_call_output", "output": "x"})],
            2,
            "field 'payload.call_id': expected the tool call's id, missing",
        ),
        ([META, _item([1])], 2, "field 'payload': expected an object, got a list"),
        (
            [META, {"timestamp": "t", "type": "response_item"}],
            2,
            "field 'payload': expected an object, missing",
        ),
        (
            [META, _item({"type": "message", "role": "tool", "content": []})],
            2,
            "field 'payload.role': expected one of",
        ),
        (
            [
                META,
                _item({"type": "function_call", "name": "shell", "arguments": 42, "call_id": "c"}),
            ],
            2,
            "field 'payload.arguments': expected JSON text, got a number",
        ),
        (
            [META, _item({"type": "function_call", "arguments": "{}", "call_id": "c"})],
            2,
            "field 'payload.name': expected text, missing",
        ),
        (
            [META, _item({"type": "message", "role": "user", "content": [42]})],
            2,
            "field 'payload.content': a content part must be an object",
        ),
        (
            [
                META,
                _item({"type": "local_shell_call", "call_id": "c", "action": {"command": "ls"}}),
            ],
            2,
            "field 'payload.action.command': expected a list of words, got text",
        ),
        (
            [META, _user("hi"), {"type": "compacted", "payload": {"message": 5}}],
            3,
            "field 'payload.message': expected text, got a number",
        ),
        ([META, {"hello": 1}], 2, "field 'type': expected a rollout record type, missing"),
        ([META, [1, 2]], 2, "expected a JSON object, got a list"),
        (
            [LEGACY_META, {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1"}],
            2,
            "field 'input': expected text, missing",
        ),
        (
            [{**META, "payload": {**META["payload"], "base_instructions": {"text": 3}}}],
            1,
            "field 'payload.base_instructions.text': expected text, got a number",
        ),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, records, line, reason):
    path = _write(tmp_path, records)
    with pytest.raises(TranscriptError) as caught:
        import_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {line}: {reason}")
    assert "\n" not in message


# --- the plan kept with update_plan -----------------------------------------------------------

STEPS = {
    "Read the retry policy and its config",
    "Add a failing test for the delay cap",
    "Cap the delay at max_delay",
    "Run the whole test suite",
}


def _plan_probes(transcript: Transcript, tail_start: int, end: int) -> list[Probe]:
    point = CompactionPoint(
        transcript_id=transcript.id,
        ordinal=0,
        head_end=5,
        tail_start=tail_start,
        end=end,
        tokens_before=0,
    )
    return [
        p
        for p in generate_probes(transcript, point, ProbeConfig(types=["continuation"]))
        if "checklist" in p.question
    ]


def test_update_plan_is_the_state_at_the_point(current):
    transcript = current.transcript
    first, last = (
        i
        for i, m in enumerate(transcript.messages)
        if any(c.function.name == "update_plan" for c in m.tool_calls or [])
    )
    # Both calls in the region: the later one has every step completed.
    (done,) = _plan_probes(transcript, last + 1, last + 2)
    assert "completed" in done.question and _facts([done]) == STEPS
    assert {ev.message_index for ev in done.evidence} == {last}
    # Only the first call is in view: every step is still open.
    (open_,) = _plan_probes(transcript, first + 10, last)
    assert _facts([open_], "pending") == STEPS
    # The closing call in the tail closes them all; the region's state was not "completed".
    assert _plan_probes(transcript, first + 10, last + 1) == []


# --- patches applied through the shell tool (older Codex) --------------------------------------

SHELL_OK = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nDone!\n"


def test_patches_applied_through_the_shell(tmp_path):
    records = [
        META,
        _user("Make the queue drain on shutdown."),
        _call(
            "shell",
            {
                "command": [
                    "apply_patch",
                    "*** Begin Patch\n*** Update File: tinyq/queue.py\n@@ class Queue:\n"
                    "-    def close(self):\n+    def close(self, drain: bool = True):\n"
                    "+        self._drain_on_close = drain\n*** End Patch\n",
                ]
            },
            "p1",
        ),
        _output("p1", SHELL_OK),
        _call(
            "shell",
            {
                "command": [
                    "bash",
                    "-lc",
                    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: tinyq/shutdown.py\n"
                    "+def drain_pending(queue):\n"
                    "+    return queue.flush(reason='shutdown') > 0\n"
                    "*** Delete File: tinyq/legacy_stop.py\n*** End Patch\nEOF",
                ]
            },
            "p2",
        ),
        _output("p2", SHELL_OK),
        _call(
            "shell",
            {
                "command": [
                    "bash",
                    "-lc",
                    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: tinyq/worker.py\n"
                    "-STOP = 1\n+STOP_GRACEFULLY = 1\n*** End Patch\nEOF",
                ]
            },
            "p3",
        ),
        _output(
            "p3",
            "Exit code: 1\nWall time: 0.1 seconds\nOutput:\n"
            "Failed to find expected lines in tinyq/worker.py:\nSTOP = 1\n",
        ),
    ]
    transcript = import_file(_write(tmp_path, records)).transcript
    messages = transcript.messages
    texts = {i: m.render() for i, m in enumerate(messages)}
    ops = file_ops(extract(messages, texts, 0, len(messages)), texts)
    assert [(op.kind, op.path, op.failed) for op in ops] == [
        ("edit", "tinyq/queue.py", False),
        ("write", "tinyq/shutdown.py", False),
        ("delete", "tinyq/legacy_stop.py", False),
        ("edit", "tinyq/worker.py", True),
    ]
    assert ops[0].removed == "    def close(self):"
    # The patch's '+' lines are not read as shell commands (no "> 0" redirect to a file "0").
    assert not any(op.path == "0" for op in ops)

    n = len(messages)
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=2, tail_start=n, end=n, tokens_before=0
    )
    probes = generate_probes(transcript, point, ProbeConfig(per_type=20))
    artifact = [p for p in probes if p.type == "artifact"]
    assert _facts(artifact, "created") == {"tinyq/shutdown.py"}
    assert _facts(artifact, "modified") == {"tinyq/queue.py"}
    changes = {p.question: _facts([p]) for p in artifact}
    assert "self._drain_on_close" in changes["What did we change in `tinyq/queue.py`?"]
    assert "drain_pending" in changes["What did we put in the new file `tinyq/shutdown.py`?"]
