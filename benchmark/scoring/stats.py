"""Confidence intervals for scores, ratios and paired differences between runs.

Probes are not independent: every probe of one compaction point is answered
from the same compacted context, so one good or bad compaction moves all of
them together. The unit of variation is therefore the *cluster* (the
``(transcript, point)`` pair), and runs often have only a handful of them.

A percentile bootstrap over few clusters gives intervals far too narrow (it
sees only as much variation as there are clusters, and no more). Here every
interval is a *cluster jackknife t* interval instead: the standard error comes
from the delete-one-cluster jackknife (the statistic recomputed with each
cluster left out: CR3-like, slightly conservative, and valid for non-linear
statistics such as the rubric roll-up and ratios), and the quantile from
Student's t on ``G - 1`` degrees of freedom, which widens the interval as the
cluster count ``G`` falls. For a plain mean over equal-size clusters this is
exactly the classical t interval on the cluster means. ``benchmarks/ci_coverage.py``
measures the coverage.

Estimate, interval and p-value come from one standard error, so a difference's
interval excludes 0 exactly when its p-value is below ``1 - confidence``.
Below ``MIN_CLUSTERS_FOR_TEST`` clusters there is no p-value at all; with one
cluster the interval is undefined (NaN bounds, shown as "n/a").

Everything is vectorised with numpy: leave-one-cluster-out totals are the
grand total minus each cluster's totals, one matrix of rows for all clusters.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from benchmark.rubric import Rubric
from benchmark.scoring.jackknife import Clusters, jackknife, t_bounds

METHOD = "cluster jackknife t"
# Fewer clusters than this: intervals are given (wide, on few df) but no p-value or
# significance mark; a test on 2-4 clusters says more about the clusters than the runs.
MIN_CLUSTERS_FOR_TEST = 5


class Estimate(BaseModel):
    """A statistic with its interval. ``low``/``high`` are NaN when undefined (one cluster).

    ``clusters`` are those that informed the statistic, ``df`` the t quantile's degrees of
    freedom (see ``jackknife``). Frozen: results cache them.
    """

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float
    high: float
    n: int
    clusters: int
    df: float = float("nan")
    method: str = METHOD

    @property
    def defined(self) -> bool:
        """The interval exists (at least two clusters informed the statistic)."""
        return not (np.isnan(self.low) or np.isnan(self.high))


class Difference(BaseModel):
    """Mean of ``a - b`` over paired probes, its interval and two-sided p-value.

    ``p_value`` is None below ``MIN_CLUSTERS_FOR_TEST`` clusters (see ``no_test_reason``);
    ``significant`` is then False.
    """

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float
    high: float
    p_value: float | None
    n: int
    clusters: int
    significant: bool = False
    df: float = float("nan")
    method: str = METHOD


def no_test_reason(clusters: int) -> str | None:
    """One line saying why there is no p-value, or None when there is one."""
    if clusters >= MIN_CLUSTERS_FOR_TEST:
        return None
    return f"no p-value: {clusters} cluster(s) < {MIN_CLUSTERS_FOR_TEST}; too few to test"


def describe(clusters: int, df: float | None = None, confidence: float = 0.95) -> str:
    """The interval method in one line, for footers: clusters and the t quantile's df
    (``df`` of the estimate shown; G-1 when not given)."""
    level = f"{100 * confidence:g}% CI"
    if clusters < 2:
        return f"{level}: n/a with {clusters} cluster ({METHOD} needs 2)"
    if df is None or np.isnan(df) or df >= clusters - 1 - 1e-9:
        return f"{level}: {METHOD}, G-1 = {clusters - 1} df, {clusters} clusters"
    return (
        f"{level}: {METHOD}, {df:.1f} df (G-1 = {clusters - 1}, fewer for unequal "
        f"cluster sizes), {clusters} clusters"
    )


def cluster_interval(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
    limits: tuple[float, float] | None = None,
) -> Estimate:
    """Mean of ``values`` with its cluster jackknife t interval, kept inside ``limits``
    (e.g. the score scale, see ``t_bounds``) when given. Raises ValueError on no values, mismatched
    lengths or non-finite values."""
    vals = _finite(values, clusters, "values")
    return ratio_interval(vals, np.ones_like(vals), clusters, confidence=confidence, limits=limits)


def ratio_interval(
    num: Sequence[float],
    den: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
    limits: tuple[float, float] | None = None,
) -> Estimate:
    """``sum(num) / sum(den)`` over paired per-probe values (e.g. a policy's scores over
    the uncompacted control's on the same probes), with its cluster jackknife t interval,
    kept inside ``limits`` when given.

    Raises ValueError when ``den`` sums to 0. An interval whose leave-one-cluster-out
    ratio has a zero denominator is undefined (NaN bounds).
    """
    fit = _RatioFit(_finite(num, clusters, "num"), _finite(den, clusters, "den"), clusters)
    low, high = fit.bounds(confidence, limits)
    return Estimate(
        mean=fit.estimate, low=low, high=high, n=fit.n, clusters=fit.clusters, df=fit.df
    )


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
    limits: tuple[float, float] | None = None,
) -> Difference:
    """``a - b`` paired by position (same probe in two runs), by cluster; the interval clipped
    to ``limits`` when given: ``(-scale_max, scale_max)`` for two scores on one scale,
    which few clusters' t quantiles would otherwise overshoot (-6.6 on a 0-5 scale).
    Clipped, not mapped through a logit as scores are: 0 is inside the limits, so the
    clip never moves a bound across it and the test below still matches the interval.

    The p-value is the two-sided t-test of mean 0 with the interval's standard error
    and df, so the interval excludes 0 exactly when ``p < 1 - confidence``. No
    p-value below ``MIN_CLUSTERS_FOR_TEST`` clusters. A difference with no variation
    between clusters (standard error 0) has p = 1 when it is 0 and p = 0 otherwise.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b differ in length: {len(a)} vs {len(b)}")
    diffs = _finite(a, clusters, "a") - _finite(b, clusters, "b")
    fit = _RatioFit(diffs, np.ones_like(diffs), clusters)
    low, high = fit.bounds(confidence)
    if limits is not None:  # NaN (undefined) stays NaN
        low, high = (float(np.clip(x, *limits)) for x in (low, high))
    p_value = fit.p_value() if fit.clusters >= MIN_CLUSTERS_FOR_TEST else None
    return Difference(
        mean=fit.estimate,
        low=low,
        high=high,
        p_value=p_value,
        n=fit.n,
        clusters=fit.clusters,
        significant=p_value is not None and p_value < 1 - confidence,
        df=fit.df,
    )


class _RatioFit:
    """``sum(top) / sum(bottom)`` and its jackknife (a mean is the ratio over ``bottom = 1``)."""

    def __init__(self, top: np.ndarray, bottom: np.ndarray, clusters: Sequence[Hashable]):
        groups = Clusters(clusters)
        self.n, self.clusters = groups.n, groups.count
        totals = groups.totals(np.column_stack([top, bottom, np.ones(groups.n)]))
        whole = totals.sum(axis=0)
        if whole[1] == 0:
            raise ValueError("den sums to 0: the ratio is undefined")
        self.estimate = float(whole[0] / whole[1])
        # Residuals top - estimate * bottom sum to ~0 (exactly 0 for constant values); a
        # left-out ratio minus the estimate is the others' residual total over their bottom.
        resid = groups.totals(top - self.estimate * bottom)
        rest = whole[1] - totals[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            deviations = np.where(rest != 0, (resid.sum() - resid) / rest, np.nan)
        se, df = jackknife(np.array([self.estimate]), deviations[:, None], totals[:, 2:])
        self.se, self.df = float(se[0]), float(df[0])

    def bounds(
        self, confidence: float, limits: tuple[float, float] | None = None
    ) -> tuple[float, float]:
        low, high = t_bounds(self.estimate, self.se, self.df, confidence, limits)
        return float(low), float(high)

    def p_value(self) -> float:
        """Two-sided p-value of the t statistic ``estimate / se`` on the interval's df."""
        from scipy.special import stdtr

        if np.isnan(self.se):
            return 1.0
        if self.se == 0:
            return 1.0 if self.estimate == 0 else 0.0
        return float(min(1.0, 2 * stdtr(self.df, -abs(self.estimate) / self.se)))


def rollup_interval(
    rubric: Rubric,
    judgments: Sequence[Mapping[str, float]],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
) -> dict[str, Estimate]:
    """Intervals for the rubric's own roll-up (``overall`` and each dimension).

    The roll-up is not a mean of per-probe scores: criterion means are ratios
    (sum over the probes that were scored on the criterion / their count), and
    probe types are scored on different criteria, so the mean of per-probe
    overalls can sit far from the reported overall. The jackknife re-runs the
    roll-up (see ``benchmark.rubric.models``) with each cluster left out, so each
    interval belongs to the number it is reported next to. A statistic's
    ``clusters`` are those that scored any of its criteria (only they can move
    it); bounds are clipped to ``[0, scale_max]``. Names whose statistic is
    undefined (nothing scored on it) are absent.
    """
    if len(judgments) != len(clusters):
        raise ValueError(f"{len(judgments)} judgments but {len(clusters)} clusters")
    groups = Clusters(clusters)
    criteria = list(rubric.criteria)
    column = {c: j for j, c in enumerate(criteria)}
    scores = np.zeros((groups.n, len(criteria)))
    scored = np.zeros_like(scores)
    for i, judgment in enumerate(judgments):
        for crit, value in judgment.items():
            if crit in column:
                scores[i, column[crit]] = value
                scored[i, column[crit]] = 1.0
    totals = groups.totals(np.hstack([scores, scored]))
    # Row 0: the whole sample; row 1 + g: the sample without cluster g.
    rows = np.vstack([totals.sum(axis=0), totals.sum(axis=0) - totals])
    c = len(criteria)
    stats = _rollup(rubric, criteria, rows[:, :c], rows[:, c:])
    estimate = stats[0]
    # A cluster's size for a statistic: its scores on the criteria that feed it (only
    # clusters with some can move it).
    feeds = (_weights(rubric, criteria) != 0).astype(float)
    sizes = totals[:, c:] @ feeds  # (G, dims)
    sizes = np.column_stack([totals[:, c:] @ (feeds.sum(axis=1) > 0), sizes])
    se, df = jackknife(estimate, stats[1:] - estimate, sizes)
    low, high = t_bounds(estimate, se, df, confidence, (0.0, rubric.scale_max))
    out: dict[str, Estimate] = {}
    for j, name in enumerate(["overall", *rubric.dimensions]):
        if np.isnan(estimate[j]):
            continue
        out[name] = Estimate(
            mean=float(estimate[j]),
            low=float(low[j]),
            high=float(high[j]),
            n=groups.n,
            clusters=int((sizes[:, j] > 0).sum()),
            df=float(df[j]),
        )
    return out


def _weights(rubric: Rubric, criteria: list[str]) -> np.ndarray:
    """(criteria, dimensions) weights of the rubric's roll-up."""
    return np.array(
        [[rubric.dimensions[d].get(c, 0.0) for d in rubric.dimensions] for c in criteria]
    ).reshape(len(criteria), len(rubric.dimensions))


def _rollup(
    rubric: Rubric, criteria: list[str], sums: np.ndarray, counts: np.ndarray
) -> np.ndarray:
    """The roll-up of ``aggregate`` on rows of criterion sums and counts: (rows, 1 + dims),
    column 0 overall; NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        weights = _weights(rubric, criteria)
        present = ~np.isnan(means)
        total = present @ weights
        dims = np.where(total > 0, (np.where(present, means, 0.0) @ weights) / total, np.nan)
        defined = ~np.isnan(dims)
        n_dims = defined.sum(axis=1)
        overall = np.where(
            n_dims > 0, np.where(defined, dims, 0.0).sum(axis=1) / np.maximum(n_dims, 1), np.nan
        )
    return np.column_stack([overall, dims])


def _finite(values: Iterable[float], clusters: Sequence[Hashable], name: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 0:
        raise ValueError(f"no {name} to summarise")
    if arr.shape != (len(clusters),):
        raise ValueError(f"{name} has {arr.size} entries but clusters has {len(clusters)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite numbers (drop unscored probes first)")
    return arr
