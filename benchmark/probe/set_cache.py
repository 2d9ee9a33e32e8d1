"""Content-addressed cache of probe sets.

The key hashes what the probes depend on (the transcript's messages, the
point's indices, the probe config, the extractor version) and nothing else:
moving or renaming a transcript file keeps its probes. Probe ids and
``transcript_id``/``point`` fields are re-stamped on load, so a hit returns
exactly what :func:`generate_probes` would.

Probes written by an LLM (``writer`` given) are keyed instead by the region's
messages and offset, the types and cap, and the writer's spec (model,
base_url, prompt version): a rerun makes no calls, and a new model or prompt
writes afresh. Their entries also keep the dropped count, which a hit reports
back to the writer so ``probes/dropped`` reads the same on a rerun.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import EXTRACTOR_VERSION, generate_probes, next_action_probes
from benchmark.probe.models import Probe
from benchmark.probe.writer import LLMProbeWriter, write_probes
from benchmark.run.compaction import CompactionPoint
from benchmark.run.storage import PROBE_DIR, entry_key, entry_path, write_atomic
from benchmark.transcript.models import Transcript

log = logging.getLogger(__name__)
_PROBES = TypeAdapter(list[Probe])


def cache_key(transcript: Transcript, point: CompactionPoint, config: ProbeConfig) -> str:
    return entry_key(
        {
            "transcript": transcript.content_hash,
            "point": [point.head_end, point.tail_start, point.end],
            "config": config.key_data(),
            "extractor": EXTRACTOR_VERSION,
        }
    )


def writer_cache_key(
    transcript: Transcript, point: CompactionPoint, config: ProbeConfig, writer: LLMProbeWriter
) -> str:
    end = min(point.end, len(transcript.messages))
    region = transcript.messages[point.head_end : min(point.tail_start, end)]
    messages = json.dumps([m.model_dump(exclude_none=True) for m in region], sort_keys=True)
    return entry_key(
        {
            "region": hashlib.sha256(messages.encode()).hexdigest(),
            "offset": point.head_end,
            "types": list(config.types),
            "per_type": config.per_type,
            "writer": writer.spec(),
        }
    )


def load_or_generate(
    transcript: Transcript,
    point: CompactionPoint,
    config: ProbeConfig,
    cache_dir: Path | None,
    writer: LLMProbeWriter | None = None,
) -> list[Probe]:
    """Cached probes for this point, generated and stored on a miss (``None`` = no cache).

    With ``writer`` the probes are LLM-written (see :func:`write_probes`); a
    config that names a writer but gets none falls back to the extractor.
    """
    if writer is not None:  # the writer never writes next-action probes: the extractor does
        written = _load_or_write(transcript, point, config, cache_dir, writer)
        return written + next_action_probes(transcript, point, config)
    if config.writer is not None:
        log.warning("probe.writer is set but no writer was built; using the extractor")
    if cache_dir is None:
        return generate_probes(transcript, point, config)
    key = cache_key(transcript, point, config)
    path = entry_path(cache_dir, PROBE_DIR, key)
    cached = _read(path, key)
    if cached is not None:
        return [_restamp(p, transcript, point) for p in cached]
    probes = generate_probes(transcript, point, config)
    _write(path, key, probes)
    return probes


def _load_or_write(
    transcript: Transcript,
    point: CompactionPoint,
    config: ProbeConfig,
    cache_dir: Path | None,
    writer: LLMProbeWriter,
) -> list[Probe]:
    if cache_dir is None:
        return write_probes(transcript, point, config, writer)[0]
    key = writer_cache_key(transcript, point, config, writer)
    path = entry_path(cache_dir, PROBE_DIR, key)
    entry = _entry(path, key)
    cached = _probes(entry)
    dropped = entry.get("dropped") if entry else None
    if cached is not None and isinstance(dropped, int) and not isinstance(dropped, bool):
        writer.add_dropped(dropped)
        return [_restamp(p, transcript, point) for p in cached]
    probes, result = write_probes(transcript, point, config, writer)
    _write(
        path,
        key,
        probes,
        {"writer": writer.spec(), "dropped": result.dropped, "reasons": result.reasons},
    )
    return probes


def _read(path: Path, key: str) -> list[Probe] | None:
    """The stored probes, or ``None`` when missing, unreadable, corrupt or for another key."""
    return _probes(_entry(path, key))


def _entry(path: Path, key: str) -> dict[str, Any] | None:
    """The stored entry for ``key``, or ``None`` when missing, unreadable or another key's."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(raw, dict) or raw.get("key") != key:
        return None
    return raw


def _probes(entry: dict[str, Any] | None) -> list[Probe] | None:
    if entry is None:
        return None
    try:
        return _PROBES.validate_python(entry.get("probes"))
    except ValidationError:
        return None


def _write(path: Path, key: str, probes: list[Probe], extra: dict[str, Any] | None = None) -> None:
    body = json.dumps(
        {
            **(extra or {}),
            "key": key,
            "extractor": EXTRACTOR_VERSION,
            "probes": [p.model_dump(mode="json") for p in probes],
        },
        indent=1,
        sort_keys=True,
    )
    write_atomic(path, body)


def _restamp(probe: Probe, transcript: Transcript, point: CompactionPoint) -> Probe:
    """Give a cached probe this transcript's id and this point's ordinal."""
    suffix = probe.id.rsplit("/", 2)[-2:]  # [type, n]
    return probe.model_copy(
        update={
            "id": f"{transcript.id}/p{point.ordinal}/{'/'.join(suffix)}",
            "transcript_id": transcript.id,
            "point": point.ordinal,
        }
    )
