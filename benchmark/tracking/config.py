"""Where runs are logged (the ``tracking`` Hydra group); importing it loads no MLflow."""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from benchmark.config.validators import NO_ECHO, http_url_problem

# Seconds between system metric samples: MLflow's 10 s would give a 5 s job none.
# MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL, when set, wins.
SYSTEM_METRICS_INTERVAL_S = 1.0
# MLflow's columns (mlflow/store/tracking/dbmodels/models.py): experiments.name is
# String(256) (its API allows 500, but a PostgreSQL or MySQL store refuses past 256),
# runs.name String(250).
MAX_EXPERIMENT_CHARS = 256
MAX_RUN_NAME_CHARS = 250


class TrackingConfig(BaseModel):
    """Where runs are logged: a SQLite store under ``store_dir``, or a tracking server (``uri``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    enabled: bool = Field(True, description="false: no MLflow run (tracking=disabled)")
    uri: str | None = Field(
        None,
        description="an MLflow tracking URI (e.g. a shared `mlflow server`); "
        "null: the SQLite store under store_dir",
    )
    store_dir: str = Field(
        "mlruns", min_length=1, description="folder of the SQLite store when uri is null"
    )
    experiment: str = Field(
        "compaction-benchmark",
        min_length=1,
        max_length=MAX_EXPERIMENT_CHARS,
        description="MLflow experiment the runs go to",
    )
    run_name: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_RUN_NAME_CHARS,
        description="null: <policy>@<transcript>",
    )
    trace_llm: bool = Field(
        True, description="log every LLM call as an MLflow trace linked to the run"
    )
    trace_probes: bool = Field(
        True,
        description="log every probe as an MLflow trace of the run, its score an assessment "
        "(offline too; its LLM calls under it with trace_llm)",
    )
    system_metrics: bool = Field(
        False,
        description="sample CPU, memory, disk and network into the run (system/*) while the "
        "job runs, every SYSTEM_METRICS_INTERVAL_S seconds (needs psutil)",
    )
    telemetry: bool = Field(
        False,
        description="let MLflow send its usage telemetry (off by default: no network unless "
        "asked; MLFLOW_DISABLE_TELEMETRY or DO_NOT_TRACK in the environment wins)",
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

    @field_validator("experiment", "store_dir", "uri")
    @classmethod
    def _no_secret(cls, value: str | None) -> str | None:
        """The experiment's name and the store's place are written into the store itself
        (an experiment's name, its artifact location, every run's artifact URI): a key in
        them cannot be scrubbed without renaming what the user named, so it is refused."""
        from benchmark.redaction import scrub_setting

        # A database URI's user:password@ is where its driver reads the password (MLflow
        # never stores the tracking URI); it is scrubbed wherever the URI is shown.
        value_checked = _USERINFO.sub("//", value, count=1) if value is not None else None
        if value_checked is not None and (
            scrub_setting(value_checked) != value_checked
            or scrub_setting(_absolute(value_checked)) != _absolute(value_checked)
        ):
            raise PydanticCustomError(
                NO_ECHO, "looks like it holds a secret (a key or token); choose another"
            )
        return value


_USERINFO = re.compile(r"//[^/@\s]*@")


def _absolute(value: str) -> str:
    """A path as the store records it (resolved against the working directory)."""
    return os.path.abspath(os.path.expanduser(value)) if "://" not in value else value
