"""Confidence intervals for scores and for paired differences between runs.

Probes are not independent: every probe of one compaction point is answered
from the same compacted context, so one good or bad compaction moves all of
them together. Treating them as independent would understate the error, so
every interval here is a *cluster* bootstrap: a resample draws clusters (the
``(transcript, point)`` pairs) with replacement and takes all probes of each
drawn cluster. Intervals are percentile intervals of the resampled statistic:
no normality assumption, which matters on a bounded 0-5 scale with few
clusters. With few clusters (the bootstrap sees only as much variation as there
are clusters) the intervals are optimistic; ``clusters`` is reported so a
reader can tell.

Everything is vectorised with numpy: one (resamples x clusters) matrix of draw
counts turns per-cluster totals into every resample's totals with a single
matrix product, so 2000 resamples cost about a millisecond.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from benchmark.rubric import Rubric

# Bounds this close to the estimate are the estimate: resampled sums of constant
# values can differ from it in the last bits, and an interval that misses its own
# estimate by rounding is noise, not information.
_SNAP = 1e-9


class Estimate(BaseModel):
    """A statistic with its percentile interval over cluster resamples."""

    mean: float
    low: float
    high: float
    n: int
    clusters: int


class Difference(BaseModel):
    """Mean of ``a - b`` over paired probes, its interval, and a two-sided p-value."""

    mean: float
    low: float
    high: float
    p_value: float
    n: int
    clusters: int

    @property
    def significant(self) -> bool:
        """The interval excludes 0. Never with one cluster: there is nothing to vary."""
        return self.clusters > 1 and (self.low > 0 or self.high < 0)


class ClusterResample:
    """One set of cluster bootstrap draws, reusable for any statistic of the same probes.

    Statistics computed from the same draws are paired: two runs over the same
    probes, resampled with the same object (or the same clusters and seed),
    see the same clusters in every resample.
    """

    def __init__(
        self, clusters: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0
    ) -> None:
        if len(clusters) == 0:
            raise ValueError("no values to resample")
        if resamples < 1:
            raise ValueError(f"resamples must be >= 1, got {resamples}")
        index: dict[Hashable, int] = {}
        # Codes in order of first appearance: the draws depend on the probe order, never
        # on hashing.
        self.codes = np.fromiter(
            (index.setdefault(c, len(index)) for c in clusters), dtype=np.intp, count=len(clusters)
        )
        self.n = len(clusters)
        self.clusters = k = len(index)
        self.resamples = resamples
        drawn = np.random.default_rng(seed).integers(0, k, size=(resamples, k))
        drawn += (np.arange(resamples) * k)[:, None]  # one bin per (resample, cluster)
        # counts[r, c]: how many times resample r drew cluster c.
        self.counts = np.bincount(drawn.ravel(), minlength=resamples * k).reshape(resamples, k)
        self.counts = self.counts.astype(float)

    def cluster_totals(self, columns: np.ndarray) -> np.ndarray:
        """Per-probe rows (n, ...) summed per cluster: (clusters, ...)."""
        columns = np.asarray(columns, dtype=float)
        if columns.shape[0] != self.n:
            raise ValueError(f"expected {self.n} rows, got {columns.shape[0]}")
        totals = np.zeros((self.clusters, *columns.shape[1:]))
        np.add.at(totals, self.codes, columns)
        return totals

    def totals(self, columns: np.ndarray) -> np.ndarray:
        """Every resample's sum of per-probe rows (n, ...): (resamples, ...)."""
        totals = self.cluster_totals(columns)
        flat = totals.reshape(self.clusters, -1)
        if flat.shape[1] == 1:
            # OpenBLAS's threaded float64 matrix-vector product is pathologically slow
            # here (tens of times slower than this loop); matrix-matrix is fine.
            summed = np.einsum("rk,k->r", self.counts, flat[:, 0])
        else:
            summed = self.counts @ flat
        return summed.reshape(self.resamples, *totals.shape[1:])


