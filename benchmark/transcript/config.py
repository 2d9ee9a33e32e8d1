"""Where a job's transcripts come from (the ``transcript`` Hydra group): generated
sessions or agent logs on disk, told apart by ``kind``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from benchmark.config.validators import Seed

# Generated sessions: past these a job runs for hours (about 1.5 min per million tokens).
MAX_GENERATED_SESSIONS = 1_000
MAX_GENERATED_TOKENS = 2_000_000  # the longest real agent sessions


class SyntheticTranscripts(BaseModel):
    """Generated coding-agent sessions (``conf/transcript/synthetic.yaml``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["synthetic"] = Field(description="which source: generated sessions")
    name: str = Field(description="label in run names (<policy>@<name>)")
    sessions: int = Field(
        1, gt=0, le=MAX_GENERATED_SESSIONS, description="number of generated sessions"
    )
    seed: Seed = Field(0, description="generation seed (session i: a hash of (seed, i))")
    target_tokens: int = Field(
        240_000, gt=1000, le=MAX_GENERATED_TOKENS, description="tokens per generated session"
    )


ImportFormat = Literal["auto", "chat", "swe_agent", "mini_swe_agent", "claude_code", "codex"]


class FileTranscripts(BaseModel):
    """Agent logs on disk (``conf/transcript/files.yaml``), imported by ``transcript.formats``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["files"] = Field(description="which source: agent logs on disk")
    name: str = Field(description="label in run names (<policy>@<name>)")
    path: str | list[str] = Field(description="a file, a glob or a folder, or a list of them")
    format: ImportFormat = Field("auto", description="auto: detected from each file's content")
    on_error: Literal["skip", "fail"] = Field(
        "fail", description="a file that cannot be imported: skip it (reported) or stop the job"
    )
    extensions: list[str] = Field(
        default_factory=lambda: [".json", ".jsonl", ".traj", ".ndjson"],
        description="which files of a folder are read (globs and named files: all)",
    )
    max_line_mb: float = Field(
        32, gt=0, le=4096, description="a longer line is an error, not a transcript"
    )

    @field_validator("path")
    @classmethod
    def _some_path(cls, value: str | list[str]) -> str | list[str]:
        if not value or (
            isinstance(value, list) and not all(isinstance(v, str) and v for v in value)
        ):
            raise ValueError("give a file, a glob or a folder")
        return value

    @field_validator("extensions")
    @classmethod
    def _some_extensions(cls, value: list[str]) -> list[str]:
        if not value or not all(e.strip(". ") for e in value):
            raise ValueError(
                "must list the file extensions a folder scan reads, e.g. [.json, .jsonl] "
                "(an empty list would read no file of a folder)"
            )
        return value


TranscriptConfig = Annotated[SyntheticTranscripts | FileTranscripts, Field(discriminator="kind")]
