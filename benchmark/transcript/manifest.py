"""What a run's transcripts were: files with content hashes, and files skipped with why.

A file's ``summaries`` are the messages that were already a summary in the log
(the agent's own compactions): probes never draw on them.

Logged with every run (``transcripts/manifest.json`` and MLflow dataset
inputs), so a score can be traced back to exactly the data behind it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class SourceFile(BaseModel):
    """One transcript a job used, and where it came from."""

    transcript_id: str
    path: str = Field(description="the file, or 'synthetic:seed=N'")
    format: str
    sha256: str = Field(description="of the file's bytes (of the messages, when generated)")
    size: int = Field(0, description="bytes of the file")
    messages: int
    tool_calls: int
    tokens: int
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(
        default_factory=list, description="what the log says beyond its messages (exit status)"
    )
    redactions: dict[str, int] = Field(
        default_factory=dict, description="secrets replaced by placeholders, per type"
    )
    task: str | None = Field(
        None,
        description="the task the log replays (benchmark.transcript.task): runs of one task "
        "cluster as one with stats.cluster_by=task; None: its own task",
    )
    summaries: list[int] = Field(
        default_factory=list,
        description="indices of messages that were already a summary in the log (the agent's "
        "own compactions): kept as the model saw them, never a source of probes",
    )


class SkippedFile(BaseModel):
    path: str
    error: str = Field(
        description="why: the import error ('line N: ...' where there is a line), a note "
        "for a file left out on purpose (a sub-agent's log met in a folder scan), or why a "
        "scan passed an entry over (a FIFO, a symbolic link loop, a folder named '*.jsonl')"
    )
    line: int | None = Field(None, description="the line of the file at fault, if any")


class TranscriptManifest(BaseModel):
    """The job's transcripts; ``warnings``: what a reader of the scores must know (transcripts
    sharing a task while clustered apart)."""

    source: str = Field(description="the transcript config's path(s), or the generator and seed")
    files: list[SourceFile]
    skipped: list[SkippedFile] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    passed_over: dict[str, int] = Field(
        default_factory=dict,
        description="entries a folder scan passed over without naming them, counted by why "
        "(hidden, another extension)",
    )

    def tasks(self) -> dict[str, str | None]:
        """transcript id -> its task (None: none read from its log)."""
        return {f.transcript_id: f.task for f in self.files}
