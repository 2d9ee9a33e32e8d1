"""Rubric config and score aggregation.

Dimension score = weighted mean of its criteria's mean scores; overall =
unweighted mean of the dimensions (the seed's rule). Criteria with no scores
(no probe type asks for them) drop out of their dimension's weighted mean, and
a dimension with no scored criteria drops out of the overall.

Some probe types are scored without a judge (:data:`JUDGE_FREE_TYPES`: a
next-action answer is compared with the log's step by ``benchmark.activity.next_step``).
A criterion only they ask for is :attr:`Rubric.judge_free_criteria`: no judge needs
to know it, so the checks of what a judge or the audit can score leave it out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchmark.config.validators import MAX_WEIGHT
from benchmark.probe.models import ProbeType

# Probe types scored by rule, never sent to the judge (benchmark.run.evaluation).
JUDGE_FREE_TYPES: frozenset[ProbeType] = frozenset({"next_action"})


class Rubric(BaseModel):
    """Dimensions of weighted criteria, the scale, and which criteria each probe type gets."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(description="label in the scorecard and the run's rubric tag")
    scale_max: int = Field(5, gt=0, le=1000, description="criterion scores run from 0 to scale_max")
    dimensions: dict[str, dict[str, float]] = Field(
        description="dimension -> {criterion: weight}", min_length=1
    )
    probe_criteria: dict[ProbeType, list[str]] = Field(
        description="probe type -> criteria the judge scores it on", min_length=1
    )

    @field_validator("dimensions")
    @classmethod
    def _weights(cls, dims: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for dim, criteria in dims.items():
            if not criteria:
                raise ValueError(f"dimension '{dim}' has no criteria")
            for crit, weight in criteria.items():
                if not math.isfinite(weight) or not 0 <= weight <= MAX_WEIGHT:
                    raise ValueError(
                        f"weight of '{dim}.{crit}' must be >= 0 and <= {MAX_WEIGHT:g}, got {weight}"
                    )
            if sum(criteria.values()) <= 0:
                raise ValueError(f"weights of dimension '{dim}' sum to 0")
        return dims

    @model_validator(mode="after")
    def _known_criteria(self) -> Rubric:
        known = self.criteria
        for ptype, crits in self.probe_criteria.items():
            if not crits:
                raise ValueError(f"probe_criteria.{ptype} is empty")
            for crit in crits:
                if crit not in known:
                    raise ValueError(f"probe_criteria.{ptype}: unknown criterion '{crit}'")
        return self

    @property
    def criteria(self) -> dict[str, str]:
        """criterion -> its dimension."""
        return {c: d for d, crits in self.dimensions.items() for c in crits}

    @property
    def judge_free_criteria(self) -> frozenset[str]:
        """Criteria asked for by judge-free probe types only: no judge ever scores them."""
        free = {c for t, cs in self.probe_criteria.items() if t in JUDGE_FREE_TYPES for c in cs}
        judged = {
            c for t, cs in self.probe_criteria.items() if t not in JUDGE_FREE_TYPES for c in cs
        }
        return frozenset(free - judged)

    @property
    def judged_criteria(self) -> list[str]:
        """The criteria a judge must be able to score (all but :attr:`judge_free_criteria`)."""
        free = self.judge_free_criteria
        return [c for c in self.criteria if c not in free]

    def dimensions_within(self, criteria: Collection[str]) -> list[str]:
        """The dimensions every criterion of which is in ``criteria`` (in rubric order)."""
        return [d for d, crits in self.dimensions.items() if set(crits) <= set(criteria)]

    def without(self, dimensions: Iterable[str]) -> Rubric:
        """This rubric less ``dimensions`` and their criteria: the roll-up of a job whose
        judge cannot tell answers apart on them (``benchmark.judge.measured``)."""
        drop = set(dimensions)
        unknown = sorted(drop - set(self.dimensions))
        if unknown:
            raise ValueError(f"rubric '{self.name}' has no dimension {unknown[0]!r}")
        if not drop:
            return self
        kept = {d: c for d, c in self.dimensions.items() if d not in drop}
        if not kept:
            raise ValueError(f"rubric '{self.name}': cannot leave out every dimension")
        gone = {c for d in drop for c in self.dimensions[d]}
        by_type = {t: [c for c in cs if c not in gone] for t, cs in self.probe_criteria.items()}
        return Rubric(
            name=self.name,
            scale_max=self.scale_max,
            dimensions=kept,
            probe_criteria={t: cs for t, cs in by_type.items() if cs},
        )


class Scores(BaseModel):
    """Rolled-up scores on the rubric's scale (``None`` when nothing was scored)."""

    overall: float | None
    dimensions: dict[str, float]
    criteria: dict[str, float]
    n: int = Field(description="judgments that entered the roll-up")


def aggregate(rubric: Rubric, judgments: Iterable[Mapping[str, float]]) -> Scores:
    """Roll criterion scores from many judgments up to dimensions and overall."""
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    n = 0
    for scores in judgments:
        n += 1
        for crit, value in scores.items():
            sums[crit] += value
            counts[crit] += 1
    criteria = {c: sums[c] / counts[c] for c in rubric.criteria if counts[c]}
    dimensions: dict[str, float] = {}
    for dim, weights in rubric.dimensions.items():
        scored = {c: w for c, w in weights.items() if c in criteria}
        total = sum(scored.values())
        if total > 0:
            dimensions[dim] = sum(criteria[c] * w for c, w in scored.items()) / total
    overall = sum(dimensions.values()) / len(dimensions) if dimensions else None
    return Scores(overall=overall, dimensions=dimensions, criteria=criteria, n=n)
