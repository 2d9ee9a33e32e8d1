"""Where a job's transcripts come from: generated sessions or agent logs on disk.

Every job gets a ``TranscriptManifest``: which files (or generated sessions)
were used, with content hashes, and which files were skipped and why, so a
run's numbers can be traced back to exactly the data behind them. A
sub-agent's log that a folder scan or a glob meets (Claude Code's
``<session>/subagents/agent-*.jsonl``) is skipped with a note, whatever
``on_error`` says: its conversation is not a session, and the main session
holds its result. Named as a file, it is refused like any file that cannot be
imported.

Only regular files are read. A folder scan or a glob names, in the manifest's
``skipped`` list and the job log, every entry it passed over that looks like a
transcript (a FIFO, a socket, a symbolic link loop or a broken one, a folder
named ``*.jsonl``...) and why; hidden entries and files of other extensions are
only counted (``passed_over``).

Every transcript is redacted here, as it loads (``benchmark.redaction``): no
later stage, cache or artifact ever holds a credential from it.
"""

from __future__ import annotations

import glob
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from benchmark.errors import UserError
from benchmark.redaction import Redactor, build_redactor
from benchmark.transcript.config import FileTranscripts, SyntheticTranscripts
from benchmark.transcript.formats import Imported, SubagentLog, TranscriptError, import_file
from benchmark.transcript.formats._document import not_regular
from benchmark.transcript.generated import load_or_generate, session_seed
from benchmark.transcript.manifest import SkippedFile, SourceFile, TranscriptManifest
from benchmark.transcript.models import Transcript

log = logging.getLogger(__name__)
_SHOWN_WARNINGS = 3  # per file in the job log; the manifest keeps them all
SUBAGENT_SKIPPED = (
    "sub-agent log (sidechain): a Task sub-agent's own conversation, whose result its main "
    "session holds; skipped"
)


HIDDEN = "hidden (name starts with '.')"
OTHER_EXTENSION = "not a transcript.extensions file"


@dataclass
class Found:
    """What ``transcript.path`` names: the files to read (``True``: named as a file, not met
    in a folder scan or a glob), the entries passed over that look like transcripts (why),
    and the rest passed over, counted by why."""

    files: dict[Path, bool] = field(default_factory=dict)
    passed: list[tuple[Path, str]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)


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
    found = scan(config.path, config.extensions)
    paths = found.files
    imported: list[Imported] = []
    redactions: list[dict[str, int]] = []
    skipped: list[SkippedFile] = []
    for path, why in found.passed:
        log.warning("skipped %s: %s", path, why)
        skipped.append(SkippedFile(path=str(path), error=why))
    if found.ignored:
        log.info("transcript.path: also passed over %s", _counted(found.ignored))
    for path, named in paths.items():
        try:
            item, transcript, counts = _import(path, config, redactor)
        except TranscriptError as exc:
            if isinstance(exc, SubagentLog) and not named:
                log.info("skipped %s: %s", path, SUBAGENT_SKIPPED)
                skipped.append(SkippedFile(path=str(path), error=SUBAGENT_SKIPPED))
                continue
            error = exc.located(redactor.text)  # an error may quote the line at fault
            if config.on_error == "fail":
                raise UserError(
                    f"{exc.path}: {error} (transcript.on_error=skip goes on without it)"
                ) from None
            log.warning("skipped %s: %s", exc.path, error)
            skipped.append(SkippedFile(path=str(path), error=error, line=exc.line))
            continue
        warnings = [redactor.text(w) for w in item.warnings]
        notes = [redactor.text(n) for n in item.notes]
        update = {"transcript": transcript, "warnings": warnings, "notes": notes}
        item = item.model_copy(update=update)
        _log_warnings(item)
        imported.append(item)
        redactions.append(counts)
    if not imported:
        first = skipped[len(found.passed)]  # the first file read (passed-over entries first)
        raise UserError(
            f"transcript.path: none of the {len(paths)} files could be imported "
            f"(first: {first.path}: {first.error})"
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
        manifest=TranscriptManifest(
            source=spec,
            files=files,
            skipped=skipped,
            passed_over=dict(sorted(found.ignored.items())),
        ),
    )


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


