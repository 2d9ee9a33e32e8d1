"""What the intervals' clusters are (``stats.cluster_by``), shared by the job and the report.

Probes of one compaction point move together, so ``point`` (a (transcript, point)
pair) is the least a cluster can be. Runs of one task (several logs replaying one
SWE-bench instance) move together too: ``task`` clusters them as one, and
``transcript`` sits between. A transcript with no task id read from its log is its
own task.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ClusterBy = Literal["point", "transcript", "task"]
PARAM = "stats.cluster_by"
# Coarser last: a comparison of runs clustered differently uses the coarsest (conservative).
ORDER: tuple[ClusterBy, ...] = ("point", "transcript", "task")
LABELS: dict[str, str] = {
    "point": "(transcript, point)",
    "transcript": "transcripts",
    "task": "tasks (a transcript without a task id is its own)",
}


class StatsConfig(BaseModel):
    """How intervals are computed (the ``stats`` config block)."""

    model_config = ConfigDict(extra="forbid")

    cluster_by: ClusterBy = Field(
        "point", description="the unit of the cluster jackknife: point, transcript or task"
    )


def cluster_key(cluster_by: str, transcript: Any, point: Any, task: Any = None) -> Hashable:
    """A probe's cluster: its (transcript, point), its transcript, or its task."""
    if cluster_by == "task":
        return ("task", task) if task else ("transcript", transcript)
    if cluster_by == "transcript":
        return transcript
    return (transcript, point)


def row_cluster(row: Mapping[str, Any], cluster_by: str) -> Hashable:
    """The cluster of a per-probe table row (``transcript``, ``point``, ``task`` columns)."""
    return cluster_key(cluster_by, row.get("transcript"), row.get("point"), row.get("task"))


def coarsest(values: list[str | None]) -> ClusterBy:
    """The coarsest cluster key among runs' params (``point`` when none says)."""
    known = [v for v in values if v in ORDER]
    return max(known, key=ORDER.index) if known else "point"  # type: ignore[return-value]


def shared_tasks(tasks: Mapping[str, str | None]) -> dict[str, list[str]]:
    """Tasks of more than one transcript: task -> its transcripts."""
    by_task: dict[str, list[str]] = {}
    for transcript, task in tasks.items():
        if task:
            by_task.setdefault(task, []).append(transcript)
    return {t: ids for t, ids in by_task.items() if len(ids) > 1}


def shared_task_warning(tasks: Mapping[str, str | None], cluster_by: str) -> str | None:
    """One line when transcripts share a task but are clustered apart (intervals too narrow)."""
    if cluster_by == "task":
        return None
    shared = shared_tasks(tasks)
    if not shared:
        return None
    count = sum(len(ids) for ids in shared.values())
    return (
        f"{count} transcripts replay {len(shared)} task(s) but clusters are "
        f"{LABELS[cluster_by]}: intervals are too narrow; use stats.cluster_by=task"
    )
