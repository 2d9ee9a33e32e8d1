"""The transcripts behind a run, as MLflow dataset inputs.

Each transcript is one dataset input of the run: named after the transcript,
with the first 16 hex digits of its file's sha256 as digest and the file as
source (a generated session: the generator and seed). Two runs on the same
bytes show the same digests in the MLflow UI, whatever the files are called.
The full manifest (all hashes, import warnings, skipped files and why, secrets
redacted per type) is the artifact ``transcripts/manifest.json``; counts are metrics.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from functools import cache
from typing import Any

from benchmark.redaction import scrub
from benchmark.transcript.manifest import SourceFile, TranscriptManifest

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

    datasets = [_dataset(f) for f in manifest.files]
    for attempt in range(attempts):
        try:
            mlflow.log_inputs(
                datasets=datasets,
                contexts=[CONTEXT] * len(datasets),
                tags_list=[_tags(f) for f in manifest.files],
            )
            return
        except MlflowException as exc:
            if "UNIQUE constraint" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _dataset(file: SourceFile) -> Any:
    from mlflow.data.code_dataset_source import CodeDatasetSource
    from mlflow.data.meta_dataset import MetaDataset

    if file.format == "synthetic":
        source: Any = CodeDatasetSource(tags={"generator": file.path})
    else:
        source = _local_source()(scrub(file.path))  # a file's name is user text
    return MetaDataset(source=source, name=scrub(file.transcript_id), digest=file.sha256[:16])


def _tags(file: SourceFile) -> dict[str, str]:
    return {
        "format": file.format,
        "sha256": file.sha256,
        "messages": str(file.messages),
        "tool_calls": str(file.tool_calls),
        "tokens": str(file.tokens),
    }


@cache
def _local_source() -> type:
    """MLflow's source class for local files (created at import by its registry)."""
    from mlflow.data.dataset_source_registry import resolve_dataset_source

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "can be interpreted in multiple ways": the same class
        return type(resolve_dataset_source("/"))