def scan(spec: str | list[str], extensions: list[str] | None) -> Found:
    """Files named by ``spec`` (files as given, globs with ``**`` recursive, folders scanned
    recursively for ``extensions``), in order, each once; and what was passed over, why."""
    suffixes = {e.lower() if e.startswith(".") else f".{e.lower()}" for e in extensions or []}
    found = Found()
    for item in [spec] if isinstance(spec, str) else spec:
        path = Path(item).expanduser()
        named = False
        part = Found()
        if glob.has_magic(str(path)):
            for match in map(Path, sorted(glob.glob(str(path), recursive=True))):
                if _is_folder(match):
                    _scan(match, suffixes, part)
                else:
                    _classify(match, part)
            if not part.files and not part.passed:
                raise UserError(f"transcript.path: {item!r} matches no file")
        elif _is_folder(path):
            _scan(path, suffixes, part)
            if not part.files and not part.passed:
                raise UserError(
                    f"transcript.path: folder {item!r} has no {'/'.join(sorted(suffixes))} file"
                )
        elif os.path.lexists(path):  # a file, or a FIFO, a link...: refused by name on import
            part.files, named = {path: True}, True
        else:
            raise UserError(f"transcript.path: no such file or folder: {item!r}")
        if not part.files:
            where, why = part.passed[0]
            more = f"; {len(part.passed) - 1} more passed over" if len(part.passed) > 1 else ""
            raise UserError(
                f"transcript.path: {item!r} has no readable file ({where}: {why}{more})"
            )
        for file in part.files:
            found.files[file] = found.files.get(file, False) or named
        found.passed += [p for p in part.passed if p not in found.passed]
        found.ignored.update(part.ignored)
    return found


def expand_paths(spec: str | list[str], extensions: list[str] | None = None) -> list[Path]:
    """Files named by ``spec``: files as given, globs (``**`` recursive), folders scanned
    recursively for ``extensions``; in order, each once."""
    return list(expand_found(spec, extensions))


def expand_found(spec: str | list[str], extensions: list[str] | None) -> dict[Path, bool]:
    """``expand_paths`` with, per file, whether it was named as a file (``True``) or met in a
    folder scan or a glob (``False``)."""
    return scan(spec, extensions).files


def _is_folder(path: Path) -> bool:
    return os.path.isdir(path)  # False for a symbolic link loop or a broken link


def _classify(path: Path, found: Found) -> None:
    """A file met by a glob or a scan: read when regular, else passed over with why."""
    why = not_regular(path)
    if why is None:
        found.files[path] = False
    else:
        found.passed.append((path, why))


def _scan(folder: Path, suffixes: set[str], found: Found) -> None:
    """Every file of ``folder`` and its subfolders with one of ``suffixes``, sorted; hidden
    entries are not entered, and symbolic links to folders not followed (no cycles)."""
    files: list[Path] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            found.passed.append((current, f"cannot list this folder ({exc.strerror or exc})"))
            continue
        for entry in entries:
            path = Path(entry.path)
            named_like = path.suffix.lower() in suffixes
            if entry.name.startswith("."):
                found.ignored[HIDDEN] += 1
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
                if named_like:
                    found.passed.append(
                        (path, "a folder, not a file (its own files are scanned as a folder's)")
                    )
            elif entry.is_symlink() and _is_folder(path):
                found.passed.append(
                    (path, "a symbolic link to a folder, not followed; name its target instead")
                )
            elif named_like:
                why = not_regular(path)
                if why is None:
                    files.append(path)
                else:
                    found.passed.append((path, why))
            else:
                found.ignored[OTHER_EXTENSION] += 1
    for path in sorted(files):
        found.files[path] = False


def _counted(ignored: Counter[str]) -> str:
    return ", ".join(f"{n} {why}" for why, n in sorted(ignored.items()))


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
