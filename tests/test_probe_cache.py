"""The probe cache: content-addressed, atomic, tolerant of corrupt files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.set_cache import cache_key, load_or_generate
from benchmark.run.compaction import CompactionPoint
from benchmark.run.storage import PROBE_DIR, entry_path
from benchmark.transcript.models import Message, Transcript

MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the importer tolerate blank lines."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {
                    "name": "bash",
                    "arguments": json.dumps({"command": "python import.py"}),
                },
            }
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "ValueError: empty row at line 12"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "b",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": json.dumps(
                        {
                            "path": "src/importer/rows.py",
                            "content": "def skip_blank_rows(rows):\n    pass\n",
                        }
                    ),
                },
            }
        ],
    },
    {"role": "tool", "tool_call_id": "b", "content": "wrote src/importer/rows.py"},
    {
        "role": "assistant",
        "content": "We'll use a generator instead of a list because the "
        "files are large.\nNext steps:\n1. Wire skip_blank_rows "
        "into the importer",
    },
    {"role": "user", "content": "ok"},
]


def _transcript(tid: str = "t1", source: str = "a/t1.json", messages=MESSAGES) -> Transcript:
    return Transcript(id=tid, source=source, messages=[Message.model_validate(m) for m in messages])


POINT = CompactionPoint(
    transcript_id="t1", ordinal=0, head_end=2, tail_start=7, end=8, tokens_before=0
)
CONFIG = ProbeConfig()


def test_miss_writes_and_hit_reads_the_file(tmp_path: Path):
    transcript = _transcript()
    probes = load_or_generate(transcript, POINT, CONFIG, tmp_path)
    assert probes == generate_probes(transcript, POINT, CONFIG)
    assert {p.type for p in probes} == {"recall", "artifact", "continuation", "decision"}
    path = entry_path(tmp_path, PROBE_DIR, cache_key(transcript, POINT, CONFIG))
    assert path.is_file() and path.parent == tmp_path / "probes"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left

    # Prove a hit is served from the file, not re-extracted: edit the stored question.
    stored = json.loads(path.read_text())
    stored["probes"][0]["question"] = "edited in the cache"
    path.write_text(json.dumps(stored))
    again = load_or_generate(transcript, POINT, CONFIG, tmp_path)
    assert again[0].question == "edited in the cache"
    assert again[1:] == probes[1:]


def test_key_follows_content_not_location(tmp_path: Path):
    base = _transcript()
    moved = _transcript(source="/elsewhere/copy/t1.json")
    assert cache_key(base, POINT, CONFIG) == cache_key(moved, POINT, CONFIG)
    changed = _transcript(messages=[*MESSAGES[:-1], {"role": "user", "content": "ok!"}])
    assert cache_key(base, POINT, CONFIG) != cache_key(changed, POINT, CONFIG)
    assert cache_key(base, POINT, CONFIG) != cache_key(base, POINT, ProbeConfig(seed=1))
    assert cache_key(base, POINT, CONFIG) != cache_key(base, POINT, ProbeConfig(per_type=2))
    other_point = POINT.model_copy(update={"tail_start": 6})
    assert cache_key(base, POINT, CONFIG) != cache_key(base, other_point, CONFIG)


def test_hit_is_restamped_for_the_requesting_transcript(tmp_path: Path):
    first = load_or_generate(_transcript(), POINT, CONFIG, tmp_path)
    renamed = _transcript(tid="renamed", source="b/renamed.json")
    point = POINT.model_copy(update={"transcript_id": "renamed", "ordinal": 2})
    hit = load_or_generate(renamed, point, CONFIG, tmp_path)
    assert len(list((tmp_path / "probes").iterdir())) == 1  # same content, same entry
    assert hit == generate_probes(renamed, point, CONFIG)
    assert [p.id.split("/")[0] for p in hit] == ["renamed"] * len(first)
    assert all(p.point == 2 and p.id.split("/")[1] == "p2" for p in hit)


@pytest.mark.parametrize(
    "garbage", ["{not json", '{"key": "other", "probes": []}', '{"probes": [{"id": 1}]}', ""]
)
def test_corrupt_file_is_regenerated(tmp_path: Path, garbage: str):
    transcript = _transcript()
    path = entry_path(tmp_path, PROBE_DIR, cache_key(transcript, POINT, CONFIG))
    path.parent.mkdir(parents=True)
    path.write_text(garbage)
    probes = load_or_generate(transcript, POINT, CONFIG, tmp_path)
    assert probes == generate_probes(transcript, POINT, CONFIG)
    assert json.loads(path.read_text())["key"] == cache_key(transcript, POINT, CONFIG)


def test_none_disables_the_cache(tmp_path: Path):
    transcript = _transcript()
    assert load_or_generate(transcript, POINT, CONFIG, None) == generate_probes(
        transcript, POINT, CONFIG
    )
    assert list(tmp_path.iterdir()) == []
