"""The report's task-success section as data: per policy (run) the probe overall beside the
task success of resuming after compaction, how well the first ranks the second across
policies, and whether a point's lost probe fact goes with a failed resume.

Probes ask whether a fact survived compaction; a resume asks whether the work still gets
done (DESIGN.md, "Two measures of the same compaction point"). A probe score is worth
optimising only as far as it predicts the second, so a sweep that ran both says how far.
Runs without the task arm (no ``task/success`` metric, no points table) take no part; with
none, there is no section and the report is as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from benchmark.report.interval import Interval, metric_interval
from benchmark.report.load import RunData
from benchmark.report.task_points import TaskPoint
from benchmark.report.task_stats import Correlation, Crosstab, loss_vs_failure, rank_correlation
from benchmark.scoring import metric_names as names


class TaskPolicy(BaseModel):
    """One run's two measures (its logged metrics with their 95% intervals)."""

    run_id: str
    label: str
    colour: str
    probe_overall: Interval
    success: Interval
    success_control: Interval
    retention: Interval
    steps_to_finish: float | None = None
    tokens_to_finish: float | None = None
    repeated_tool_calls: float | None = None
    points: int = Field(0, description="rows of its task_points_table.json")


class TaskSuccess(BaseModel):
    policies: list[TaskPolicy]
    correlation: Correlation
    lost: Crosstab = Field(description="lost probe fact x failed resume, over every row")
    lost_control: Crosstab = Field(description="the same rows, the control's resume")


def has_task(run: RunData, points: Sequence[TaskPoint]) -> bool:
    """The run took part in the task arm: it logged task success or a points table."""
    return names.TASK_SUCCESS in run.metrics or bool(points)


def task_success(
    runs: Sequence[RunData],
    labels: dict[str, str],
    colours: dict[str, str],
    points: dict[str, list[TaskPoint]],
) -> TaskSuccess | None:
    """The section over ``runs`` (in the report's row order) that took part in the task arm;
    None when none did."""
    members = [run for run in runs if has_task(run, points.get(run.run_id, []))]
    if not members:
        return None
    policies = [_policy(run, labels, colours, points.get(run.run_id, [])) for run in members]
    rows = [point for run in members for point in points.get(run.run_id, [])]
    return TaskSuccess(
        policies=policies,
        correlation=rank_correlation([points.get(run.run_id, []) for run in members]),
        lost=loss_vs_failure(rows),
        lost_control=loss_vs_failure(rows, control=True),
    )


def _policy(
    run: RunData, labels: dict[str, str], colours: dict[str, str], points: list[TaskPoint]
) -> TaskPolicy:
    m = run.metrics
    success = metric_interval(m, names.TASK_SUCCESS)
    if success.value is None and points:  # a table without its summary: the rows' mean
        success = Interval(value=sum(p.success for p in points) / len(points))
    return TaskPolicy(
        run_id=run.run_id,
        label=labels.get(run.run_id, run.name),
        colour=colours.get(run.run_id, ""),
        probe_overall=metric_interval(m, names.OVERALL),
        success=success,
        success_control=metric_interval(m, names.TASK_SUCCESS_CONTROL),
        retention=metric_interval(m, names.TASK_RETENTION),
        steps_to_finish=m.get(names.TASK_STEPS_TO_FINISH),
        tokens_to_finish=m.get(names.TASK_TOKENS_TO_FINISH),
        repeated_tool_calls=m.get(names.TASK_REPEATED_TOOL_CALLS),
        points=len(points),
    )
