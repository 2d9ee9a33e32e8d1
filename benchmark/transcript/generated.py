"""Generated sessions, cached by content: a warm job reads them back instead of generating.

The key covers everything a loaded generated session depends on: the generator's source
(every module of ``benchmark/transcript/synthetic`` and every file of its ``data/``, so
any change to them regenerates), its seed and token target, the token counter, and the
redactor (``Redactor.fingerprint``): an entry holds the session as the job sees it,
already redacted, with its redaction counts, the messages' token counts and its content
hash, so a warm run neither regenerates, redacts nor recounts. An entry that cannot be
read, fails its checksum or does not validate is regenerated and overwritten, never an
error.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from benchmark.redaction import Redactor
from benchmark.run.storage import SESSION_DIR, entry_key, entry_path, source_digest, write_atomic
from benchmark.text import tokens
from benchmark.transcript.models import Transcript

log = logging.getLogger(__name__)
_GENERATOR = Path(__file__).parent / "synthetic"


class _Entry(BaseModel):
    transcript: Transcript
    redactions: dict[str, int]
    message_tokens: list[int]
    content_hash: str


def session_seed(seed: int, index: int) -> int:
    """The generator seed of session ``index`` of a job seeded ``seed``.

    A stable hash (64 bits of sha256), not ``seed + index``: with that, seed 0's
    second session would be seed 1's first, and seeds would share sessions.
    """
    return int.from_bytes(hashlib.sha256(f"{seed}:{index}".encode()).digest()[:8], "big")


def cache_key(seed: int, target_tokens: int, redactor: Redactor) -> str:
    return entry_key(
        {
            "generator": source_digest(_GENERATOR),
            "generator_data": source_digest(_GENERATOR / "data", "*"),
            "seed": seed,
            "target_tokens": target_tokens,
            "tokens": [tokens.ENCODING, tokens.MESSAGE_OVERHEAD],
            "redactor": redactor.fingerprint(),
        }
    )


def load_or_generate(
    seed: int,
    target_tokens: int,
    transcript_id: str,
    redactor: Redactor,
    cache_dir: Path | None,
) -> tuple[Transcript, dict[str, int]]:
    """``generate(seed, target_tokens)`` named ``transcript_id`` and redacted, with the
    redaction counts; read from ``cache_dir`` when stored there, else made (and stored)."""
    key = cache_key(seed, target_tokens, redactor) if cache_dir is not None else ""
    if cache_dir is not None:
        entry = _read(entry_path(cache_dir, SESSION_DIR, key), key)
        if entry is not None:
            return _transcript(entry, transcript_id), entry.redactions
    from benchmark.transcript.synthetic import generate  # imported only on a miss

    generated = generate(seed=seed, target_tokens=target_tokens, transcript_id=transcript_id)
    transcript, redactions = redactor.transcript(generated)
    if cache_dir is not None:
        entry = _Entry(
            transcript=transcript,
            redactions=redactions,
            message_tokens=transcript.message_tokens,
            content_hash=transcript.content_hash,
        )
        body = entry.model_dump_json(exclude_none=True)
        header = json.dumps({"key": key, "sha256": hashlib.sha256(body.encode()).hexdigest()})
        write_atomic(entry_path(cache_dir, SESSION_DIR, key), f"{header}\n{body}")
    return transcript, redactions


def _read(path: Path, key: str) -> _Entry | None:
    """The stored entry, or None when missing, unreadable, corrupt or another key's."""
    try:
        header, body = path.read_text(encoding="utf-8").split("\n", 1)
        meta = json.loads(header)
        if not isinstance(meta, dict) or meta.get("key") != key:
            raise ValueError("not this key's entry")
        if meta.get("sha256") != hashlib.sha256(body.encode()).hexdigest():
            raise ValueError("checksum mismatch")
        with _paused_gc():
            entry = _Entry.model_validate_json(body)
        if len(entry.message_tokens) != len(entry.transcript.messages):
            raise ValueError("token counts do not match the messages")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeError, ValueError) as exc:  # pydantic's ValidationError too
        log.warning("session cache file %s is unusable (%s): generating it again", path, exc)
        return None
    return entry


@contextmanager
def _paused_gc() -> Iterator[None]:
    """Parsing a session builds ~100K acyclic objects at once; the collections that
    triggers find nothing and took over half of a warm load's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _transcript(entry: _Entry, transcript_id: str) -> Transcript:
    """The stored transcript under this job's id, with its counts and hash already known."""
    transcript = entry.transcript
    if transcript.id != transcript_id:
        transcript = transcript.model_copy(update={"id": transcript_id})
    transcript.__dict__["message_tokens"] = entry.message_tokens
    transcript.__dict__["content_hash"] = entry.content_hash
    for message, count in zip(transcript.messages, entry.message_tokens, strict=True):
        message.__dict__["tokens"] = count  # what Message.tokens would count
    return transcript
