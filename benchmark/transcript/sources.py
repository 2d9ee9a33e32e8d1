"""Where a job's transcripts come from: generated sessions or agent logs on disk.

Every job gets a ``TranscriptManifest``: which files (or generated sessions)
were used, with content hashes, and which files were skipped and why, so a
run's numbers can be traced back to exactly the data behind them. A
sub-agent's log that a folder scan or a glob meets (Claude Code's
``<session>/subagents/agent-*.jsonl``) is skipped with a note, whatever
``on_error`` says: its conversation is not a session, and the main session
holds its result. So is a side file, JSON that is no session of any format
(Claude Code's ``agent-*.meta.json`` beside each sub-agent log, settings, todo
lists, metadata). Named as a file, either is refused like any file that cannot
be imported.

Only regular files are read. A folder scan or a glob names, in the manifest's
``skipped`` list and the job log, every entry it passed over that looks like a
transcript (a FIFO, a socket, a symbolic link loop or a broken one, a folder
named ``*.jsonl``...) and why; hidden entries and files of other extensions are
only counted (``passed_over``).

Every transcript is redacted here, as it loads (``benchmark.redaction``): no
later stage, cache or artifact ever holds a credential from it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from benchmark.errors import UserError
from benchmark.redaction import Redactor, build_redactor, scrub
from benchmark.transcript.config import FileTranscripts, SyntheticTranscripts
from benchmark.transcript.formats import (
    Imported,
    NotATranscript,
    SubagentLog,
    TranscriptError,
    import_file,
    transcript_name,
)
from benchmark.transcript.generated import load_or_generate, session_seed
from benchmark.transcript.manifest import SkippedFile, SourceFile, TranscriptManifest
from benchmark.transcript.models import Transcript
from benchmark.transcript.scan import counted, scan

log = logging.getLogger(__name__)
_SHOWN_WARNINGS = 3  # per file in the job log; the manifest keeps them all
SUBAGENT_SKIPPED = (
    "sub-agent log (sidechain): a Task sub-agent's own conversation, whose result its main "
    "session holds; skipped"
)


SIDE_FILE = "not a session of any format (metadata, settings, todos...): {why}; skipped"


@dataclass(frozen=True)
class Source:
    """One session to generate (``path`` None) or file to import, and the id it gets."""

    index: int
    path: Path | None
    name: str
    named: bool  # a file the user named (not met in a folder scan): its errors may quote it


class Loaded(NamedTuple):
    """A loaded source: its redacted transcript (None: skipped) and its manifest entry."""

    transcript: Transcript | None
    entry: SourceFile | SkippedFile


class LoadedTranscripts(BaseModel):
    transcripts: list[Transcript]
    manifest: TranscriptManifest


def load_transcripts(
    config: SyntheticTranscripts | FileTranscripts,
    redactor: Redactor | None = None,
    cache_dir: Path | None = None,
) -> LoadedTranscripts:
    """The job's transcripts, redacted by ``redactor`` (default: every built-in detector),
    all at once (a job streams them: ``TranscriptStream``).

    Generated sessions are read back from ``cache_dir`` (``cache.dir``) when stored there.
    """
    stream = TranscriptStream(config, redactor, cache_dir)
    transcripts = list(stream)
    return LoadedTranscripts(transcripts=transcripts, manifest=stream.manifest)


class TranscriptStream:
    """The job's transcripts one at a time, so a job holds one session, not all of them.

    Iterate it once: each transcript is loaded (imported, or generated / read from the
    session cache), redacted and entered in ``manifest`` as it is yielded, and nothing
    here keeps it. A bad ``transcript.path`` fails on construction; no file importable
    fails when the iteration ends. Two files with the same name (stem) would collide in
    probe ids and artifacts: each is named ``<stem>-<i>``, ``i`` its index among the
    files found (known before any is read, so a source can load in a worker process:
    ``sources``, ``load``, ``accept``, ``finish``; iterating does all four in order).
    """

    def __init__(
        self,
        config: SyntheticTranscripts | FileTranscripts,
        redactor: Redactor | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.config = config
        self.redactor = redactor or build_redactor()
        self.cache_dir = cache_dir
        self.files: list[SourceFile] = []  # one per transcript yielded so far
        self.skipped: list[SkippedFile] = []
        self.found = (
            None
            if isinstance(config, SyntheticTranscripts)
            else scan(config.path, config.extensions)
        )

    @property
    def ids(self) -> list[str]:
        """The ids of the transcripts yielded so far."""
        return [f.transcript_id for f in self.files]

    @property
    def manifest(self) -> TranscriptManifest:
        """The transcripts yielded so far (all of them once the iteration ends)."""
        config = self.config
        if isinstance(config, SyntheticTranscripts):
            source = f"synthetic: {config.sessions} sessions from seed {config.seed}"
            return TranscriptManifest(source=source, files=list(self.files))
        assert self.found is not None
        return TranscriptManifest(
            source=config.path if isinstance(config.path, str) else ", ".join(config.path),
            files=list(self.files),
            skipped=list(self.skipped),
            passed_over=dict(sorted(self.found.ignored.items())),
        )

    def sources(self) -> list[Source]:
        """What the job reads, in order: one ``Source`` per session to generate or file to
        import, each named already (so each can be loaded on its own, in any process)."""
        config = self.config
        if isinstance(config, SyntheticTranscripts):
            return [
                Source(i, None, f"synthetic-s{config.seed}-{i}", False)
                for i in range(config.sessions)
            ]
        found, redactor = self.found, self.redactor
        assert found is not None
        # Ids from the files' names, secrets in them replaced (the job's patterns too).
        names = {path: transcript_name(path, redactor.text) for path in found.files}
        stems = Counter(names.values())
        return [
            Source(i, path, f"{names[path]}-{i}" if stems[names[path]] > 1 else names[path], named)
            for i, (path, named) in enumerate(found.files.items())
        ]

    def __iter__(self) -> Iterator[Transcript]:
        self.announce()
        for source in self.sources():
            transcript = self.accept(self.load(source))
            if transcript is not None:
                yield transcript
                del transcript  # not held while the next one loads
        self.finish()

    def announce(self) -> None:
        """Log what a folder scan passed over; once, before the first ``load``."""
        found = self.found
        if found is None:
            return
        for path, why in found.passed:
            log.warning("skipped %s: %s", path, why)
            self.skipped.append(SkippedFile(path=scrub(str(path)), error=why))
        if found.ignored:
            log.info("transcript.path: also passed over %s", counted(found.ignored))

    def load(self, source: Source) -> Loaded:
        """One source loaded and redacted, with its manifest entry; a file that cannot be
        imported is its ``SkippedFile`` (or, with ``on_error=fail``, a ``UserError``).
        Touches no state of the stream, so it can run in a worker process."""
        config = self.config
        if isinstance(config, SyntheticTranscripts):
            t, counts = load_or_generate(
                session_seed(config.seed, source.index),
                config.target_tokens,
                source.name,
                self.redactor,
                self.cache_dir,
            )
            return Loaded(t, _source(t, t.source, "synthetic", t.content_hash, 0, [], counts))
        assert source.path is not None
        try:
            item, transcript, counts = _import(source.path, config, self.redactor)
        except TranscriptError as exc:
            return Loaded(None, self._skip(exc, source.path, source.named, config))
        warnings = [self.redactor.text(w) for w in item.warnings]
        notes = [self.redactor.text(n) for n in item.notes]
        if source.name != transcript.id:
            transcript = transcript.model_copy(update={"id": source.name})
        _log_warnings(item.path, warnings)
        entry = _source(
            transcript, item.path, item.format, item.sha256, item.size, warnings, counts, notes
        ).model_copy(update={"task": item.task})
        return Loaded(transcript, entry)  # ``item`` (the unredacted transcript) is let go

    def accept(self, loaded: Loaded) -> Transcript | None:
        """Enter a loaded source in the manifest, in order; its transcript (None: skipped)."""
        self.accept_entry(loaded.entry)
        return loaded.transcript

    def accept_entry(self, entry: SourceFile | SkippedFile) -> None:
        """Enter a source's manifest entry (loaded elsewhere), in order."""
        if isinstance(entry, SkippedFile):
            self.skipped.append(entry)
        else:
            self.files.append(entry)

    def finish(self) -> None:
        """Once every source is loaded: a folder with no importable file is an error."""
        found = self.found
        if found is not None and not self.files:
            first = self.skipped[len(found.passed)]  # the first file read (passed over first)
            raise UserError(
                f"transcript.path: none of the {len(found.files)} files could be imported "
                f"(first: {first.path}: {first.error})"
            )

    def _skip(
        self, exc: TranscriptError, path: Path, named: bool, config: FileTranscripts
    ) -> SkippedFile:
        """A file that could not be imported: skipped with why, or the job fails."""
        if isinstance(exc, SubagentLog) and not named:
            log.info("skipped %s: %s", path, SUBAGENT_SKIPPED)
            return SkippedFile(path=scrub(str(path)), error=SUBAGENT_SKIPPED)
        # What is wrong, never what the file holds: a scan meets whatever is in a folder (a
        # link to a system file, someone's keys). Only a file the user named is quoted, and
        # only in the error that stops the job.
        if isinstance(exc, NotATranscript) and not named:
            note = SIDE_FILE.format(why=exc.located(self.redactor.text, quotes=False))
            log.info("skipped %s: %s", path, note)
            return SkippedFile(path=scrub(str(path)), error=note)
        if config.on_error == "fail":
            error = exc.located(self.redactor.text, quotes=named)
            raise UserError(
                f"{exc.path}: {error} (transcript.on_error=skip goes on without it)"
            ) from None
        error = exc.located(self.redactor.text, quotes=False)
        log.warning("skipped %s: %s", exc.path, error)
        return SkippedFile(path=scrub(str(path)), error=error, line=exc.line)


def _import(
    path: Path, config: FileTranscripts, redactor: Redactor
) -> tuple[Imported, Transcript, dict[str, int]]:
    """One file imported and redacted; whatever it holds, a failure is a ``TranscriptError``."""
    try:
        item = import_file(path, config.format, int(config.max_line_mb * 2**20))
        transcript, counts = redactor.transcript(item.transcript)
    except RecursionError:  # any stage walking content nested past Python's limit
        raise TranscriptError(path, "content nested too deeply to read") from None
    return item, transcript, counts


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


def _log_warnings(path: str, warnings: list[str]) -> None:
    for warning in warnings[:_SHOWN_WARNINGS]:
        log.warning("%s: %s", path, warning)
    if len(warnings) > _SHOWN_WARNINGS:
        log.warning(
            "%s: %d more import warnings (see transcripts/manifest.json in the run)",
            path,
            len(warnings) - _SHOWN_WARNINGS,
        )
