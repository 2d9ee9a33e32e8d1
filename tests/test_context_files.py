"""Context files: a session-prefix context is written once per transcript and pointed to;
a compacted one is written whole; every pointer resolves to exactly the point's context."""

from __future__ import annotations

import json

from benchmark.llm.prompting import render_all
from benchmark.run.compaction import CompactionPoint
from benchmark.run.context_files import ContextFiles
from benchmark.run.results import PointResult
from benchmark.transcript.models import Message

MESSAGES = [Message(role="system", content="sys")] + [
    Message(role="user" if n % 2 else "assistant", content=f"line {n}\nmore {n}") for n in range(12)
]


def _point(ordinal: int, context: list[Message], end: int) -> PointResult:
    point = CompactionPoint(
        transcript_id="t",
        ordinal=ordinal,
        head_end=1,
        tail_start=end - 1,
        end=end,
        tokens_before=sum(m.tokens for m in MESSAGES[:end]),
    )
    return PointResult(
        point=point, tokens_after=sum(m.tokens for m in context), context=context, probes=[]
    )


def test_prefix_contexts_point_into_one_session_file(tmp_path):
    files = ContextFiles(tmp_path)
    for k, end in enumerate((5, 9, 13)):
        assert files.write(_point(k, MESSAGES[:end], end)) == f"contexts/t/point_{k}.txt"
    session = (tmp_path / "t" / "session.txt").read_text()
    assert session == render_all(MESSAGES) + "\n"  # each message written once
    for k, end in enumerate((5, 9, 13)):
        pointer = json.loads((tmp_path / "t" / f"point_{k}.json").read_text())
        assert pointer["session"] == "session.jsonl" and pointer["messages"] == end
        said = (tmp_path / "t" / f"point_{k}.txt").read_text()
        lines = int(said.split("the first ")[1].split(" lines")[0])
        assert "".join(session.splitlines(keepends=True)[:lines]) == (
            render_all(MESSAGES[:end]) + "\n"
        )
    jsonl = (tmp_path / "t" / "session.jsonl").read_text().splitlines()
    assert [Message.model_validate_json(line) for line in jsonl] == MESSAGES


def test_a_compacted_context_is_written_whole(tmp_path):
    files = ContextFiles(tmp_path)
    compacted = [MESSAGES[0], Message(role="user", content="summary"), *MESSAGES[-2:]]
    files.write(_point(0, compacted, 13))
    assert (tmp_path / "t" / "point_0.txt").read_text() == render_all(compacted) + "\n"
    assert len(json.loads((tmp_path / "t" / "point_0.json").read_text())["messages"]) == 4
    assert not (tmp_path / "t" / "session.txt").exists()
