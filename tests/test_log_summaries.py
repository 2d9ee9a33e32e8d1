"""Compactions already in a log (Claude Code continuations, Codex ``compacted`` items, chat
exports of them) are marked, shown in the manifest and never a source of probes; sub-agent
logs met in a folder scan are skipped with a note. The logs are written here in the shapes
the agents write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compose_config

from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.preview import main as preview_main
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.run.compaction import CompactionPoint
from benchmark.tracking.inputs import manifest_metrics
from benchmark.transcript.formats import import_file
from benchmark.transcript.manifest import SkippedFile
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.sources import SUBAGENT_SKIPPED, load_transcripts

SESSION = "5b0c7d1e-2f3a-4b5c-8d9e-0a1b2c3d4e5f"
CONTINUED = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\nAnalysis:\n"
    "1. Ran `npm run build`, which failed with:\n"
    "TypeError: Cannot read properties of undefined (reading 'map')\n"
    "2. Decided to use PostgreSQL instead of SQLite because the workers write concurrently.\n"
    "Next step: run the full test suite."
)
CODEX_SUMMARY = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. Use this to build on the work that has already been done:\n"
    "- tinyq/retry.py: delay() is now capped at max_delay.\n- Next: run pytest -q."
)


# --- logs in the agents' shapes -------------------------------------------------------------


def _cc(kind: str, uuid: str, message: dict, **extra) -> dict:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/repo",
        "sessionId": SESSION,
        "version": "2.1.29",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": "2026-02-02T21:55:18.284Z",
        **extra,
    }


def _cc_user(uuid: str, content, **extra) -> dict:
    return _cc("user", uuid, {"role": "user", "content": content}, **extra)


def _cc_call(uuid: str, mid: str, call_id: str, name: str, args: dict) -> dict:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
    return _cc("assistant", uuid, {"id": mid, "role": "assistant", "content": [block]})


def _cc_say(uuid: str, mid: str, text: str) -> dict:
    block = {"type": "text", "text": text}
    return _cc("assistant", uuid, {"id": mid, "role": "assistant", "content": [block]})


def _cc_result(uuid: str, call_id: str, text: str, error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}
    return _cc_user(uuid, [block])


def _claude_session(summary: list[dict]) -> list[dict]:
    """Work, then Claude Code's compaction (``summary``: its records), then more work."""
    return [
        _cc_user("u1", "The date parser in src/app/utils.py is missing; tests fail. Please fix."),
        _cc_call("a1", "m1", "toolu_1", "Bash", {"command": "python -m pytest tests/ -q"}),
        _cc_result(
            "u2",
            "toolu_1",
            "E   ImportError: cannot import name 'parse_date' from 'app.utils'\n1 error in 0.12s",
            error=True,
        ),
        _cc_say(
            "a2",
            "m2",
            "parse_date was never written. I'll add it to src/app/utils.py using "
            "datetime.strptime because the dates are ISO formatted.",
        ),
        _cc_call(
            "a3",
            "m2",
            "toolu_2",
            "Edit",
            {
                "file_path": "/repo/src/app/utils.py",
                "old_string": "import re\n",
                "new_string": "import re\nfrom datetime import datetime\n",
            },
        ),
        _cc_result("u3", "toolu_2", "The file /repo/src/app/utils.py has been updated."),
        *summary,
        _cc_call("a4", "m3", "toolu_3", "Bash", {"command": "python -m pytest -q"}),
        _cc_result("u5", "toolu_3", "........\n8 passed in 0.40s"),
        _cc_say("a5", "m4", "All 8 tests pass now."),
    ]


BOUNDARY = {
    "parentUuid": None,
    "logicalParentUuid": "u3",
    "isSidechain": False,
    "sessionId": SESSION,
    "type": "system",
    "subtype": "compact_boundary",
    "content": "Conversation compacted",
    "compactMetadata": {"trigger": "auto", "preTokens": 155025},
    "uuid": "c1",
}
MID_SESSION = 5  # the summary's message index in the session above


def _codex(kind: str, payload: dict) -> dict:
    return {"timestamp": "2025-10-20T08:00:01.000Z", "type": kind, "payload": payload}


def _codex_user(text: str) -> dict:
    content = [{"type": "input_text", "text": text}]
    return _codex("response_item", {"type": "message", "role": "user", "content": content})


