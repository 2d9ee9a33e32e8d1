"""The transcripts behind a run, as one MLflow dataset input.

The set is one dataset (the runs table's Dataset column showed a chip per transcript,
12 per row, when each was its own): named by what it is (``12 generated sessions``,
``40 logs in sessions/``), its digest the first 16 hex digits of a sha256 over the
files' own sha256s in order, so two runs on the same bytes show the same digest
whatever the files are called, and its source the folder (a generated set: the
generator). The full manifest (each file's hash, import warnings, skipped files and
why, secrets redacted per type) is the artifact ``transcripts/manifest.json``;
counts are metrics.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from benchmark.redaction import scrub
from benchmark.transcript.manifest import TranscriptManifest

CONTEXT = "transcripts"


def manifest_metrics(manifest: TranscriptManifest) -> dict[str, float]:
    redactions: Counter[str] = Counter()
    for file in manifest.files:
        redactions.update(file.redactions)
    return {
        "transcripts/files": len(manifest.files),
        "transcripts/skipped": len(manifest.skipped),
        "transcripts/import_warnings": sum(len(f.warnings) for f in manifest.files),
        "transcripts/summaries": sum(len(f.summaries) for f in manifest.files),
        "redactions/total": sum(redactions.values()),
        **{f"redactions/{kind}": n for kind, n in sorted(redactions.items())},
    }


def log_transcript_inputs(manifest: TranscriptManifest, attempts: int = 5) -> None:
    """Log the inputs, racing safely with other jobs of a sweep that log the same ones.

    MLflow stores a dataset once per experiment: it looks it up, then inserts it. Two
    jobs doing that at once collide on the unique key; the next attempt finds the row.
    """
    import mlflow
    from mlflow.exceptions import MlflowException

    if not manifest.files:
        return
    dataset = transcript_set(manifest)
    for attempt in range(attempts):
        try:
            mlflow.log_inputs(datasets=[dataset], contexts=[CONTEXT], tags_list=[_tags(manifest)])
            return
        except MlflowException as exc:
            if "UNIQUE constraint" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def set_digest(manifest: TranscriptManifest) -> str:
    """16 hex digits over the files' hashes, in the job's order."""
    joined = "\n".join(f.sha256 for f in manifest.files)
    return hashlib.sha256(joined.encode("ascii")).hexdigest()[:16]


def set_name(manifest: TranscriptManifest) -> str:
    """What the set is, in a few words: how many, and generated or from which folder."""
    files = manifest.files
    count = len(files)
    if all(f.format == "synthetic" for f in files):
        return f"{count} generated session{'s' * (count != 1)}"
    if count == 1:
        return scrub(Path(files[0].path).name)
    folder = Path(os.path.commonpath([str(Path(f.path).parent) for f in files]))
    return f"{count} logs in {scrub(folder.name or str(folder))}/"


def transcript_set(manifest: TranscriptManifest) -> Any:
    from mlflow.data.code_dataset_source import CodeDatasetSource
    from mlflow.data.meta_dataset import MetaDataset

    files = manifest.files
    if all(f.format == "synthetic" for f in files):
        source: Any = CodeDatasetSource(tags={"generator": scrub(manifest.source)})
    else:
        paths = [str(Path(f.path).parent) for f in files]
        source = _local_source()(scrub(os.path.commonpath(paths)))  # a path is user text
    return MetaDataset(source=source, name=set_name(manifest), digest=set_digest(manifest))


def _tags(manifest: TranscriptManifest) -> dict[str, str]:
    files = manifest.files
    return {
        "files": str(len(files)),
        "formats": ",".join(sorted({f.format for f in files})),
        "messages": str(sum(f.messages for f in files)),
        "tool_calls": str(sum(f.tool_calls for f in files)),
        "tokens": str(sum(f.tokens for f in files)),
        "manifest": "transcripts/manifest.json",
    }


@cache
def _local_source() -> type:
    """MLflow's source class for local files (created at import by its registry)."""
    from mlflow.data.dataset_source_registry import resolve_dataset_source

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "can be interpreted in multiple ways": the same class
        return type(resolve_dataset_source("/"))
