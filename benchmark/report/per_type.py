"""Each run's score per probe type with its 95% CI: which kind of fact a policy loses.

A run logs each type's roll-up as metric ``type/<type>`` with its interval bounds beside
it (named by ``metric_names.ci_names``), so the report shows the run's own figures, the
ones MLflow shows. A type a run logged no metric for (a run from before per-type
metrics) falls back to the mean of its per-probe table's scores, with the same cluster
jackknife t interval (``benchmark.scoring.stats.cluster_interval``). Next-action answers scored
against the control's answer get a column of their own, right after ``next_action``.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmark.probe.models import PROBE_TYPES
from benchmark.report.load import RunData
from benchmark.report.paired import Table
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import PARAM, row_cluster
from benchmark.scoring.stats import cluster_interval

# The per-type table's column of next_action answers scored against the control's answer.
AGREEMENT_COLUMN = "next_action vs control"
Bounds = tuple[float, float | None, float | None]  # value, CI low, CI high (None: no CI)


def metric_bounds(metrics: dict[str, float], name: str) -> Bounds | None:
    """Metric ``name`` and its logged bounds; None when the run did not log it."""
    if name not in metrics:
        return None
    low, high = names.ci_names(name)
    return metrics[name], metrics.get(low), metrics.get(high)


def table_bounds(
    table: Table, scale_max: float | None, cluster_by: str = "point"
) -> dict[str, Bounds]:
    """Per probe type: the mean score of the scored probes (failed ones left out, as in the
    paired differences) with its cluster interval, kept on the scale."""
    scored: dict[str, list[tuple[float, tuple]]] = {}
    for row in table:
        if row.get("score") is None or row.get("failed") or not row.get("type"):
            continue
        cluster = row_cluster(row, cluster_by)
        scored.setdefault(str(row["type"]), []).append((float(row["score"]), cluster))
    out: dict[str, Bounds] = {}
    limits = (0.0, scale_max) if scale_max is not None else None
    for ptype, pairs in scored.items():
        est = cluster_interval([v for v, _ in pairs], [c for _, c in pairs], limits=limits)
        out[ptype] = (est.mean, est.low, est.high) if est.defined else (est.mean, None, None)
    return out


def type_scores(
    runs: Sequence[RunData], tables: dict[str, Table], scale_max: float | None
) -> tuple[list[str], dict[str, dict[str, Bounds]]]:
    """The columns (probe types in the probe models' order, then others; the agreement
    column after ``next_action``) and, per run id, each type's score and interval."""
    out: dict[str, dict[str, Bounds]] = {}
    for run in runs:
        per = table_bounds(tables.get(run.run_id, []), scale_max, run.params.get(PARAM, "point"))
        for ptype in PROBE_TYPES:
            logged = metric_bounds(run.metrics, names.type_overall(ptype))
            if logged is not None:
                per[ptype] = logged
        agreement = metric_bounds(run.metrics, names.type_control_agreement("next_action"))
        if agreement is not None:
            per[AGREEMENT_COLUMN] = agreement
        out[run.run_id] = per
    seen = {t for per in out.values() for t in per} - {AGREEMENT_COLUMN}
    types = [t for t in PROBE_TYPES if t in seen] + sorted(seen - set(PROBE_TYPES))
    if "next_action" in types and any(AGREEMENT_COLUMN in per for per in out.values()):
        types.insert(types.index("next_action") + 1, AGREEMENT_COLUMN)
    return types, out
