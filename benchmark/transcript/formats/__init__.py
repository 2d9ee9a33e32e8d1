"""Importers: agent logs of several formats -> the transcript model.

``import_file`` reads one file, detects its format from its content (not
its name) unless one is forced, and returns the transcript with what the
import noticed (orphaned tool calls or results, skipped events). Summaries
the agent already wrote (its own compactions) are marked ``summary``. Each format
is one module with ``NAME``, ``convert(doc, builder)``, and ``claims(value)``
(a whole-file JSON document in my format?) and/or ``claims_record(record)``
(a JSON Lines record in my format?).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel, ConfigDict, Field

from benchmark.redaction import scrub, scrub_name
from benchmark.transcript.formats import chat, claude_code, codex, mini_swe_agent, swe_agent
from benchmark.transcript.formats._builder import ConversationBuilder
from benchmark.transcript.formats._document import (
    MAX_LINE_BYTES,
    Document,
    NotATranscript,
    SubagentLog,
    TranscriptError,
    cut,
    quoted,
    read_document,
    shown,
)
from benchmark.transcript.formats._summaries import mark_summaries
from benchmark.transcript.models import Transcript
from benchmark.transcript.task import task_id

__all__ = [
    "FORMATS",
    "Imported",
    "NotATranscript",
    "SubagentLog",
    "TranscriptError",
    "detect",
    "import_file",
    "transcript_name",
]

# Order matters for JSON Lines detection: the first module to claim a record wins,
# and chat (any record with a "role") is the most permissive. mini-swe-agent's
# ``{"messages": [...]}`` comes before chat's for the same reason.
_DOCUMENTS: tuple[ModuleType, ...] = (swe_agent, mini_swe_agent, chat)
_RECORDS: tuple[ModuleType, ...] = (codex, claude_code, chat)
FORMATS: dict[str, ModuleType] = {
    m.NAME: m for m in (swe_agent, mini_swe_agent, codex, claude_code, chat)
}
_SNIFF_RECORDS = 50


class Imported(BaseModel):
    """One imported file: the transcript and what the import noticed."""

    model_config = ConfigDict(frozen=True)

    transcript: Transcript
    format: str
    path: str
    sha256: str = Field(description="of the file's bytes")
    size: int = Field(description="bytes")
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(
        default_factory=list, description="what the log says beyond its messages (exit status)"
    )
    task: str | None = Field(None, description="the task the log replays (transcript.task)")


def import_file(
    path: str | Path, format: str = "auto", max_line_bytes: int = MAX_LINE_BYTES
) -> Imported:
    """Import one transcript file; a ``TranscriptError`` (one line) when it cannot be."""
    path = Path(path).expanduser()
    if format != "auto" and format not in FORMATS:
        raise TranscriptError(path, f"unknown format {format!r}; choose auto or {sorted(FORMATS)}")
    doc = read_document(path, max_line_bytes)
    name = format
    try:
        name = detect(doc) if format == "auto" else format
        builder = ConversationBuilder(doc)
        FORMATS[name].convert(doc, builder)
        messages = mark_summaries(builder.finish())
    except TranscriptError:
        raise
    except RecursionError:  # JSON just under the parser's depth limit, walked deeper here
        raise doc.fail("JSON nested too deeply") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # A shape no importer check anticipated: still one line naming the file.
        raise doc.fail(
            f"unexpected {name} structure ({type(exc).__name__}: {quoted(cut(str(exc), 160))})"
        ) from None
    where = scrub(str(path))  # a name may hold a key: where it is shown, it is redacted
    return Imported(
        transcript=Transcript(id=transcript_name(path), source=where, messages=messages),
        format=name,
        path=where,
        sha256=doc.sha256,
        size=doc.size,
        warnings=doc.warnings,
        notes=doc.notes,
        task=task_id(doc.value, doc.records, messages),
    )


def transcript_name(path: Path, redact: Callable[[str], str] | None = None) -> str:
    """A file's transcript id: its stem, any secret in it replaced (``run_ghp_...jsonl`` is
    ``run_REDACTED-github_token``), for the id names probes, folders, tables and runs."""
    return scrub_name(path.stem, redact)


def detect(doc: Document) -> str:
    """The format of a parsed file, from its content."""
    if doc.records is None:
        value = doc.value
        if not isinstance(value, (dict, list)):
            raise NotATranscript(doc.path, f"a JSON {type(value).__name__}, not a transcript")
        for module in _DOCUMENTS:
            if module.claims(value):
                return module.NAME
        if isinstance(value, list):  # a list of objects, none a message
            raise NotATranscript(doc.path, "a JSON list of objects with no 'role': no messages")
        doc.records, doc.value = [(1, value)], None  # a one-line JSON Lines file
    for line, record in doc.records[:_SNIFF_RECORDS]:  # type: ignore[index]
        if not isinstance(record, dict):
            raise doc.fail(f"expected a JSON object per line, got {type(record).__name__}", line)
        for module in _RECORDS:
            if module.claims_record(record):
                return module.NAME
    keys = sorted(doc.records[0][1]) if doc.records else []  # type: ignore[index]
    quoted = ", ".join(shown(key, 24) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")
    raise NotATranscript(
        doc.path,
        f"unrecognised transcript format (first record's keys: {quoted or 'none'}); expected "
        "OpenAI chat messages, an SWE-agent .traj, a mini-swe-agent .traj.json, a Claude Code "
        "session or a Codex CLI rollout",
    )
