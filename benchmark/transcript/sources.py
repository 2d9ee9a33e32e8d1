"""Where a job's transcripts come from: generated sessions or agent logs on disk.

Every job gets a ``TranscriptManifest``: which files (or generated sessions)
were used, with content hashes, and which files were skipped and why, so a
run's numbers can be traced back to exactly the data behind them. A
sub-agent's log that a folder scan or a glob meets (Claude Code's
``<session>/subagents/agent-*.jsonl``) is skipped with a note, whatever
``on_error`` says: its conversation is not a session, and the main session
holds its result. Named as a file, it is refused like any file that cannot be
imported.

Every transcript is redacted here, as it loads (``benchmark.redaction``): no
later stage, cache or artifact ever holds a credential from it.
"""

from __future__ import annotations

import glob
import logging
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from benchmark.config import FileTranscripts, SyntheticTranscripts
from benchmark.errors import UserError
from benchmark.redaction import Redactor, build_redactor
from benchmark.transcript.formats import Imported, SubagentLog, TranscriptError, import_file
from benchmark.transcript.generated import load_or_generate, session_seed
from benchmark.transcript.manifest import SkippedFile, SourceFile, TranscriptManifest
from benchmark.transcript.models import Transcript

log = logging.getLogger(__name__)
_SHOWN_WARNINGS = 3  # per file in the job log; the manifest keeps them all
SUBAGENT_SKIPPED = (
    "sub-agent log (sidechain): a Task sub-agent's own conversation, whose result its main "
    "session holds; skipped"
)


class LoadedTranscripts(BaseModel):
    transcripts: list[Transcript]
    manifest: TranscriptManifest


def load_transcripts(
    config: SyntheticTranscripts | FileTranscripts,
    redactor: Redactor | None = None,
    cache_dir: Path | None = None,
) -> LoadedTranscripts:
    """The job's transcripts, redacted by ``redactor`` (default: every built-in detector).

    Generated sessions are read back from ``cache_dir`` (``cache.dir``) when stored there.
    """
    redactor = redactor or build_redactor()
    if isinstance(config, SyntheticTranscripts):
        return _generate(config, redactor, cache_dir)
    paths = expand_found(config.path, config.extensions)
    imported: list[Imported] = []
    redactions: list[dict[str, int]] = []
    skipped: list[SkippedFile] = []
    for path, named in paths.items():
        try:
            item = import_file(path, config.format, int(config.max_line_mb * 2**20))
        except TranscriptError as exc:
            if isinstance(exc, SubagentLog) and not named:
                log.info("skipped %s: %s", path, SUBAGENT_SKIPPED)
                skipped.append(SkippedFile(path=str(path), error=SUBAGENT_SKIPPED))
                continue
            error = redactor.text(str(exc))  # an error may quote the line at fault
            if config.on_error == "fail":
                raise UserError(f"{error} (transcript.on_error=skip goes on without it)") from None
            log.warning("skipped %s", error)
            skipped.append(SkippedFile(path=str(path), error=redactor.text(exc.reason)))
            continue
        transcript, counts = redactor.transcript(item.transcript)
        warnings = [redactor.text(w) for w in item.warnings]
        notes = [redactor.text(n) for n in item.notes]
        update = {"transcript": transcript, "warnings": warnings, "notes": notes}
        item = item.model_copy(update=update)
        _log_warnings(item)
        imported.append(item)
        redactions.append(counts)
    if not imported:
        raise UserError(
            f"transcript.path: none of the {len(paths)} files could be imported "
            f"(first: {skipped[0].path}: {skipped[0].error})"
        )
    transcripts = _unique_ids([item.transcript for item in imported])
    files = [
        _source(
            t, item.path, item.format, item.sha256, item.size, item.warnings, counts, item.notes
        )
        for t, item, counts in zip(transcripts, imported, redactions, strict=True)
    ]
    spec = config.path if isinstance(config.path, str) else ", ".join(config.path)
    return LoadedTranscripts(
        transcripts=transcripts,
        manifest=TranscriptManifest(source=spec, files=files, skipped=skipped),
    )


