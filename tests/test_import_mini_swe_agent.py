"""mini-swe-agent trajectories (``.traj.json``): the v1 text protocol and v2 tool calls,
detected by content, with the final ``exit`` message kept as a note, not a message."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from conftest import compose_config

from benchmark.config.schema import validate
from benchmark.preview import main
from benchmark.run.pipeline import run_job
from benchmark.transcript.formats import import_file, mini_swe_agent

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "mini_swe_agent"
TEXT = FIXTURES / "reserve_text_protocol.traj.json"
CALLS = FIXTURES / "reserve_tool_calls.traj.json"
EXIT_NOTE = "mini-swe-agent exit: 'Submitted' ({where}, submission of 422 characters)"


def _calls(t) -> list:
    return [c for m in t.messages for c in m.tool_calls or []]


def test_text_protocol_actions_become_paired_bash_calls():
    imported = import_file(TEXT)
    t = imported.transcript
    assert imported.format == "mini_swe_agent" and imported.warnings == []
    assert Counter(m.role for m in t.messages) == {
        "system": 1,
        "user": 2,  # the task, and the format error after a turn with two commands
        "assistant": 9,
        "tool": 8,
    }
    calls = _calls(t)
    assert {c.function.name for c in calls} == {"bash"}
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == [c.id for c in calls]
    assert calls[2].function.args() == {"command": "cd /srv/depot && python repro_reserve.py"}
    third = next(m for m in t.messages if m.tool_call_id == calls[2].id)
    assert third.content == "<returncode>0</returncode>\n<output>\nBUG: on hand -2\n</output>"
    two = next(m for m in t.messages if m.content and "cat tests/conftest.py" in m.content)
    assert two.tool_calls is None  # rejected by the agent: no call, the error is a user turn
    assert t.messages[-1].content.startswith("diff --git a/depot/stock.py")  # v1's submission
    assert imported.notes == [EXIT_NOTE.format(where="info.exit_status")]


def test_tool_calls_pair_and_exit_is_a_note():
    imported = import_file(CALLS)
    t = imported.transcript
    assert imported.format == "mini_swe_agent"
    assert "exit" not in {m.role for m in t.messages}
    assert not any(m.content and m.content.startswith("diff --git") for m in t.messages)
    calls = _calls(t)
    assert len(calls) == 9 and {c.function.name for c in calls} == {"bash"}
    answered = [m.tool_call_id for m in t.messages if m.role == "tool"]
    assert answered == [c.id for c in calls[:-1]]  # two parallel calls answered in order
    assert t.messages[1].content.startswith("Please solve this issue")  # a list of text parts
    assert imported.notes == [
        EXIT_NOTE.format(where="an 'exit' message, not imported"),
    ]
    # The submitting command's output became the exit message: reported as having none.
    assert imported.warnings == [
        "tool call 'bash' (call_submit) at message 19 has no result (the log ends)"
    ]


def test_other_non_chat_entries_are_notes(tmp_path):
    data = json.loads(CALLS.read_text())
    data["messages"][3:3] = [
        {"type": "reasoning", "summary": []},
        {"role": "critic", "content": "looks fine"},
    ]
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(data))
    imported = import_file(path)
    assert imported.transcript.messages == import_file(CALLS).transcript.messages
    assert imported.notes[1:] == [
        "1 'critic' entry not imported (no chat role)",
        "1 type 'reasoning' entry not imported (no chat role)",
    ]


def test_responses_api_items(tmp_path):
    messages = [
        {"role": "system", "content": "Work in the shell."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Listing files."}],
        },
        {
            "type": "function_call",
            "call_id": "fc_1",
            "name": "bash",
            "arguments": '{"command": "ls"}',
        },
        {"type": "function_call_output", "call_id": "fc_1", "output": "README.md\n"},
        {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}},
    ]
    path = tmp_path / "x.traj.json"
    path.write_text(json.dumps({"info": {"mini_version": "2.1.0"}, "messages": messages}))
    imported = import_file(path)
    t = imported.transcript
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool"]
    assert t.messages[2].content == "Listing files."
    assert t.messages[2].tool_calls[0].function.args() == {"command": "ls"}
    assert t.messages[3].tool_call_id == "fc_1" and imported.warnings == []
    assert imported.notes[0].startswith("mini-swe-agent exit: 'LimitsExceeded'")


def test_a_configured_action_regex_is_used(tmp_path):
    data = json.loads(TEXT.read_text())
    for m in data["messages"]:
        if m["role"] == "assistant":
            m["content"] = m["content"].replace("```bash\n", "<cmd>").replace("\n```", "</cmd>")
    data["info"]["config"]["model"]["action_regex"] = "<cmd>(.*?)</cmd>"
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(data))
    assert len(_calls(import_file(path).transcript)) == 8


def test_detected_by_content_not_name(tmp_path):
    copy = tmp_path / "session.jsonl"
    shutil.copy(CALLS, copy)
    assert import_file(copy).format == "mini_swe_agent"


def test_claims_mini_swe_agent_and_nothing_else():
    for path in (TEXT, CALLS):
        assert mini_swe_agent.claims(json.loads(path.read_text()))
    messages = [{"role": "user", "content": "hi"}]
    assert mini_swe_agent.claims({"messages": [*messages, {"role": "exit", "content": ""}]})
    assert mini_swe_agent.claims({"info": {"exit_status": "Submitted"}, "messages": messages})
    foreign = [
        {"messages": messages},  # OpenAI chat
        {"messages": messages, "info": {"title": "x"}},
        messages,
        {"history": messages, "info": {"exit_status": "submitted"}},  # SWE-agent
        {"trajectory_format": "mini-swe-agent-1"},  # no messages
    ]
    assert not any(mini_swe_agent.claims(v) for v in foreign)


def test_preview_shows_the_exit_note(capsys):
    assert main([str(CALLS)]) == 0
    out = capsys.readouterr().out
    assert "mini_swe_agent" in out and "note: mini-swe-agent exit: 'Submitted'" in out


def test_a_job_on_the_fixtures_gives_probes(tmp_path):
    config = validate(
        compose_config(
            [
                "transcript=files",
                f"transcript.path={FIXTURES}",
                "compaction.context_window=900",
                "compaction.tail_tokens=150",
                "tracking=disabled",
                "cache.dir=null",
                "execution.progress=off",
            ]
        )
    )
    result = run_job(config)
    assert [f.format for f in result.inputs.files] == ["mini_swe_agent"] * 2
    assert all(
        f.notes and f.notes[0].startswith("mini-swe-agent exit") for f in result.inputs.files
    )
    per_file = Counter(r.probe.transcript_id for r in result.probe_results)
    assert set(per_file) == {p.name.removesuffix(".json") for p in FIXTURES.iterdir()}
    assert all(not r.failed and r.score is not None for r in result.probe_results)