def _codex_session(compacted: dict) -> list[dict]:
    meta = {"id": "0199f3a0-1111-7000-8000-000000000001", "cwd": "/w", "instructions": "Be brief."}
    call = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "pytest -q"}),
        "call_id": "call_1",
    }
    return [
        _codex("session_meta", meta),
        _codex_user("Fix the backoff in tinyq."),
        _codex("response_item", call),
        _codex(
            "response_item", {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
        ),
        _codex("compacted", compacted),
        _codex("event_msg", {"type": "context_compacted"}),
        _codex_user("Now add a test."),
    ]


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def mid_session(tmp_path) -> Path:
    summary = _cc_user(
        "u4", CONTINUED, isCompactSummary=True, isVisibleInTranscriptOnly=True, parentUuid="c1"
    )
    return _write(tmp_path / "cc" / f"{SESSION}.jsonl", _claude_session([BOUNDARY, summary]))


# --- marked on the transcript ---------------------------------------------------------------


def test_claude_code_continuation_mid_session_is_marked(mid_session):
    transcript = import_file(mid_session).transcript
    assert transcript.summaries == [MID_SESSION]
    summary = transcript.messages[MID_SESSION]
    assert (summary.role, summary.content, summary.summary) == ("user", CONTINUED, True)
    assert sum(bool(m.summary) for m in transcript.messages) == 1


def test_claude_code_summary_in_content_blocks_is_marked(tmp_path):
    blocks = [{"type": "text", "text": "condensed context"}]
    summary = _cc_user("u4", blocks, isCompactSummary=True)  # flagged: any wording
    transcript = import_file(_write(tmp_path / "s.jsonl", _claude_session([summary]))).transcript
    assert transcript.summaries == [MID_SESSION]
    assert transcript.messages[MID_SESSION].content == "condensed context"


def test_claude_code_continuation_as_message_0_is_marked(tmp_path):
    """Older Claude Code opened a new file with the summary, without the flag."""
    records = [
        _cc_user("u0", [{"type": "text", "text": CONTINUED}]),
        *_claude_session([])[1:],
    ]
    transcript = import_file(_write(tmp_path / "continued.jsonl", records)).transcript
    assert transcript.summaries == [0]
    assert transcript.messages[0].content == CONTINUED


def test_codex_compacted_item_is_marked(tmp_path):
    records = _codex_session({"message": CODEX_SUMMARY, "replacement_history": []})
    imported = import_file(_write(tmp_path / "rollout.jsonl", records))
    messages = imported.transcript.messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user", "user"]
    assert imported.transcript.summaries == [4]
    assert messages[4].content == CODEX_SUMMARY and messages[5].summary is None


def test_codex_summary_found_in_the_replacement_history(tmp_path):
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": CODEX_SUMMARY}],
        },
    ]
    records = _codex_session({"message": "", "replacement_history": history})
    transcript = import_file(_write(tmp_path / "rollout.jsonl", records)).transcript
    assert transcript.summaries == [4]
    assert transcript.messages[4].content == CODEX_SUMMARY


def test_codex_remote_compaction_is_noted_not_imported(tmp_path):
    history = [{"type": "compaction", "encrypted_content": "gAAAAB"}]
    records = _codex_session({"message": "", "replacement_history": history})
    imported = import_file(_write(tmp_path / "rollout.jsonl", records))
    assert imported.transcript.summaries == []
    assert len(imported.transcript.messages) == 5
    assert imported.warnings == [
        "line 5: a compaction record with no readable summary (a remote compaction: its "
        "summary is encrypted); skipped"
    ]


def test_chat_logs_by_wording_and_by_the_field(tmp_path):
    records = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": CONTINUED},
        {"role": "assistant", "content": "Resuming: running the tests."},
        {"role": "user", "content": "condensed earlier work", "summary": True},
        {"role": "user", "content": "Quote: This session is being continued from a previous"},
    ]
    transcript = import_file(_write(tmp_path / "chat.jsonl", records)).transcript
    assert transcript.summaries == [1, 3]


def test_hashes_of_logs_without_summaries_do_not_change():
    """The field is left out of every dump unless set, so hashes of such logs are as before."""
    plain = Message(role="user", content="hi", summary=False)
    assert plain.summary is None and "summary" not in plain.model_dump(exclude_none=True)
    transcript = Transcript(id="t", source="x", messages=[plain])
    before = Transcript(id="t", source="x", messages=[Message(role="user", content="hi")])
    assert transcript.content_hash == before.content_hash
    marked = Message(role="user", content="hi", summary=True)
    assert Transcript(id="t", source="x", messages=[marked]).content_hash != before.content_hash


# --- never a source of probes ---------------------------------------------------------------


def _probes(transcript: Transcript):
    n = len(transcript.messages)
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=1, tail_start=n - 1, end=n, tokens_before=0
    )
    return generate_probes(transcript, point, ProbeConfig(per_type=20))


def _unmarked(transcript: Transcript) -> Transcript:
    messages = [m.model_copy(update={"summary": None}) for m in transcript.messages]
    return transcript.model_copy(update={"messages": messages})


