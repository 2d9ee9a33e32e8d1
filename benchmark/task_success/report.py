"""The arm's numbers: one row per compaction point, and the run metrics over them.

Metrics (``benchmark.scoring.metric_names``, ``task/...``): success over the points with
its cluster jackknife interval (``benchmark.scoring.stats``, clustered as the probes are:
``stats.cluster_by``), the control's success, retention = success / control success
over the same points (a paired ratio with its interval, as the probes' retention),
and per resume the turns, tokens and repeated tool calls after the point. A resume
that failed (its endpoint, or a log that does not replay) is counted, not scored.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from benchmark.run.results import PointResult
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import cluster_key
from benchmark.scoring.stats import cluster_interval, ratio_interval
from benchmark.task_success.runs import ResumeResult
from benchmark.task_success.session import Session

TABLE = "task_points_table.json"


class PointRecord(BaseModel):
    """One compaction point: its probes' figures and both resumes."""

    transcript: str
    task_id: str
    domain: str
    point: int
    probe_overall: float | None
    probes: int
    facts_lost: int
    main: ResumeResult | None = Field(None, description="None: the point was not compacted")
    control: ResumeResult | None = None

    @classmethod
    def of(
        cls,
        point: PointResult,
        pair: tuple[Session, Any],
        main: ResumeResult | None,
        control: ResumeResult | None,
    ) -> PointRecord:
        session, _ = pair
        scored = [r.score for r in point.probes if r.score is not None]
        lost = sum(
            round((1 - r.survival) * len(r.probe.gold.facts))
            for r in point.probes
            if r.survival is not None
        )
        return cls(
            transcript=point.point.transcript_id,
            task_id=session.task_id,
            domain=session.domain,
            point=point.point.ordinal,
            probe_overall=sum(scored) / len(scored) if scored else None,
            probes=len(point.probes),
            facts_lost=lost,
            main=main,
            control=control,
        )

    def row(self, policy: str, cluster_by: str) -> dict[str, Any]:
        """The point's row of ``task_points_table.json`` (the report's input)."""
        main, control = self.main or ResumeResult(error="not compacted"), self.control
        return {
            "transcript": self.transcript,
            "task_id": self.task_id,
            "domain": self.domain,
            "point": self.point,
            "policy": policy,
            "reward": main.reward,
            "success": main.success,
            "reward_control": control.reward if control else None,
            "success_control": control.success if control else None,
            "steps": main.steps,
            "tokens": main.tokens,
            "repeated_tool_calls": main.repeated_tool_calls,
            "probe_overall": self.probe_overall,
            "probes": self.probes,
            "facts_lost": self.facts_lost,
            "cluster": self.cluster(cluster_by),
            "error": main.error or (control.error if control else None),
        }

    def cluster(self, cluster_by: str) -> str:
        key = cluster_key(cluster_by, self.transcript, self.point, f"{self.domain}/{self.task_id}")
        return "/".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


class TaskOutcome(BaseModel):
    metrics: dict[str, float]
    rows: list[dict[str, Any]]
    line: str


def outcome(records: list[PointRecord], policy: str, cluster_by: str) -> TaskOutcome:
    """Metrics, table rows and the scorecard line of the arm's points."""
    rows = [r.row(policy, cluster_by) for r in records]
    scored = [r for r in records if r.main is not None and r.main.reward is not None]
    metrics: dict[str, float] = {
        names.TASK_POINTS: len(records),
        names.TASK_FAILED_RESUMES: sum(
            x is not None and x.reward is None for r in records for x in (r.main, r.control)
        ),
    }
    line = f"task success ({policy}): no resume was scored"
    if scored:
        clusters = [r.cluster(cluster_by) for r in scored]
        success = [float(r.main.success) for r in scored]  # type: ignore[union-attr]
        est = cluster_interval(success, clusters, limits=(0.0, 1.0))
        metrics[names.TASK_SUCCESS] = est.mean
        _bounds(metrics, names.TASK_SUCCESS, est.low, est.high)
        for name, attr in (
            (names.TASK_STEPS_TO_FINISH, "steps"),
            (names.TASK_TOKENS_TO_FINISH, "tokens"),
            (names.TASK_REPEATED_TOOL_CALLS, "repeated_tool_calls"),
        ):
            metrics[name] = sum(getattr(r.main, attr) for r in scored) / len(scored)
        line = (
            f"task success ({policy}): {est.mean:.2f}{_shown(est.low, est.high)} over "
            f"{len(scored)} point(s); {metrics[names.TASK_STEPS_TO_FINISH]:.1f} turns, "
            f"{metrics[names.TASK_TOKENS_TO_FINISH]:,.0f} tokens, "
            f"{metrics[names.TASK_REPEATED_TOOL_CALLS]:.1f} repeated tool calls per resume"
        )
    paired = [r for r in scored if r.control is not None and r.control.reward is not None]
    if paired:
        control = [float(r.control.success) for r in paired]  # type: ignore[union-attr]
        metrics[names.TASK_SUCCESS_CONTROL] = sum(control) / len(control)
        line += f"; control {metrics[names.TASK_SUCCESS_CONTROL]:.2f}"
        if sum(control) > 0:
            main = [float(r.main.success) for r in paired]  # type: ignore[union-attr]
            clusters = [r.cluster(cluster_by) for r in paired]
            est = ratio_interval(main, control, clusters, limits=(0.0, math.inf))
            metrics[names.TASK_RETENTION] = est.mean
            _bounds(metrics, names.TASK_RETENTION, est.low, est.high)
            line += f", retention {est.mean:.2f}{_shown(est.low, est.high)}"
    return TaskOutcome(metrics=metrics, rows=rows, line=line)


def _bounds(metrics: dict[str, float], name: str, low: float, high: float) -> None:
    if not (math.isnan(low) or math.isnan(high)):
        metrics[f"{name}_lower"], metrics[f"{name}_upper"] = low, high


def _shown(low: float, high: float) -> str:
    return "" if math.isnan(low) or math.isnan(high) else f" [{low:.2f}, {high:.2f}]"
