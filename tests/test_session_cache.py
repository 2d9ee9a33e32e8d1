"""Generated sessions: cached by content, never shared between seeds, enough clusters by default."""

from __future__ import annotations

import hashlib
import json
import logging

import pytest
from conftest import compose_config

from benchmark.config.schema import validate
from benchmark.redaction import Redactor, redactor_for
from benchmark.run.compaction import find_points
from benchmark.run.storage import SESSION_DIR, entries
from benchmark.text import tokens
from benchmark.transcript.generated import cache_key, load_or_generate, session_seed
from benchmark.transcript.sources import load_transcripts

SEED, TARGET = 5, 20_000


def _rewrite(path, edit) -> None:
    """Apply ``edit`` to a stored entry's body and keep its checksum valid."""
    header, body = path.read_text(encoding="utf-8").split("\n", 1)
    entry = json.loads(body)
    edit(entry)
    body = json.dumps(entry)
    meta = {**json.loads(header), "sha256": hashlib.sha256(body.encode()).hexdigest()}
    path.write_text(json.dumps(meta) + "\n" + body, encoding="utf-8")


def test_a_warm_load_reads_back_the_stored_session(tmp_path):
    redactor = Redactor()
    cold, counts = load_or_generate(SEED, TARGET, "first", redactor, tmp_path)
    [path] = entries(tmp_path / SESSION_DIR)
    warm, warm_counts = load_or_generate(SEED, TARGET, "second", redactor, tmp_path)
    assert (cold.id, warm.id) == ("first", "second") and counts == warm_counts == {}
    assert warm.messages == cold.messages and warm.ground_truth == cold.ground_truth
    assert warm.content_hash == cold.content_hash
    # The stored token counts are what counting again gives, per message and in total.
    recount = [tokens.count(m.render()) + tokens.MESSAGE_OVERHEAD for m in warm.messages]
    assert warm.message_tokens == cold.message_tokens == recount
    assert [m.tokens for m in warm.messages] == recount
    # What a warm load returns comes from the file: an edit (checksum kept valid) shows.
    _rewrite(path, lambda e: e["transcript"]["messages"][1].update(content="edited"))
    edited, _ = load_or_generate(SEED, TARGET, "third", redactor, tmp_path)
    assert edited.messages[1].content == "edited"


def _truncate(path):
    path.write_bytes(path.read_bytes()[:5000])


def _garbage(path):
    path.write_bytes(b"\xff\xfe\x00 not json")


def _empty(path):
    path.write_bytes(b"")


def _invalid_entry(path):
    _rewrite(path, lambda e: e.update(transcript={"id": 1}))


def _counts_mismatch(path):
    _rewrite(path, lambda e: e.update(message_tokens=e["message_tokens"][:-1]))


def _other_key(path):
    header, body = path.read_text(encoding="utf-8").split("\n", 1)
    path.write_text(json.dumps({**json.loads(header), "key": "0" * 64}) + "\n" + body)


@pytest.mark.parametrize(
    "corrupt", [_truncate, _garbage, _empty, _invalid_entry, _counts_mismatch, _other_key]
)
def test_an_unusable_entry_is_generated_again_never_an_error(tmp_path, caplog, corrupt):
    redactor = Redactor()
    cold, _ = load_or_generate(SEED, TARGET, "s", redactor, tmp_path)
    [path] = entries(tmp_path / SESSION_DIR)
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="benchmark.transcript.generated"):
        again, counts = load_or_generate(SEED, TARGET, "s", redactor, tmp_path)
    assert again.messages == cold.messages and counts == {}
    assert str(path) in caplog.text
    caplog.clear()
    # ... and stored again: the next load is clean.
    with caplog.at_level(logging.WARNING, logger="benchmark.transcript.generated"):
        load_or_generate(SEED, TARGET, "s", redactor, tmp_path)
    assert caplog.text == ""


def test_the_key_follows_what_the_loaded_session_depends_on():
    base = cache_key(SEED, TARGET, Redactor())
    assert base == cache_key(SEED, TARGET, Redactor())
    others = {
        cache_key(SEED + 1, TARGET, Redactor()),
        cache_key(SEED, TARGET + 1, Redactor()),
        cache_key(SEED, TARGET, Redactor(builtin=["jwt"])),
        cache_key(SEED, TARGET, Redactor(patterns={"ticket": "tkt_[0-9]{8}"})),
        cache_key(SEED, TARGET, Redactor(known={"env_value": ["sk-not-a-real-value"]})),
        cache_key(SEED, TARGET, Redactor(enabled=False)),
    }
    assert base not in others and len(others) == 6


def test_session_seeds_never_collide():
    seeds = {session_seed(seed, i) for seed in range(200) for i in range(50)}
    assert len(seeds) == 200 * 50


def test_different_seeds_share_no_session():
    """The default config as composed (its session count), with short sessions: which
    session a (seed, index) gets does not depend on the session's size."""
    digests = {}
    for seed in (0, 1):
        config = validate(compose_config([f"seed={seed}", "transcript.target_tokens=2000"]))
        loaded = load_transcripts(config.transcript, redactor_for(config))
        files = loaded.manifest.files
        assert [f.transcript_id for f in files] == [
            f"synthetic-s{seed}-{i}" for i in range(config.transcript.sessions)
        ]
        digests[seed] = {f.sha256 for f in files}
        assert len(digests[seed]) == config.transcript.sessions  # none repeats within a job
    assert digests[0].isdisjoint(digests[1])


def test_the_default_job_has_at_least_12_clusters(default_sessions):
    """Bootstrap CIs resample (transcript, point) clusters: 2 would make them meaningless."""
    config, loaded, _ = default_sessions
    points = [find_points(t, config.compaction) for t in loaded.transcripts]
    assert all(points), "every default session reaches the compaction trigger"
    assert sum(map(len, points)) >= 12
