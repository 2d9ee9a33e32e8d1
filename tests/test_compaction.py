import pytest
from pydantic import ValidationError

from benchmark.run.compaction import CompactionConfig, find_points, segments
from benchmark.transcript.models import FunctionCall, Message, ToolCall, Transcript


def session(turns: int) -> Transcript:
    msgs = [Message(role="system", content="sys"), Message(role="user", content="task")]
    for i in range(turns):
        call = ToolCall(
            id=f"c{i}", function=FunctionCall(name="bash", arguments='{"command": "ls"}')
        )
        msgs.append(Message(role="assistant", content=f"step {i}", tool_calls=[call]))
        msgs.append(Message(role="tool", tool_call_id=f"c{i}", content="word " * 50))
    return Transcript(id="t", source="test", messages=msgs)


def test_points_split_head_region_tail():
    t = session(40)
    cfg = CompactionConfig(context_window=1000, trigger_ratio=0.8, head_messages=2, tail_tokens=200)
    points = find_points(t, cfg)
    assert len(points) > 1
    counts = t.message_tokens
    for k, p in enumerate(points):
        assert p.ordinal == k
        assert p.head_end == 2 < p.tail_start <= p.end <= len(t.messages)
        assert sum(counts[p.tail_start : p.end]) <= 200
        assert p.tokens_before == sum(counts[: p.end]) > 800
        seg = segments(t, p)
        assert seg.messages == t.messages[: p.end]
        assert seg.region_offset == 2
        # The tail never starts with an orphaned tool result.
        assert not seg.tail or seg.tail[0].role != "tool"
        # A point never falls between a tool call and its result.
        assert p.end == len(t.messages) or t.messages[p.end].role != "tool"
    # Later points lie later in the session.
    assert [p.end for p in points] == sorted(p.end for p in points)


def test_last_point_only():
    t = session(40)
    cfg = dict(context_window=1000, trigger_ratio=0.8, head_messages=2, tail_tokens=200)
    every = find_points(t, CompactionConfig(**cfg))
    last = find_points(t, CompactionConfig(**cfg, points="last"))
    assert len(last) == 1 and last[0].end == every[-1].end and last[0].ordinal == 0


def test_short_session_has_no_point():
    assert find_points(session(2), CompactionConfig(context_window=100_000)) == []


def test_tail_must_fit_under_trigger():
    with pytest.raises(ValidationError, match="tail_tokens"):
        CompactionConfig(context_window=1000, trigger_ratio=0.5, tail_tokens=600)
