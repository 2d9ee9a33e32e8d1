"""One row of a run's ``task_points_table.json``: a compaction point resumed in its task.

The task-success arm (issue 29) logs, per run, a JSON list with one row per
(transcript, compaction point): the resume's reward and success after compaction
and from the uncompacted history (the control), its cost in steps and tokens, and
the probe side of the same point (its overall, probes, facts lost). The report
reads it to relate the two measures; the rows are checked here so that a
malformed table is one line naming the run, the row and the field, not a
traceback deep in the statistics.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from benchmark.errors import UserError
from benchmark.scoring import metric_names as names


class TaskPoint(BaseModel):
    """A row as the contract states it; fields a later version adds are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    transcript: str
    task_id: str
    domain: str
    point: int
    policy: str
    reward: float
    success: bool
    reward_control: float
    success_control: bool
    steps: int
    tokens: int
    repeated_tool_calls: int
    probe_overall: float | None
    probes: int
    facts_lost: int
    cluster: str

    @field_validator("reward", "reward_control", "probe_overall")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        """NaN or inf would poison every mean it enters, silently."""
        if value is not None and not math.isfinite(value):
            raise ValueError("not a finite number")
        return value


def parse_points(data: Any, run_id: str) -> list[TaskPoint]:
    """The rows of one run's table; a UserError naming the run, row and field otherwise."""
    where = f"run {run_id}: {names.TASK_POINTS_TABLE}"
    if not isinstance(data, list):
        raise UserError(f"{where}: not a JSON list of rows")
    out = []
    for index, row in enumerate(data):
        try:
            out.append(TaskPoint.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "row"
            raise UserError(f"{where}: row {index}: {field}: {first['msg']}") from None
    return out