def test_no_probe_draws_on_a_summary(mid_session):
    transcript = import_file(mid_session).transcript
    probes = _probes(transcript)
    assert {p.type for p in probes} == {"recall", "artifact", "continuation", "decision"}
    assert all(e.message_index != MID_SESSION for p in probes for e in p.evidence)
    facts = [f.text for p in probes for f in p.gold.facts]
    assert not any("TypeError" in f or "PostgreSQL" in f for f in facts)
    # The summary holds what extractors take (an error "the user reported"): unmarked, it is.
    unmarked = _probes(_unmarked(transcript))
    assert any(e.message_index == MID_SESSION for p in unmarked for e in p.evidence)


def test_no_probe_draws_on_a_summary_at_message_0(tmp_path):
    records = [_cc_user("u0", CONTINUED), *_claude_session([])[1:]]
    transcript = import_file(_write(tmp_path / "continued.jsonl", records)).transcript
    n = len(transcript.messages)
    point = CompactionPoint(
        transcript_id=transcript.id, ordinal=0, head_end=0, tail_start=n - 1, end=n, tokens_before=0
    )
    probes = generate_probes(transcript, point, ProbeConfig(per_type=20))
    assert probes and all(e.message_index != 0 for p in probes for e in p.evidence)


# --- the manifest and inspect ---------------------------------------------------------------


def _files(path, *overrides: str):
    spec = json.dumps(path) if isinstance(path, list) else str(path)
    config = compose_config(
        ["transcript=files", f"transcript.path={spec}", "tracking=disabled", *overrides]
    )
    return validate(config).transcript


def test_manifest_lists_summaries_and_counts_them(mid_session, tmp_path):
    rollout = _write(tmp_path / "cc" / "rollout.jsonl", _codex_session({"message": CODEX_SUMMARY}))
    loaded = load_transcripts(_files(mid_session.parent))
    by_path = {f.path: f for f in loaded.manifest.files}
    assert by_path[str(mid_session)].summaries == [MID_SESSION]
    assert by_path[str(rollout)].summaries == [4]
    assert manifest_metrics(loaded.manifest)["transcripts/summaries"] == 2
    dumped = json.loads(loaded.manifest.model_dump_json())
    assert [f["summaries"] for f in dumped["files"]] == [[MID_SESSION], [4]]


def test_preview_shows_the_summaries(mid_session, capsys):
    assert preview_main([str(mid_session), "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["messages"]["summaries"] == [MID_SESSION]
    assert preview_main([str(mid_session)]) == 0
    assert f"1 already in the log, never probed: {MID_SESSION}" in capsys.readouterr().out


# --- sub-agent logs in a folder scan --------------------------------------------------------


@pytest.fixture
def projects(tmp_path, mid_session) -> tuple[Path, Path]:
    """A ``~/.claude/projects/<project>`` folder: a session and its Task sub-agent's log."""
    side = {"isSidechain": True, "agentId": "a9f4657"}
    records = [
        {**_cc_user("s1", "Find every caller of reserve()."), **side},
        {**_cc_call("s2", "m9", "toolu_9", "Grep", {"pattern": "reserve\\("}), **side},
        {**_cc_result("s3", "toolu_9", "src/orders.py:12"), **side},
        {**_cc_say("s4", "m10", "One caller: src/orders.py line 12."), **side},
    ]
    agent = _write(mid_session.parent / SESSION / "subagents" / "agent-a9f4657.jsonl", records)
    return mid_session.parent, agent


def test_a_folder_scan_skips_sub_agent_logs_with_a_note(projects, mid_session):
    folder, agent = projects
    for spec in (folder, f"{folder}/**/*.jsonl"):  # on_error=fail, the default
        loaded = load_transcripts(_files(spec))
        assert [f.path for f in loaded.manifest.files] == [str(mid_session)]
        assert loaded.manifest.skipped == [SkippedFile(path=str(agent), error=SUBAGENT_SKIPPED)]
        assert SUBAGENT_SKIPPED.startswith("sub-agent log (sidechain)")


def test_a_sub_agent_log_named_directly_is_refused(projects):
    _, agent = projects
    with pytest.raises(UserError) as caught:
        load_transcripts(_files(agent))
    message = str(caught.value)
    assert message.startswith(f"{agent}: all 4 conversation events are a sub-agent's")
    assert "\n" not in message


def test_preview_skips_sub_agent_logs_of_a_folder(projects, capsys):
    folder, agent = projects
    assert preview_main([str(folder)]) == 0
    out = capsys.readouterr()
    assert f"skipped {agent}: sub-agent log (sidechain)" in " ".join(out.out.split())
    assert "2 files, 0 could not be imported, 1 skipped (sub-agent logs, side files)" in out.out
    assert preview_main([str(agent)]) == 1
    assert "a Task sub-agent's log" in capsys.readouterr().err
