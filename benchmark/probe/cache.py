"""Content-addressed cache of probe sets.

The key hashes what the probes depend on (the transcript's messages, the
point's indices, the probe config, the extractor version) and nothing else:
moving or renaming a transcript file keeps its probes. Probe ids and
``transcript_id``/``point`` fields are re-stamped on load, so a hit returns
exactly what :func:`generate_probes` would.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from benchmark.compaction import CompactionPoint
from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import EXTRACTOR_VERSION, generate_probes
from benchmark.probe.models import Probe
from benchmark.transcript.models import Transcript

_PROBES = TypeAdapter(list[Probe])


def cache_key(transcript: Transcript, point: CompactionPoint, config: ProbeConfig) -> str:
    payload = {
        "transcript": transcript.content_hash,
        "point": [point.head_end, point.tail_start, point.end],
        "config": config.model_dump(mode="json"),
        "extractor": EXTRACTOR_VERSION,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def cache_path(cache_dir: Path, key: str) -> Path:
    return Path(cache_dir) / "probes" / f"{key}.json"


def load_or_generate(
    transcript: Transcript,
    point: CompactionPoint,
    config: ProbeConfig,
    cache_dir: Path | None,
) -> list[Probe]:
    """Cached probes for this point, generated and stored on a miss (``None`` = no cache)."""
    if cache_dir is None:
        return generate_probes(transcript, point, config)
    key = cache_key(transcript, point, config)
    path = cache_path(cache_dir, key)
    cached = _read(path, key)
    if cached is not None:
        return [_restamp(p, transcript, point) for p in cached]
    probes = generate_probes(transcript, point, config)
    _write(path, key, probes)
    return probes


def _read(path: Path, key: str) -> list[Probe] | None:
    """The stored probes, or ``None`` when missing, unreadable, corrupt or for another key."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(raw, dict) or raw.get("key") != key:
        return None
    try:
        return _PROBES.validate_python(raw.get("probes"))
    except ValidationError:
        return None


def _write(path: Path, key: str, probes: list[Probe]) -> None:
    """Write via a temp file and ``os.replace`` so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(
        {
            "key": key,
            "extractor": EXTRACTOR_VERSION,
            "probes": [p.model_dump(mode="json") for p in probes],
        },
        indent=1,
        sort_keys=True,
    )
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
