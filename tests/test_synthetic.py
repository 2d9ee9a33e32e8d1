"""The synthetic session generator: determinism, size, well-formed tool use, planted facts."""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
from importlib.resources import files

import pytest

from benchmark.redaction import Redactor
from benchmark.run.compaction import CompactionConfig, find_points
from benchmark.transcript import generated
from benchmark.transcript.models import Transcript
from benchmark.transcript.synthetic import generate

TOOL_ARGS = {
    "read_file": {"path"},
    "write_file": {"path", "content"},
    "edit_file": {"path", "old_str", "new_str"},
    "bash": {"command"},
    "grep": {"pattern", "path"},
}
FILE_KINDS = ("file_created", "file_modified", "file_read")
ALL_KINDS = {"error", "command", "version", "decision", "pending", *FILE_KINDS}
# Policy names and class names: the judge must never see them, so no session may contain them.
# ("none" is a policy name too, but the word and Python's None are too common to ban; the
# blinding test of the policies matches it only as a whole word in hand-built sessions.)
FORBIDDEN = (
    "truncate",  # also "truncated", "Truncate"
    "observation_mask",
    "tool_clear",
    "anchor_index",
    "NoCompaction",
    "ObservationMask",
    "ToolResultClearing",
    "AnchorIndex",
)


@lru_cache(maxsize=8)
def session(seed: int, target: int) -> Transcript:
    return generate(seed, target)


def dump(transcript: Transcript) -> str:
    return json.dumps(
        {
            "messages": [m.model_dump(exclude_none=True) for m in transcript.messages],
            "facts": [f.model_dump() for f in transcript.ground_truth],
        },
        sort_keys=True,
    )


def test_same_seed_and_target_give_the_same_transcript_byte_for_byte():
    first, second = generate(7, 30_000), generate(7, 30_000)
    assert dump(first) == dump(second)
    assert first.source == "synthetic:seed=7"
    assert first.id == "synthetic-s7-t30000"
    assert generate(7, 30_000, transcript_id="mine").id == "mine"


def test_different_seeds_give_different_projects():
    a, b = session(1, 60_000), session(2, 60_000)
    assert a.content_hash != b.content_hash
    assert a.messages[1].content != b.messages[1].content  # the task names another project
    files_a = {f.value for f in a.ground_truth if f.kind == "file_read"}
    files_b = {f.value for f in b.ground_truth if f.kind == "file_read"}
    assert files_a != files_b


def test_a_200k_target_is_reached():
    transcript = session(3, 210_000)
    assert transcript.total_tokens >= 210_000
    assert sum(m.tokens for m in transcript.messages) == transcript.total_tokens


@pytest.mark.parametrize("target", [5_000, 12_000])
def test_a_small_target_ends_near_it(target):
    transcript = generate(4, target)
    assert target <= transcript.total_tokens < target + 3_000
    # Generation stops at the first turn boundary past the target.
    assert transcript.total_tokens - transcript.message_tokens[-1] < target + 3_000


def test_session_shape_and_tool_calls_pair_with_results():
    transcript = session(5, 60_000)
    messages = transcript.messages
    assert messages[0].role == "system" and "read_file" in messages[0].content
    assert messages[1].role == "user"
    seen_ids: set[str] = set()
    i = 0
    while i < len(messages):
        message = messages[i]
        assert message.role != "tool", f"tool message {i} answers no call"
        calls = message.tool_calls or []
        for offset, call in enumerate(calls, 1):
            assert call.id not in seen_ids
            seen_ids.add(call.id)
            assert set(call.function.args()) == TOOL_ARGS[call.function.name]
            result = messages[i + offset]
            assert result.role == "tool" and result.tool_call_id == call.id
            assert result.content
        i += 1 + len(calls)
    assert len(seen_ids) > 100


def test_every_planted_value_is_verbatim_in_its_message():
    for seed, target in ((5, 60_000), (3, 210_000)):
        transcript = session(seed, target)
        texts = [m.render() for m in transcript.messages]
        for fact in transcript.ground_truth:
            assert fact.value in texts[fact.message_index], fact
            if fact.kind == "decision":
                text = texts[fact.message_index]
                assert fact.details["rationale"] in text
                assert fact.details["alternatives"]
                assert all(alt in text for alt in fact.details["alternatives"])
            if fact.kind == "error":
                assert transcript.messages[fact.message_index].role == "tool"
            if fact.kind == "version":
                assert f"pin {fact.key} to {fact.value}" in texts[fact.message_index]


