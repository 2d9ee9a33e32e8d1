"""SWE-agent trajectories: both generations of ``history`` and ``trajectory``-only files,
and the real trajectories in ../shared/data/swe-agent (skipped where absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import SHARED_DATA, compose_config, probes_at_last_point, swe_agent_job

from benchmark.config.schema import validate
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.run.compaction import CompactionConfig, find_points
from benchmark.run.pipeline import run_job
from benchmark.transcript.formats import import_file

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "swe_agent"
TOOLS = {"find_file": 1, "open": 1, "edit": 2, "create": 1, "bash": 2, "submit": 1}


def _tools(transcript) -> Counter:
    return Counter(c.function.name for m in transcript.messages for c in m.tool_calls or [])


@pytest.mark.parametrize("name", ["slugify_text_protocol", "slugify_function_calls"])
def test_history_generations_import_alike(name):
    imported = import_file(FIXTURES / f"{name}.traj")
    t = imported.transcript
    assert imported.format == "swe_agent"
    assert Counter(m.role for m in t.messages) == {
        "system": 1,
        "user": 1,
        "assistant": 8,
        "tool": 7,
    }
    assert _tools(t) == TOOLS
    calls = [c.id for m in t.messages for c in m.tool_calls or []]
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == calls[:-1]
    # The final submit has no observation: reported, not dropped.
    assert imported.warnings == [
        f"tool call 'submit' ({calls[-1]}) at message 16 has no result (the log ends)"
    ]
    assert "AttributeError: 'NoneType' object has no attribute 'lower'" in t.messages[1].content
    assert t.messages[2].content == "I'll look for the slug module first."  # the thought only


def test_text_protocol_commands_become_calls():
    t = import_file(FIXTURES / "slugify_text_protocol.traj").transcript
    calls = [c.function for m in t.messages for c in m.tool_calls or []]
    assert calls[1].args() == {"_line": "open textkit/slug.py", "path": "textkit/slug.py"}
    assert calls[2].name == "edit" and "unicodedata.normalize" in calls[2].args()["new_str"]
    assert calls[5].args() == {"command": "python check_slug.py"}
    assert t.messages[13].content.startswith("creme-brulee ''")  # its observation


def test_trajectory_only_file():
    imported = import_file(FIXTURES / "slugify_trajectory_only.traj")
    t = imported.transcript
    assert Counter(m.role for m in t.messages) == {"assistant": 8, "tool": 8}
    assert _tools(t) == TOOLS and imported.warnings == []


@pytest.mark.parametrize("name", ["slugify_text_protocol", "slugify_function_calls"])
def test_probes_from_the_fixtures(name):
    probes = probes_at_last_point(import_file(FIXTURES / f"{name}.traj").transcript)
    facts = {(p.type, f.kind, f.text) for p in probes for f in p.gold.facts}
    assert ("artifact", "created", "check_slug.py") in facts
    assert ("artifact", "modified", "/repo/textkit/slug.py") in facts
    assert any(k == "identifier" and "unicodedata.normalize" in v for _, k, v in facts)


def test_reused_call_ids_pair_with_the_nearest_unanswered_call():
    """Real function-calling logs reuse ids: here ``open`` and ``edit`` of a second file
    reuse the first file's call ids. Each result answers its own call, ids are made unique,
    and the file's one warning names the reused ids and where they recur."""
    imported = import_file(FIXTURES / "timeout_reused_call_ids.traj")
    t = imported.transcript
    calls = [c.id for m in t.messages for c in m.tool_calls or []]
    assert calls == ["call_1", "call_2", "call_1#2", "call_2#2", "call_3"]
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == calls
    assert "/repo/app/cli.py" in t.messages[7].content  # the second open's own result
    (warning,) = imported.warnings
    assert "2 tool call(s) reuse" in warning
    assert "'call_1' at message 6" in warning and "'call_2' at message 8" in warning


def test_reused_call_ids_credit_each_edit_to_its_own_file():
    """SWE-agent's ``edit`` names no file: the file is the one its result shows open, so a
    result paired with the wrong call credits the edit to the wrong file."""
    t = import_file(FIXTURES / "timeout_reused_call_ids.traj").transcript
    config = CompactionConfig(
        context_window=t.total_tokens, trigger_ratio=0.97, head_messages=2, tail_tokens=40
    )
    probes = generate_probes(t, find_points(t, config)[-1], ProbeConfig(types=["artifact"]))
    facts = {p.question: {(f.kind, f.text) for f in p.gold.facts} for p in probes}
    config_py = facts["What did we change in `/repo/app/config.py`?"]
    cli_py = facts["What did we change in `/repo/app/cli.py`?"]
    assert ("detail", "DEFAULT_TIMEOUT = 30") in config_py
    assert ("identifier", "--timeout") in cli_py
    assert ("identifier", "--timeout") not in config_py
    listed = set().union(*facts.values())
    assert {("modified", "/repo/app/config.py"), ("modified", "/repo/app/cli.py")} <= listed
    assert ("read", "/repo/app/cli.py") not in listed


# --- the real trajectories -------------------------------------------------------------------

REAL = {  # messages, tool calls, warnings (the final submit of the older two has no observation)
    "6e44b9__sweagenttestrepo-1c2844": (10, 4, 0),
    "pydicom__pydicom-1458": (26, 12, 1),
    "swe-agent__test-repo-i1": (12, 5, 1),
}


@pytest.mark.parametrize("stem", sorted(REAL))
def test_real_trajectories_import(stem, shared_data):
    imported = import_file(shared_data / "swe-agent" / f"{stem}.traj")
    t = imported.transcript
    messages, calls, warnings = REAL[stem]
    assert imported.format == "swe_agent"
    assert (len(t.messages), sum(_tools(t).values()), len(imported.warnings)) == (
        messages,
        calls,
        warnings,
    )
    ids = {c.id for m in t.messages for c in m.tool_calls or []}
    assert {m.tool_call_id for m in t.messages if m.role == "tool"} <= ids


def test_real_folder_in_the_shared_data():
    if not (SHARED_DATA / "swe-agent").is_dir():
        pytest.skip("../shared/data/swe-agent is not present beside the repository")
    assert sorted(p.stem for p in (SHARED_DATA / "swe-agent").glob("*.traj")) == sorted(REAL)


def test_a_run_over_the_real_folder(shared_data):
    """The issue's check: the folder imports and a job over it gives probes of at least
    three types for every trajectory."""
    config = validate(compose_config(swe_agent_job(shared_data, "execution.progress=off")))
    result = run_job(config)
    assert sorted(result.transcripts) == sorted(REAL)
    assert [f.format for f in result.inputs.files] == ["swe_agent"] * 3
    types: dict[str, set[str]] = {stem: set() for stem in REAL}
    for r in result.probe_results:
        types[r.probe.transcript_id].add(r.probe.type)
        assert not r.failed and r.score is not None  # answered and judged
    assert all(len(found) >= 3 for found in types.values()), types
