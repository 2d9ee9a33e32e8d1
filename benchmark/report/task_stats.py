"""The task-success section's two statistics, each with a 95% cluster-bootstrap interval:
the rank correlation across policies of probe overall and task success, and, per point,
whether a lost probe fact goes with a failed resume.

Every other interval in the report is a cluster jackknife t (``benchmark.scoring.stats``). Not
these: Spearman's rho over a handful of policies is a step function of the data bounded
in [-1, 1], which a jackknife's linear approximation and a t quantile describe badly
(bounds past 1, or a zero standard error when no left-out cluster changes a rank).
Resampling whole clusters (transcript x compaction point: the same cluster in every
policy's rows, so the policies stay paired) and taking percentiles keeps the bounds in
range and follows the ranks as they move. Seeded: the same rows give the same interval.
Vectorised with numpy: a replicate is a vector of cluster weights (how often each cluster
was drawn), and every per-policy mean of every replicate is one matrix product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from benchmark.report.task_points import TaskPoint

REPLICATES = 2000
SEED = 29
CONFIDENCE = 0.95
MIN_POLICIES = 3  # a rank correlation over two points is +-1 whatever the data
_CELLS = 2_000_000  # replicate x cluster weights held in memory at once
METHOD = f"percentile cluster bootstrap ({REPLICATES} resamples of transcript x point)"


class Correlation(BaseModel):
    """Spearman's rho between per-policy probe overall and task success. ``rho`` None: not
    defined (``note`` says why); ``low``/``high`` None: no interval (one cluster)."""

    rho: float | None = None
    low: float | None = None
    high: float | None = None
    policies: int
    points: int
    clusters: int
    note: str = ""


class Crosstab(BaseModel):
    """Rows with a lost probe fact (``facts_lost > 0``) or none, by resume outcome, and the
    difference of the failure rates (lost minus kept) with its 95% interval."""

    lost_failed: int = 0
    lost_succeeded: int = 0
    kept_failed: int = 0
    kept_succeeded: int = 0
    rate_lost: float | None = None
    rate_kept: float | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    points: int = 0
    clusters: int = 0


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks (1-based) along the last axis, ties sharing their mean rank (as Spearman's rho
    wants): ``less + (equal + 1) / 2`` per element; O(P^2) per row, P being a few policies."""
    less = (x[..., None, :] < x[..., :, None]).sum(-1)
    equal = (x[..., None, :] == x[..., :, None]).sum(-1)
    return less + (equal + 1) / 2


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of ``x`` and ``y`` along the last axis; NaN where a row holds a NaN
    or is constant in ``x`` or ``y`` (no ranking to correlate)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    bad = np.isnan(x).any(-1) | np.isnan(y).any(-1)
    rx, ry = average_ranks(x), average_ranks(y)
    dx = rx - rx.mean(-1, keepdims=True)
    dy = ry - ry.mean(-1, keepdims=True)
    den = np.sqrt((dx * dx).sum(-1) * (dy * dy).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (dx * dy).sum(-1) / den
    return np.where(bad | (den == 0), np.nan, np.clip(rho, -1.0, 1.0))


def bootstrap(clusters: int, statistic: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``statistic`` of ``REPLICATES`` cluster resamples: it maps a (replicates x clusters)
    matrix of draw counts to one value per replicate. Chunked so that a long sweep's many
    clusters never hold more than ``_CELLS`` weights at once."""
    rng = np.random.default_rng(SEED)
    chunk = max(1, min(REPLICATES, _CELLS // max(1, clusters)))
    out = []
    for start in range(0, REPLICATES, chunk):
        size = min(chunk, REPLICATES - start)
        weights = rng.multinomial(clusters, np.full(clusters, 1 / clusters), size=size)
        out.append(statistic(weights.astype(float)))
    return np.concatenate(out)


def percentile_interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """The central ``CONFIDENCE`` range of the defined replicates; None with none defined
    (every resample left a group empty or a ranking flat)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None, None
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def rank_correlation(groups: Sequence[Sequence[TaskPoint]]) -> Correlation:
    """Spearman's rho across policies (one group of rows each) of the mean ``probe_overall``
    (rows without one left out) and the mean ``success``, with its cluster-bootstrap
    interval. A policy with no probe overall on any row takes no part."""
    groups = [g for g in groups if any(p.probe_overall is not None for p in g)]
    keys = sorted({p.cluster for g in groups for p in g})
    index = {key: i for i, key in enumerate(keys)}
    shape = (len(groups), len(keys))
    probe_sum, probe_n = np.zeros(shape), np.zeros(shape)
    success_sum, success_n = np.zeros(shape), np.zeros(shape)
    for row, group in enumerate(groups):
        for point in group:
            col = index[point.cluster]
            success_sum[row, col] += point.success
            success_n[row, col] += 1
            if point.probe_overall is not None:
                probe_sum[row, col] += point.probe_overall
                probe_n[row, col] += 1
    found = Correlation(
        policies=len(groups), points=sum(len(g) for g in groups), clusters=len(keys)
    )
    if len(groups) < MIN_POLICIES:
        found.note = f"n/a: {len(groups)} policies with probe scores (needs {MIN_POLICIES})"
        return found

    def rho(weights: np.ndarray) -> np.ndarray:
        probe = _ratio(weights @ probe_sum.T, weights @ probe_n.T)
        success = _ratio(weights @ success_sum.T, weights @ success_n.T)
        return spearman(probe, success)

    estimate = float(rho(np.ones((1, len(keys))))[0])
    if np.isnan(estimate):
        found.note = "n/a: every policy has the same probe overall or the same task success"
        return found
    found.rho = estimate
    if len(keys) < 2:
        found.note = "interval n/a: one cluster"
        return found
    found.low, found.high = percentile_interval(bootstrap(len(keys), rho))
    return found


def loss_vs_failure(points: Sequence[TaskPoint], control: bool = False) -> Crosstab:
    """Per row: a lost probe fact (``facts_lost > 0``) against a failed resume (``success``
    false; with ``control``, the control's resume from the uncompacted history), and the
    failure rate with a lost fact minus without, with its cluster-bootstrap interval."""
    keys = sorted({p.cluster for p in points})
    index = {key: i for i, key in enumerate(keys)}
    lost_n, lost_failed = np.zeros(len(keys)), np.zeros(len(keys))
    kept_n, kept_failed = np.zeros(len(keys)), np.zeros(len(keys))
    for point in points:
        col = index[point.cluster]
        failed = not (point.success_control if control else point.success)
        if point.facts_lost > 0:
            lost_n[col] += 1
            lost_failed[col] += failed
        else:
            kept_n[col] += 1
            kept_failed[col] += failed
    table = Crosstab(
        lost_failed=int(lost_failed.sum()),
        lost_succeeded=int(lost_n.sum() - lost_failed.sum()),
        kept_failed=int(kept_failed.sum()),
        kept_succeeded=int(kept_n.sum() - kept_failed.sum()),
        points=len(points),
        clusters=len(keys),
    )
    if lost_n.sum():
        table.rate_lost = float(lost_failed.sum() / lost_n.sum())
    if kept_n.sum():
        table.rate_kept = float(kept_failed.sum() / kept_n.sum())
    if table.rate_lost is None or table.rate_kept is None:
        return table
    table.difference = table.rate_lost - table.rate_kept
    if len(keys) < 2:
        return table

    def difference(weights: np.ndarray) -> np.ndarray:
        lost = _ratio(weights @ lost_failed, weights @ lost_n)
        kept = _ratio(weights @ kept_failed, weights @ kept_n)
        return lost - kept

    table.low, table.high = percentile_interval(bootstrap(len(keys), difference))
    return table
