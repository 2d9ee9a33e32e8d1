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
from pydantic_core import PydanticCustomError

from benchmark.audit.config import AuditConfig
from benchmark.compaction import CompactionConfig
from benchmark.config_checks import (
    check_endpoints,
    check_finite,
    check_writable,
    validation_message,
)
from benchmark.config_rules import check_rules
from benchmark.errors import UserError
from benchmark.probe.config import ProbeConfig
from benchmark.redaction import BUILTIN_NAMES, compile_pattern
from benchmark.rubric import Rubric
from benchmark.validators import NO_ECHO, http_url_problem


class ComponentConfig(BaseModel):
    """A swappable part built with ``hydra.utils.instantiate``: ``_target_`` plus kwargs."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str = Field(min_length=1)
    target: str = Field(alias="_target_", min_length=1)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SyntheticTranscripts(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["synthetic"]
    name: str
    sessions: int = Field(1, gt=0, le=10_000, description="number of generated sessions")
    seed: int = 0
    target_tokens: int = Field(240_000, gt=1000, le=10_000_000)


ImportFormat = Literal["auto", "chat", "swe_agent", "mini_swe_agent", "claude_code", "codex"]


class FileTranscripts(BaseModel):
    """Agent logs on disk (``conf/transcript/files.yaml``), imported by ``transcript.formats``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

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


class TrackingConfig(BaseModel):
    """Where runs are logged: a SQLite store under ``store_dir``, or a tracking server (``uri``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    enabled: bool = True
    uri: str | None = Field(
        None,
        description="an MLflow tracking URI (e.g. a shared `mlflow server`); "
        "null: the SQLite store under store_dir",
    )
    store_dir: str = Field("mlruns", min_length=1)
    experiment: str = Field("compaction-benchmark", min_length=1)
    run_name: str | None = Field(None, min_length=1, description="null: <policy>@<transcript>")
    trace_llm: bool = Field(
        True, description="log every LLM call as an MLflow trace linked to the run"
    )

    @field_validator("uri")
    @classmethod
    def _tracking_uri(cls, value: str | None) -> str | None:
        if value is None:
            return value
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if scheme in ("http", "https"):
            problem = http_url_problem(value)
            if problem and "credentials" in problem:
                problem += (
                    ": MLflow reads them from MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
                )
        elif not scheme.replace("+", "").isalnum() and value != "databricks":
            problem = (
                "must be an MLflow tracking URI such as http://host:5000, "
                "sqlite:///path/mlflow.db or file:///path/mlruns (null: the store under store_dir)"
            )
        else:
            problem = None
        if problem:
            raise PydanticCustomError(NO_ECHO, problem)
        return value


class CacheConfig(BaseModel):
    """Where cached probe sets and LLM replies live, and whether a job reads them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    dir: str | None = Field(
        ".cache/benchmark", min_length=1, description="null disables every cache"
    )
    mode: Literal["use", "refresh", "off"] = Field(
        "use", description="use: read and write; refresh: write only; off: neither"
    )


class ExecutionConfig(BaseModel):
    """How a job runs its LLM calls; none of this changes a result."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    fail_on_error: float = Field(
        0.05, ge=0, le=1, description="exit non-zero when more probes than this fraction failed"
    )
    max_probes_in_flight: int = Field(
        256,
        gt=0,
        le=1_000_000,
        description="probes being answered or judged at once (bounds memory)",
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

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

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
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

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
    """The typed config; any bad value, endpoint or unwritable output folder is a
    ``UserError`` naming its key, before any work."""
    data = resolve(cfg) if isinstance(cfg, DictConfig) else cfg
    check_finite(data)
    try:
        config = BenchmarkConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(validation_message(exc, model=BenchmarkConfig)) from None
    check_endpoints(data)
    check_rules(config)  # between groups (benchmark.config_rules), before any work
    check_output_dirs(config)
    return config


def check_output_dirs(config: BenchmarkConfig) -> None:
    """The folders the job will write are writable (or can be made), checked up front."""
    if config.cache_path is not None:
        check_writable("cache.dir", config.cache_path)
    if config.tracking.enabled and config.tracking.uri is None:
        check_writable("tracking.store_dir", config.tracking.store_dir)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "invalid value"
