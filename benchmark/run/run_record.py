"""One run as plain data: what a job or an audit logs, and how it ends.

The job (``benchmark.run.job``) and the judge audit (``benchmark.audit.run``) each build a
:class:`RunRecord`; ``benchmark.tracking.log_run`` is the one function that writes a
record to MLflow. Keeping the record free of MLflow lets either side be read, tested
and extended without the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from benchmark.llm.usage import CallRecord
from benchmark.redaction import redact_settings
from benchmark.transcript.manifest import TranscriptManifest

if TYPE_CHECKING:
    from benchmark.run.results import JobResult

# Param values longer than this are cut (MLflow rejects very long values).
MAX_PARAM_CHARS = 500


class RunRecord(BaseModel):
    """Everything one MLflow run holds, already redacted."""

    run_name: str
    params: dict[str, str] = Field(description="the flattened, redacted config")
    tags: dict[str, str] = {}
    metrics: dict[str, float] = {}
    artifacts: dict[str, str] = Field(default={}, description="file path in the run -> text")
    artifact_dir: Path | None = Field(
        None,
        description="a folder whose files are logged as they are (a job's streamed run "
        "files: contexts, probes, answers, judgments), never read into memory",
    )
    tables: dict[str, dict[str, list[Any]]] = Field(
        default={}, description="artifact file -> columns (an MLflow table)"
    )
    inputs: TranscriptManifest | None = Field(None, description="logged as dataset inputs")
    calls: list[CallRecord] = Field(default=[], description="LLM calls, logged as a trace")
    judge_source: Literal["CODE", "LLM_JUDGE"] = Field(
        "CODE", description="what scored the probes: the source of each score in its trace"
    )
    status: Literal["FINISHED", "KILLED"] = "FINISHED"
    _keep: Any = PrivateAttr(None)  # what must live as long as the record (a temp folder)

    def keeping(self, owner: Any) -> RunRecord:
        """This record, holding ``owner`` (e.g. the temporary ``artifact_dir``) alive."""
        self._keep = owner
        return self


@dataclass(frozen=True)
class Outcome:
    """How a run ends once its record is logged: what a sweeper gets, or why it stops."""

    objective: float | None = None
    failure: str | None = None  # raised as JobFailed after logging
    interrupted: JobResult | None = None  # Ctrl-C: the probes finished before it


# Config that changes how a run goes, never what it measures (caches, progress display,
# concurrency, retries and timeouts, where it is logged): left out of the params, so the
# params a run comparison shows are those that can explain a difference. config.yaml keeps all.
OPERATIONAL_SECTIONS = ("cache", "execution", "tracking")
OPERATIONAL_ENDPOINT_KEYS = (
    "timeout_s",
    "max_retries",
    "backoff_initial_s",
    "backoff_max_s",
    "max_concurrency",
)


def run_params(clean: dict[str, Any]) -> dict[str, str]:
    """A run's params: the redacted config ``clean`` flattened, without operational keys
    (``OPERATIONAL_SECTIONS``, endpoints' ``OPERATIONAL_ENDPOINT_KEYS``), unset values or
    class paths (``policy._target_``: the option's ``name`` says it; ``config.yaml`` has
    them). MLflow's compare page plots the first params that differ, in key order, so they
    were what it showed; without them it starts at the policy's own settings."""
    return {
        key: value
        for key, value in flatten(clean).items()
        if not _operational(key.split(".")) and not key.endswith("._target_")
    }


def _operational(parts: list[str]) -> bool:
    """Whether a dotted key (split) is operational: its section, or an endpoint's setting."""
    return parts[0] in OPERATIONAL_SECTIONS or (
        len(parts) >= 2 and parts[-2] == "endpoint" and parts[-1] in OPERATIONAL_ENDPOINT_KEYS
    )


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys for nested config; a list becomes comma-separated text (``a, b``, easy to
    read and filter on in MLflow), None is left out (unset). Cuts long values: ``data`` must
    be redacted already (``redact``), so no cut splits a secret."""
    flat: dict[str, str] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            flat.update(flatten(value, f"{prefix}{key}."))
        return flat
    if data is None:
        return flat
    text = ", ".join(map(str, data)) if isinstance(data, list | tuple) else str(data)
    if len(text) > MAX_PARAM_CHARS:
        text = text[: MAX_PARAM_CHARS - 3] + "..."
    return {prefix.rstrip("."): text}


def redact(data: Any) -> Any:
    """Config as it may be logged: secret-named keys' values, URL user parts and anything a
    detector finds redacted (``benchmark.redaction.redact_settings``)."""
    return redact_settings(data)


def columns(rows: list[dict[str, object]]) -> dict[str, list[object]]:
    """Row dicts as the columns of an MLflow table (a key missing in a row is None)."""
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    return {k: [row.get(k) for row in rows] for k in keys}
