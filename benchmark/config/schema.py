"""Validation of the composed Hydra config into pydantic models.

Hydra composes ``conf/``; this module assembles the schemas each package owns
(``<package>/config.py``) into ``BenchmarkConfig``, so a bad value fails before any
work, with one line naming the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchmark.audit.config import AuditConfig
from benchmark.config.checks import (
    check_endpoints,
    check_finite,
    check_writable,
    validation_message,
)
from benchmark.config.instantiate import ComponentConfig
from benchmark.config.limits import check_limits
from benchmark.config.rules import check_rules
from benchmark.config.validators import Seed
from benchmark.errors import UserError
from benchmark.probe.config import ProbeConfig, check_writer
from benchmark.redaction.config import RedactionConfig
from benchmark.rubric import Rubric
from benchmark.run.compaction import CompactionConfig
from benchmark.run.storage import CacheConfig
from benchmark.scoring.clusters import StatsConfig
from benchmark.task_success.config import RoleConfig, TaskConfig
from benchmark.tracking.config import TrackingConfig
from benchmark.transcript.config import TranscriptConfig


class ReportConfig(BaseModel):
    """What a sweep's end makes (``benchmark/report/sweep_end.py``); a single job ignores it."""

    model_config = ConfigDict(extra="forbid")

    auto: bool = Field(
        True,
        description="at a sweep's end, make its report and log it onto the sweep's parent run "
        "(the comparison is printed and saved as a view either way)",
    )


class ExecutionConfig(BaseModel):
    """How a job runs its LLM calls; none of this changes a result. (Here, not in
    ``progress``: that module loads the LLM stack, which validating a config must not.)"""

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
    prepare_workers: int | Literal["auto"] = Field(
        "auto",
        description="worker processes that load sessions, extract probes and compact while "
        "the LLM calls of points already prepared run (0: in the job's process, before the "
        "calls); auto: one per CPU (at most 8) for LLM jobs whose preparation needs no model "
        "and holds at least a million tokens",
    )

    @field_validator("prepare_workers", mode="before")
    @classmethod
    def _workers(cls, value: object) -> object:
        if value == "auto" or (type(value) is int and 0 <= value <= 64):
            return value
        raise ValueError("must be auto or a number of processes from 0 to 64")


Objective = Literal["overall", "score_per_kilotoken"]


class BenchmarkConfig(BaseModel):
    """The whole job: every group of ``conf/`` and the top-level keys, validated."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seed: Seed = Field(0, description="master seed: generated sessions and probe selection")
    objective: Objective = Field(
        "overall",
        description="what a job returns to a Hydra sweeper (`objective_value` in __main__)",
    )
    cache: CacheConfig = CacheConfig()
    execution: ExecutionConfig = ExecutionConfig()
    report: ReportConfig = ReportConfig()
    redaction: RedactionConfig = RedactionConfig()
    stats: StatsConfig = StatsConfig()
    transcript: TranscriptConfig
    compaction: CompactionConfig
    probe: ProbeConfig
    policy: ComponentConfig  # options checked by check_components
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
    # The task-success arm (+experiment=task_success; benchmark/task_success/).
    task: TaskConfig | None = Field(None, description="resume tau2 tasks at compaction points")
    agent: RoleConfig | None = Field(None, description="the agent resumed (task success)")
    user: RoleConfig | None = Field(None, description="the customer it talks to (task success)")

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


def validate(cfg: DictConfig | dict[str, Any], parts: bool = True) -> BenchmarkConfig:
    """The typed config; any bad value, endpoint, part option or unwritable output folder
    is a ``UserError`` naming its key, before any work. ``parts=False`` (a caller that
    builds no part, e.g. ``benchmark.preview``) leaves the parts' options unchecked, so
    the LLM stack their packages import is not loaded."""
    data = resolve(cfg) if isinstance(cfg, DictConfig) else cfg
    check_limits(data)  # before anything reads a value: sizes, depth, key lengths
    check_finite(data)
    try:
        config = BenchmarkConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(validation_message(exc, model=BenchmarkConfig)) from None
    check_endpoints(data)
    check_rules(config, parts)  # between groups (benchmark.config.rules), before any work
    if config.task is not None and (config.agent is None or config.user is None):
        raise UserError("config 'task' needs agent= and user= too (see +experiment=task_success)")
    if parts:
        check_components(config)
    check_output_dirs(config)
    return config


def check_components(config: BenchmarkConfig) -> None:
    """Every part's options against its target's typed settings (each group's table is
    in its package's ``config`` module), before any part is built."""
    from benchmark.answerer.config import AnswererConfig
    from benchmark.judge.config import JudgeConfig
    from benchmark.policy.config import PolicyConfig
    from benchmark.summarizer.config import SummarizerConfig

    schemas = {
        "summarizer": SummarizerConfig,
        "policy": PolicyConfig,
        "answerer": AnswererConfig,
        "judge": JudgeConfig,
    }
    for group, schema in schemas.items():
        part = schema.model_validate(getattr(config, group).model_dump(by_alias=True))
        part.check(group)
        setattr(config, group, part)  # built with its group's targets (parts.build)
    check_writer(config.probe)


def check_output_dirs(config: BenchmarkConfig) -> None:
    """The folders the job will write are writable (or can be made), checked up front."""
    if config.cache_path is not None:
        check_writable("cache.dir", config.cache_path)
    if config.tracking.enabled and config.tracking.uri is None:
        check_writable("tracking.store_dir", config.tracking.store_dir)
    elif config.tracking.enabled:  # a URI MLflow cannot use is refused now, not after the job
        from benchmark.tracking.tracking_uri import check_uri

        check_uri(config.tracking)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "invalid value"