def test_all_fact_kinds_appear_in_a_mid_size_session():
    for seed in (5, 6, 8):
        kinds = {fact.kind for fact in session(seed, 60_000).ground_truth}
        assert kinds >= ALL_KINDS, (seed, ALL_KINDS - kinds)
        assert "distractor" in kinds


def test_errors_are_unique_and_get_fixed():
    transcript = session(3, 210_000)
    errors = [f for f in transcript.ground_truth if f.kind == "error"]
    assert len({f.value for f in errors}) == len(errors)
    fixed = [f for f in errors if f.details["fixed_at"] is not None]
    assert len(fixed) >= len(errors) - 1  # only the last one may be cut off by the target
    assert all(f.details["fixed_at"] > f.message_index for f in fixed)
    commands = {f.value for f in transcript.ground_truth if f.kind == "command"}
    assert {f.key for f in errors} <= commands  # each error is keyed by the command that failed


def test_pending_tasks_open_close_and_some_stay_open():
    transcript = session(3, 210_000)
    texts = [m.render() for m in transcript.messages]
    pending = [f for f in transcript.ground_truth if f.kind == "pending"]
    assert len({f.value for f in pending}) == len(pending)
    for fact in pending:
        assert f"- [ ] {fact.value}" in texts[fact.message_index]
        assert fact.details["opened_at"] == fact.message_index
        closed = fact.details["closed_at"]
        if closed is not None:
            assert closed > fact.message_index
            assert f"- [x] {fact.value}" in texts[closed]
    assert any(f.details["closed_at"] is None for f in pending)
    assert sum(f.details["closed_at"] is not None for f in pending) > len(pending) / 2


def test_facts_are_spread_over_the_whole_session():
    transcript = session(3, 210_000)
    n = len(transcript.messages)
    for third in range(3):
        lo, hi = n * third // 3, n * (third + 1) // 3
        kinds = {f.kind for f in transcript.ground_truth if lo <= f.message_index < hi}
        assert {"error", "command", "decision", "pending", "file_modified", "file_read"} <= kinds


def test_distractors_are_near_misses_of_planted_facts():
    transcript = session(3, 210_000)
    texts = [m.render() for m in transcript.messages]
    distractors = [f for f in transcript.ground_truth if f.kind == "distractor"]
    of = {f.details["of"] for f in distractors}
    assert {"file_modified", "version", "error"} <= of
    for fact in distractors:
        assert fact.value != fact.details["target"]
        assert fact.value in texts[fact.message_index]
    versions = {f.key: f.value for f in transcript.ground_truth if f.kind == "version"}
    for fact in distractors:
        if fact.details["of"] == "version":
            assert versions[fact.key] == fact.details["target"]


def test_no_policy_names_or_secrets_in_any_message():
    for seed, target in ((3, 210_000), (9, 60_000), (10, 60_000)):
        for message in session(seed, target).messages:
            text = message.render().lower()
            for word in FORBIDDEN:
                assert word.lower() not in text, (seed, word, text[:200])
            assert "api_key" not in text and "password" not in text


def test_generated_code_uses_none_naturally():
    text = "\n".join(m.render() for m in session(3, 210_000).messages)
    assert "-> None:" in text
    assert " | None" in text
    assert " is None" in text


def test_long_sessions_compact_repeatedly():
    transcript = session(3, 210_000)
    config = CompactionConfig(context_window=100_000, tail_tokens=15_000)
    points = find_points(transcript, config)
    assert len(points) >= 2
    first = points[0]
    facts_in_regions = [
        f for f in transcript.ground_truth if first.head_end <= f.message_index < first.tail_start
    ]
    assert {"error", "decision", "version", "pending"} <= {f.kind for f in facts_in_regions}


def test_the_data_files_are_part_of_the_session_cache_key(tmp_path, monkeypatch):
    """Editing a table or template must regenerate cached sessions, as editing code does."""
    package = files("benchmark.transcript.synthetic")
    keys = []
    for name, edit in (("before", ""), ("after", "\n# edited\n")):
        copy = tmp_path / name
        shutil.copytree(str(package), copy, ignore=shutil.ignore_patterns("__pycache__"))
        stories = copy / "data" / "bug_stories.yaml"
        stories.write_text(stories.read_text() + edit)
        monkeypatch.setattr(generated, "_GENERATOR", copy)
        keys.append(generated.cache_key(7, 30_000, Redactor()))
    assert keys[0] != keys[1]
