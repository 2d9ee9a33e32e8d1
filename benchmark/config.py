"""Validation of the composed Hydra config into pydantic models.

Hydra composes ``conf/``; this module turns the result into typed models so a
bad value fails before any work, with one line naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from benchmark.audit.config import AuditConfig
from benchmark.compaction import CompactionConfig
from benchmark.errors import UserError
from benchmark.probe.config import ProbeConfig
from benchmark.redaction import BUILTIN_NAMES, compile_pattern
from benchmark.rubric import Rubric


class ComponentConfig(BaseModel):
    """A swappable part built with ``hydra.utils.instantiate``: ``_target_`` plus kwargs."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str = Field(min_length=1)
    target: str = Field(alias="_target_", min_length=1)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SyntheticTranscripts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["synthetic"]
    name: str
    sessions: int = Field(1, gt=0, description="number of generated sessions")
    seed: int = 0
    target_tokens: int = Field(240_000, gt=1000)


ImportFormat = Literal["auto", "chat", "swe_agent", "mini_swe_agent", "claude_code", "codex"]


class FileTranscripts(BaseModel):
    """Agent logs on disk (``conf/transcript/files.yaml``), imported by ``transcript.formats``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["files"]
    name: str
    path: str | list[str] = Field(description="a file, a glob or a folder, or a list of them")
    format: ImportFormat = Field("auto", description="auto: detected from each file's content")
    on_error: Literal["skip", "fail"] = Field(
        "fail", description="a file that cannot be imported: skip it (reported) or stop the job"
    )
    extensions: list[str] = Field(
        default_factory=lambda: [".json", ".jsonl", ".traj", ".ndjson"],
        description="which files of a folder are read (globs and named files: all)",
    )
    max_line_mb: float = Field(32, gt=0, description="a longer line is an error, not a transcript")

    @field_validator("path")
    @classmethod
    def _some_path(cls, value: str | list[str]) -> str | list[str]:
        if not value or (
            isinstance(value, list) and not all(isinstance(v, str) and v for v in value)
        ):
            raise ValueError("give a file, a glob or a folder")
        return value


TranscriptConfig = Annotated[SyntheticTranscripts | FileTranscripts, Field(discriminator="kind")]


class TrackingConfig(BaseModel):
    """Where runs are logged: a SQLite store under ``store_dir``, or a tracking server (``uri``)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    uri: str | None = Field(
        None,
        description="an MLflow tracking URI (e.g. a shared `mlflow server`); "
        "null: the SQLite store under store_dir",
    )
    store_dir: str = "mlruns"
    experiment: str = Field("compaction-benchmark", min_length=1)
    run_name: str | None = None
    trace_llm: bool = Field(
        True, description="log every LLM call as an MLflow trace linked to the run"
    )


class CacheConfig(BaseModel):
    """Where cached probe sets and LLM replies live, and whether a job reads them."""

    model_config = ConfigDict(extra="forbid")

    dir: str | None = Field(".cache/benchmark", description="null disables every cache")
    mode: Literal["use", "refresh", "off"] = Field(
        "use", description="use: read and write; refresh: write only; off: neither"
    )


class ExecutionConfig(BaseModel):
    """How a job runs its LLM calls; none of this changes a result."""

    model_config = ConfigDict(extra="forbid")

    fail_on_error: float = Field(
        0.05, ge=0, le=1, description="exit non-zero when more probes than this fraction failed"
    )
    max_probes_in_flight: int = Field(
        256, gt=0, description="probes being answered or judged at once (bounds memory)"
    )
    progress: Literal["auto", "bar", "log", "off"] = Field(
        "auto", description="auto: a bar on a terminal, log lines otherwise"
    )


def _regex(value: str) -> str:
    compile_pattern("user_pattern", value)  # the error's key names the pattern
    return value


def _type_names(value: dict[str, str]) -> dict[str, str]:
    for name in value:
        compile_pattern(name, "x")
    return value


class RedactionConfig(BaseModel):
    """Credentials in transcripts replaced by typed placeholders as they load
    (``benchmark.redaction``), so nothing downstream ever sees the secret."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    builtin: Literal["all"] | list[str] = Field(
        "all", description="which built-in detectors run: all, or a list of their names"
    )
    patterns: Annotated[
        dict[str, Annotated[str, AfterValidator(_regex)]], AfterValidator(_type_names)
    ] = Field(
        default_factory=dict,
        description="extra detectors: type name -> regex (a group named s: only that part)",
    )

    @field_validator("builtin")
    @classmethod
    def _known_detectors(cls, value: str | list[str]) -> str | list[str]:
        for name in [] if value == "all" else value:
            if name not in BUILTIN_NAMES:
                raise ValueError(
                    f"unknown detector {name!r} (choose from: all, {', '.join(BUILTIN_NAMES)})"
                )
        return value


Objective = Literal["overall", "score_per_kilotoken"]


class BenchmarkConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    objective: Objective = Field(
        "overall",
        description="what a job returns to a Hydra sweeper (`objective_value` in __main__)",
    )
    cache: CacheConfig = CacheConfig()
    execution: ExecutionConfig = ExecutionConfig()
    redaction: RedactionConfig = RedactionConfig()
    transcript: TranscriptConfig
    compaction: CompactionConfig
    probe: ProbeConfig
    policy: ComponentConfig
    summarizer: ComponentConfig
    answerer: ComponentConfig
    judge: ComponentConfig
    rubric: Rubric
    tracking: TrackingConfig
    control: bool = Field(
        False,
        description="also answer and judge every probe from the uncompacted session "
        "(the control arm) and log retention = score / control score",
    )
    audit: AuditConfig | None = Field(
        None, description="set by +audit=judge: audit the judge instead of running the benchmark"
    )

    @property
    def cache_path(self) -> Path | None:
        """The cache folder, or None when caching is off."""
        if not self.cache.dir or self.cache.mode == "off":
            return None
        return Path(self.cache.dir)

    @property
    def run_name(self) -> str:
        return self.tracking.run_name or f"{self.policy.name}@{self.transcript.name}"


def resolve(cfg: DictConfig) -> dict[str, Any]:
    """The config as plain data with interpolations resolved (Hydra's own node dropped)."""
    try:
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        raise UserError(f"config key '{key}': {_first_line(str(exc))}") from None
    assert isinstance(data, dict)
    data.pop("hydra", None)
    return data


def validate(cfg: DictConfig | dict[str, Any]) -> BenchmarkConfig:
    data = resolve(cfg) if isinstance(cfg, DictConfig) else cfg
    try:
        return BenchmarkConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"] if not _is_union_tag(p))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        got = f" (got {err['input']!r})" if _short_scalar(err.get("input")) else ""
        raise UserError(f"config key '{loc}': {msg}{got}") from None


def _is_union_tag(part: object) -> bool:
    return part in ("synthetic", "files")


def _short_scalar(value: object) -> bool:
    return isinstance(value, int | float | str | bool) and len(str(value)) < 80


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "invalid value"