def expand_paths(spec: str | list[str], extensions: list[str] | None = None) -> list[Path]:
    """Files named by ``spec``: files as given, globs (``**`` recursive), folders scanned
    recursively for ``extensions``; in order, each once."""
    return list(expand_found(spec, extensions))


def expand_found(spec: str | list[str], extensions: list[str] | None) -> dict[Path, bool]:
    """``expand_paths`` with, per file, whether it was named as a file (``True``) or met in a
    folder scan or a glob (``False``)."""
    suffixes = {e.lower() if e.startswith(".") else f".{e.lower()}" for e in extensions or []}
    found: dict[Path, bool] = {}
    for item in [spec] if isinstance(spec, str) else spec:
        path = Path(item).expanduser()
        named = False
        if glob.has_magic(str(path)):
            matches = [Path(m) for m in sorted(glob.glob(str(path), recursive=True))]
            files = [m for m in matches if m.is_file()]
            for folder in (m for m in matches if m.is_dir()):
                files.extend(_scan(folder, suffixes))
            if not files:
                raise UserError(f"transcript.path: {item!r} matches no file")
        elif path.is_dir():
            files = _scan(path, suffixes)
            if not files:
                raise UserError(
                    f"transcript.path: folder {item!r} has no {'/'.join(sorted(suffixes))} file"
                )
        elif path.exists():
            files, named = [path], True
        else:
            raise UserError(f"transcript.path: no such file or folder: {item!r}")
        for file in files:
            found[file] = found.get(file, False) or named
    return found


def _scan(folder: Path, suffixes: set[str]) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in suffixes
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def _generate(
    config: SyntheticTranscripts, redactor: Redactor, cache_dir: Path | None
) -> LoadedTranscripts:
    """Session ``i`` is generated from ``session_seed(config.seed, i)``: no two (seed,
    index) pairs share a session, so runs with different seeds are independent."""
    redacted = [
        load_or_generate(
            session_seed(config.seed, i),
            config.target_tokens,
            f"synthetic-s{config.seed}-{i}",
            redactor,
            cache_dir,
        )
        for i in range(config.sessions)
    ]
    transcripts = [t for t, _ in redacted]
    files = [_source(t, t.source, "synthetic", t.content_hash, 0, [], c) for t, c in redacted]
    source = f"synthetic: {config.sessions} sessions from seed {config.seed}"
    return LoadedTranscripts(
        transcripts=transcripts, manifest=TranscriptManifest(source=source, files=files)
    )


def _source(
    t: Transcript,
    path: str,
    format: str,
    sha256: str,
    size: int,
    warnings: list[str],
    redactions: dict[str, int],
    notes: list[str] | None = None,
) -> SourceFile:
    return SourceFile(
        transcript_id=t.id,
        path=path,
        format=format,
        sha256=sha256,
        size=size,
        messages=len(t.messages),
        tool_calls=sum(len(m.tool_calls or []) for m in t.messages),
        tokens=t.total_tokens,
        warnings=warnings,
        notes=notes or [],
        redactions=redactions,
        summaries=t.summaries,
    )


def _unique_ids(transcripts: list[Transcript]) -> list[Transcript]:
    """Two files with the same stem would collide in probe ids and artifacts."""
    counts = Counter(t.id for t in transcripts)
    return [
        t if counts[t.id] == 1 else t.model_copy(update={"id": f"{t.id}-{i}"})
        for i, t in enumerate(transcripts)
    ]


def _log_warnings(item: Imported) -> None:
    for warning in item.warnings[:_SHOWN_WARNINGS]:
        log.warning("%s: %s", item.path, warning)
    if len(item.warnings) > _SHOWN_WARNINGS:
        log.warning(
            "%s: %d more import warnings (see transcripts/manifest.json in the run)",
            item.path,
            len(item.warnings) - _SHOWN_WARNINGS,
        )
