"""Retention against the uncompacted control: what share of the control's score a run keeps.

When a sweep holds ``policy=none`` (the control arm), each run's retention is
its mean probe score over the control's on the same probes (paired by probe
id and question, as the paired differences are), with a 95% interval from the
paired, clustered ratio (``benchmark.scoring.stats.ratio_interval``). A difference
says how many points a policy loses; retention says what share it keeps,
which reads the same on any rubric scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchmark.report.load import RunData
from benchmark.report.paired import Table, matched, reference_picker
from benchmark.scoring.clusters import PARAM, coarsest, row_cluster
from benchmark.scoring.stats import ratio_interval

CONTROL = "none"


def retention_against_control(
    runs: Sequence[RunData], tables: dict[str, Table], probe_type: str | None = None
) -> dict[str, tuple[float, float, float]]:
    """run id -> (retention, CI low, CI high) for every run with a control run on its
    probes; empty when no run is the control. The control itself retains 1 exactly."""
    if not any(r.policy == CONTROL for r in runs):
        return {}
    pick = reference_picker(runs, CONTROL)
    cluster_by = coarsest([r.params.get(PARAM) for r in runs])
    out: dict[str, tuple[float, float, float]] = {}
    for run in runs:
        control = pick(run)
        pairs = matched(tables.get(run.run_id, []), tables.get(control.run_id, []), probe_type)
        kept = [
            (float(mine["score"]), float(ref["score"]), row_cluster(mine, cluster_by))
            for mine, ref in pairs
        ]
        if not kept or sum(ref for _, ref, _ in kept) <= 0:
            continue
        r = ratio_interval(
            [m for m, _, _ in kept],
            [c for _, c, _ in kept],
            [c for _, _, c in kept],
            limits=(0, math.inf),
        )
        out[run.run_id] = (r.mean, r.low, r.high)
    return out