def percentile_interval(
    samples: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds along axis 0 (numpy's default linear interpolation).

    Resamples where a statistic is undefined (NaN: e.g. no drawn probe was scored
    on a dimension) are left out; a column with no defined resample gives NaN.
    One sort serves every column, so this stays vectorised with NaNs present.
    """
    _check_confidence(confidence)
    ordered = np.sort(np.asarray(samples, dtype=float), axis=0)  # NaNs sort last
    defined = (~np.isnan(ordered)).sum(axis=0)
    alpha = (1 - confidence) / 2

    def quantile(q: float) -> np.ndarray:
        pos = q * np.maximum(defined - 1, 0)
        below = np.floor(pos).astype(np.intp)
        above = np.minimum(below + 1, np.maximum(defined - 1, 0))
        lo = np.take_along_axis(ordered, below[None, ...], axis=0)[0]
        hi = np.take_along_axis(ordered, above[None, ...], axis=0)[0]
        return np.where(defined > 0, lo + (hi - lo) * (pos - below), np.nan)

    return quantile(alpha), quantile(1 - alpha)


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Mean of ``values`` with a percentile interval over cluster resamples.

    One cluster: every resample is the sample itself, so the interval collapses
    to the mean (read it as "unknown", not "exact"). Raises ValueError on no
    values, mismatched lengths or non-finite values.
    """
    _check_confidence(confidence)
    vals = _finite(values, clusters, "values")
    resample = ClusterResample(clusters, resamples=resamples, seed=seed)
    mean, samples = _means(vals, resample)
    low, high = _bounds(mean, samples, confidence, resample.clusters)
    return Estimate(mean=mean, low=low, high=high, n=resample.n, clusters=resample.clusters)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Difference:
    """``a - b`` paired by position (same probe in two runs), resampled by cluster.

    The p-value is two-sided from the same bootstrap distribution, shifted to
    centre on 0 (the null of no difference): the share of resampled means at
    least as far from the observed mean as the observed mean is from 0, with
    the usual +1 correction so it is never 0. Identical inputs give p = 1.
    One cluster gives p = 1 and ``significant`` False (no variation to test).
    """
    _check_confidence(confidence)
    if len(a) != len(b):
        raise ValueError(f"a and b differ in length: {len(a)} vs {len(b)}")
    diffs = _finite(a, clusters, "a") - _finite(b, clusters, "b")
    resample = ClusterResample(clusters, resamples=resamples, seed=seed)
    mean, samples = _means(diffs, resample)
    low, high = _bounds(mean, samples, confidence, resample.clusters)
    if resample.clusters < 2:
        p_value = 1.0
    else:
        extreme = np.count_nonzero(np.abs(samples - mean) >= abs(mean) - _SNAP)
        p_value = (1 + extreme) / (1 + resample.resamples)
    return Difference(
        mean=mean,
        low=low,
        high=high,
        p_value=min(1.0, p_value),
        n=resample.n,
        clusters=resample.clusters,
    )


def rollup_bootstrap(
    rubric: Rubric,
    judgments: Sequence[Mapping[str, float]],
    clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Intervals for the rubric's own roll-up (``overall`` and each dimension).

    The roll-up is not a mean of per-probe scores: criterion means are ratios
    (sum over the probes that were scored on the criterion / their count), and
    probe types are scored on different criteria, so the mean of per-probe
    overalls can sit far from the reported overall. This re-runs the roll-up
    (see ``benchmark.rubric.models``) on every resample, vectorised, so each
    interval belongs to the number it is reported next to. Names whose
    statistic is undefined (nothing scored on it) are absent.
    """
    _check_confidence(confidence)
    if len(judgments) != len(clusters):
        raise ValueError(f"{len(judgments)} judgments but {len(clusters)} clusters")
    resample = ClusterResample(clusters, resamples=resamples, seed=seed)
    criteria = list(rubric.criteria)
    column = {c: j for j, c in enumerate(criteria)}
    scores = np.zeros((resample.n, len(criteria)))
    scored = np.zeros_like(scores)
    for i, judgment in enumerate(judgments):
        for crit, value in judgment.items():
            if crit in column:
                scores[i, column[crit]] = value
                scored[i, column[crit]] = 1.0
    totals = resample.cluster_totals(np.hstack([scores, scored]))
    # Row 0: the observed sample (every cluster once); rows 1..: the resamples.
    resampled = np.vstack([totals.sum(axis=0), resample.counts @ totals])
    c = len(criteria)
    stats = _rollup(rubric, criteria, resampled[:, :c], resampled[:, c:])
    names = ["overall", *rubric.dimensions]
    low, high = percentile_interval(stats[1:], confidence)
    out: dict[str, Estimate] = {}
    for j, name in enumerate(names):
        mean = float(stats[0, j])
        if np.isnan(mean):
            continue
        lo, hi = _bounds(mean, stats[1:, j], confidence, resample.clusters, (low[j], high[j]))
        out[name] = Estimate(mean=mean, low=lo, high=hi, n=resample.n, clusters=resample.clusters)
    return out


def _rollup(
    rubric: Rubric, criteria: list[str], sums: np.ndarray, counts: np.ndarray
) -> np.ndarray:
    """The roll-up of ``aggregate`` on rows of criterion sums and counts: (rows, 1 + dims),
    column 0 overall; NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        weights = np.array(
            [[rubric.dimensions[d].get(c, 0.0) for d in rubric.dimensions] for c in criteria]
        )
        present = ~np.isnan(means)
        total = present @ weights
        dims = np.where(total > 0, (np.where(present, means, 0.0) @ weights) / total, np.nan)
        defined = ~np.isnan(dims)
        n_dims = defined.sum(axis=1)
        overall = np.where(
            n_dims > 0, np.where(defined, dims, 0.0).sum(axis=1) / np.maximum(n_dims, 1), np.nan
        )
    return np.column_stack([overall, dims])


def _means(values: np.ndarray, resample: ClusterResample) -> tuple[float, np.ndarray]:
    """Observed mean and every resample's mean. Deviations from the mean are what get
    summed, so constant values resample to exactly their mean."""
    mean = float(values.mean())
    deviations, sizes = resample.totals(np.column_stack([values - mean, np.ones(resample.n)])).T
    return mean, mean + deviations / sizes


def _bounds(
    mean: float,
    samples: np.ndarray,
    confidence: float,
    clusters: int,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float]:
    if clusters < 2:
        return mean, mean
    low, high = bounds if bounds is not None else percentile_interval(samples, confidence)
    low, high = float(low), float(high)
    if np.isnan(low) or np.isnan(high):
        return mean, mean
    if abs(low - mean) <= _SNAP:
        low = mean
    if abs(high - mean) <= _SNAP:
        high = mean
    return low, high


def _finite(values: Iterable[float], clusters: Sequence[Hashable], name: str) -> np.ndarray:
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 0:
        raise ValueError(f"no {name} to resample")
    if arr.shape != (len(clusters),):
        raise ValueError(f"{name} has {arr.size} entries but clusters has {len(clusters)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite numbers (drop unscored probes first)")
    return arr


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def cluster_interval(
    values: Sequence[float], clusters: Sequence[Hashable], *, confidence: float = 0.95
) -> Estimate:
    return cluster_bootstrap(values, clusters, confidence=confidence)


def ratio_interval(
    num: Sequence[float],
    den: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
) -> Estimate:
    """sum(num) / sum(den) of paired per-probe values, resampled by cluster."""
    a, b = _finite(num, clusters, "num"), _finite(den, clusters, "den")
    resample = ClusterResample(clusters)
    totals = resample.totals(np.column_stack([a, b]))
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = totals[:, 0] / totals[:, 1]
    samples = np.where(np.isfinite(samples), samples, np.nan)
    mean = float(a.sum() / b.sum())
    low, high = _bounds(mean, samples, confidence, resample.clusters)
    return Estimate(mean=mean, low=low, high=high, n=resample.n, clusters=resample.clusters)
