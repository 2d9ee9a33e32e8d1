"""The roll-up's estimates with their intervals, by metric name, cached by content.

``JobResult.metrics()`` runs more than once per job and a cluster jackknife over
every probe is the costly part; keyed on the probes' scores (not on the mutable
result), the cache can never go stale.
"""

from __future__ import annotations

from functools import lru_cache

from benchmark.probe.models import PROBE_TYPES
from benchmark.rubric import Rubric
from benchmark.scoring import metric_names as names
from benchmark.scoring.stats import Estimate, rollup_interval


@lru_cache(maxsize=16)
def rollup_estimates(
    rubric_json: str,
    probes: tuple[tuple[tuple[str, int], str, tuple[tuple[str, float], ...]], ...],
    confidence: float,
) -> tuple[tuple[str, Estimate], ...]:
    """Roll-up intervals for scored probes given as (cluster, probe type, criterion
    scores), by metric name: overall and dimensions over all probes, the overall only
    per probe type."""
    rubric = Rubric.model_validate_json(rubric_json)

    def estimate(chosen: list[tuple]) -> dict[str, Estimate]:
        if not chosen:
            return {}
        return rollup_interval(
            rubric,
            [dict(scores) for _, _, scores in chosen],
            [cluster for cluster, _, _ in chosen],
            confidence=confidence,
        )

    every = estimate(list(probes))
    named = {names.OVERALL if k == "overall" else names.dimension(k): v for k, v in every.items()}
    for ptype in PROBE_TYPES:
        typed = estimate([p for p in probes if p[1] == ptype])
        if "overall" in typed:
            named[names.type_overall(ptype)] = typed["overall"]
    return tuple(named.items())
