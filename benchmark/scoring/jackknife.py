"""The numerics under ``benchmark.scoring.stats``: delete-one-cluster jackknife standard errors,
their Bell-McCaffrey degrees of freedom, and Student t bounds (optionally on a bounded scale).

Kept apart from the interval API so each can be read alone: ``stats`` says what is
estimated and reported, this module how uncertain it is.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

# A standard error this small relative to its estimate is rounding noise (sums of constant
# values), not variation.
_SNAP = 1e-9


class Clusters:
    """Probes coded by cluster (in order of first appearance) and per-cluster sums."""

    def __init__(self, clusters: Sequence[Hashable]) -> None:
        if len(clusters) == 0:
            raise ValueError("no values to summarise")
        index: dict[Hashable, int] = {}
        self.codes = np.fromiter(
            (index.setdefault(c, len(index)) for c in clusters), dtype=np.intp, count=len(clusters)
        )
        self.n = len(clusters)
        self.count = len(index)

    def totals(self, columns: np.ndarray) -> np.ndarray:
        """Per-probe rows (n, ...) summed per cluster: (clusters, ...)."""
        columns = np.asarray(columns, dtype=float)
        totals = np.zeros((self.count, *columns.shape[1:]))
        np.add.at(totals, self.codes, columns)
        return totals


def jackknife(
    estimate: np.ndarray, deviations: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Standard error and degrees of freedom per statistic (k,) from leave-one-cluster-out
    deviations (G, k) from the estimate, given each cluster's size for each statistic
    (G, k; 0: the cluster cannot move it and is left out).

    se = sqrt((g-1)/g * sum(dev^2)) over the g clusters of nonzero size (CR3-like). df is
    the Bell-McCaffrey (Satterthwaite) df of that variance when every cluster's total
    error has a standard deviation proportional to its size, i.e. probes of one point
    move together (the case that matters here): G - 1 for equal sizes, fewer when a few
    large clusters dominate, which keeps the t interval honest for unequal sizes.
    NaN with fewer than 2 clusters or an undefined left-out statistic.
    """
    relevant = sizes > 0
    g = relevant.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        squares = np.where(relevant, deviations, 0.0) ** 2
        se = np.sqrt((g - 1) / g * squares.sum(axis=0))
        df = bell_mccaffrey_df(sizes / sizes.sum(axis=0))
    se = np.where(se <= _SNAP * np.maximum(1.0, np.abs(estimate)), 0.0, se)
    undefined = (g < 2) | np.isnan(se)
    return np.where(undefined, np.nan, se), np.where(undefined, np.nan, df)


def bell_mccaffrey_df(w: np.ndarray) -> np.ndarray:
    """df = tr(X)^2 / tr(X^2) per column of cluster shares ``w`` (G, k), where X = C C' and
    C = A (I - w 1') S: S = diag(w) the working error sd, (I - w 1') turns errors into
    residuals around the estimate, A = diag(1 / (1 - w)) is the jackknife's inflation.
    C is diagonal plus rank one, so both traces take O(G) (no G x G matrix)."""
    a = 1 / (1 - w)
    u, p, d = a * w, a * w**2, (a * w) ** 2
    s = (w**2).sum(axis=0)
    pu, uu, pp = (p * u).sum(axis=0), (u * u).sum(axis=0), (p * p).sum(axis=0)
    # X = diag(d) + R with R = [p u] K [p u]', K = [[0, -1], [-1, s]].
    trace = d.sum(axis=0) - 2 * pu + s * uu
    r_diag = -2 * p * u + s * u**2
    m11, m12, m21, m22 = -pu, -uu, s * pu - pp, s * uu - pu  # K [p u]'[p u]
    trace_sq = (d**2).sum(axis=0) + 2 * (d * r_diag).sum(axis=0) + m11**2 + 2 * m12 * m21 + m22**2
    return trace**2 / trace_sq


def t_bounds(
    estimate: np.ndarray | float,
    se: np.ndarray | float,
    df: np.ndarray | float,
    confidence: float,
    limits: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``estimate -+ t(df) * se``; NaN where ``se`` is.

    With ``limits`` (a bounded scale such as 0-5 scores) the interval is built on the
    logit of the estimate's position in the scale (delta-method se) and mapped back:
    it stays inside the scale and stretches away from a nearby end, where scores
    pile up and a symmetric interval undercovers (``benchmarks/ci_coverage.py``).
    An infinite upper limit only clips the lower bound.
    """
    from scipy.special import stdtrit  # Student t quantiles; far lighter than scipy.stats

    check_confidence(confidence)
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        t = stdtrit(np.where(np.isnan(df), 1.0, df), 1 - (1 - confidence) / 2)
        low, high = estimate - t * se, estimate + t * se
        if limits is None:
            return low, high
        if not np.isfinite(limits[1]):  # bounded below only (a ratio of scores): clip
            return np.maximum(low, limits[0]), high
        lo, span = limits[0], limits[1] - limits[0]
        q = (estimate - lo) / span
        inside = (q > 0) & (q < 1) & (se > 0)
        logit = np.log(q / (1 - q))
        half = t * se / (span * q * (1 - q))
        top = lo + span
        low = np.where(inside, lo + span / (1 + np.exp(half - logit)), np.maximum(low, lo))
        high = np.where(inside, lo + span / (1 + np.exp(-logit - half)), np.minimum(high, top))
    return low, high


def check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
