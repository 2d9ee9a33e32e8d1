"""A value with its 95% interval, as the report shows it: a leaf module, so the models of
every section (the comparison, task success) share it without importing one another."""

from __future__ import annotations

from pydantic import BaseModel

from benchmark.scoring.metric_names import ci_names


class Interval(BaseModel):
    """A score and, when the run logged one, its 95% CI."""

    value: float | None = None
    low: float | None = None
    high: float | None = None


def metric_interval(metrics: dict[str, float], name: str) -> Interval:
    """Metric ``name`` of a run with its logged bounds (``metric_names.ci_names``)."""
    low, high = ci_names(name)
    return Interval(value=metrics.get(name), low=metrics.get(low), high=metrics.get(high))
