"""How much a judge panel's members agree: Krippendorff's alpha and Cohen's kappa.

A *unit* is one (judgment, criterion): every member that judged it gave it a
score on 0..scale_max. A member that failed on a judgment leaves its units
missing; agreement is computed from what was scored.

* Krippendorff's alpha, ordinal (``krippendorff`` package): all members, all
  units, missing values allowed. Units scored by fewer than two members carry
  no pairs and drop out, as in Krippendorff's definition.
* Cohen's kappa per pair of members over the units both scored, quadratic-
  weighted (a 4 against a 5 is a near miss, a 0 against a 5 is not) and
  unweighted (only identical scores agree). The weighted one is the headline
  ``judge/kappa/<a>/<b>``; the unweighted one is ``judge/kappa_unweighted/<a>/<b>``.

Undefined values are NaN and are not logged: alpha when no unit has two scores
or every score is the same (no variation: the data cannot tell agreement from
chance, so neither 1.0 nor 0.0 would be honest), kappa when a pair shares no
unit or both members always give one and the same score; neither with fewer
than two members.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Literal

import krippendorff
import numpy as np

Unit = tuple[str, Mapping[str, float | None]]
"""(criterion, {member: score or None when the member failed})."""


def _values(rows: Sequence[Sequence[float | None]]) -> np.ndarray:
    return np.array([[np.nan if v is None else float(v) for v in row] for row in rows], float)


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]], scale_max: int) -> float:
    """Ordinal alpha of ``ratings`` (one row per member, one column per unit; None = missing).

    The ordinal distances use the scale 0..scale_max plus any other value
    that occurs (a judge may give 2.5). NaN when undefined (see the module).
    """
    data = _values(ratings)
    if data.ndim != 2 or data.shape[0] < 2:
        return math.nan
    paired = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    observed = np.unique(paired[~np.isnan(paired)])
    if observed.size < 2:  # no pairable unit, or no variation at all
        return math.nan
    domain = np.union1d(np.arange(scale_max + 1, dtype=float), observed)
    return float(
        krippendorff.alpha(
            reliability_data=paired, value_domain=domain, level_of_measurement="ordinal"
        )
    )


def cohen_kappa(
    a: Sequence[float | None],
    b: Sequence[float | None],
    weights: Literal["quadratic"] | None = "quadratic",
) -> float:
    """Cohen's kappa of two members over the units both scored (None = missing).

    Quadratic: ``1 - mean((a - b)^2) / mean over all pairs (a_i - b_j)^2``, the
    usual weighted kappa with weights ``(i - j)^2`` (the normalisation of the
    weights cancels), defined on the score values themselves; the denominator
    is ``var(a) + var(b) + (mean(a) - mean(b))^2``. Unweighted:
    ``(p_o - p_e) / (1 - p_e)``. NaN when undefined (see the module).
    """
    x, y = _values([a, b])
    both = ~(np.isnan(x) | np.isnan(y))
    x, y = x[both], y[both]
    if x.size == 0:
        return math.nan
    if weights == "quadratic":
        # mean over all pairs (x_i - y_j)^2, in closed form (no n x n matrix)
        expected = float(np.var(x) + np.var(y) + (np.mean(x) - np.mean(y)) ** 2)
        if expected == 0:
            return math.nan
        return 1.0 - float(np.mean((x - y) ** 2)) / expected
    if weights is not None:
        raise ValueError(f"weights must be 'quadratic' or None, got {weights!r}")
    values = np.union1d(x, y)
    p_e = float(sum(np.mean(x == v) * np.mean(y == v) for v in values))
    if p_e >= 1.0:
        return math.nan
    return (float(np.mean(x == y)) - p_e) / (1.0 - p_e)


def agreement_metrics(
    units: Sequence[Unit], members: Sequence[str], scale_max: int
) -> dict[str, float]:
    """``judge/alpha``, ``judge/alpha/<criterion>``, ``judge/kappa/<a>/<b>`` and
    ``judge/kappa_unweighted/<a>/<b>`` for ``members`` (in this order); undefined
    values left out."""
    if len(members) < 2:
        return {}

    def rows(chosen: Sequence[Unit]) -> list[list[float | None]]:
        return [[scores.get(m) for _, scores in chosen] for m in members]

    out = {"judge/alpha": krippendorff_alpha(rows(units), scale_max)}
    for criterion in dict.fromkeys(c for c, _ in units):
        chosen = [u for u in units if u[0] == criterion]
        out[f"judge/alpha/{criterion}"] = krippendorff_alpha(rows(chosen), scale_max)
    matrix = dict(zip(members, rows(units), strict=True))
    for a, b in combinations(members, 2):
        out[f"judge/kappa/{a}/{b}"] = cohen_kappa(matrix[a], matrix[b], "quadratic")
        out[f"judge/kappa_unweighted/{a}/{b}"] = cohen_kappa(matrix[a], matrix[b], None)
    return {k: v for k, v in out.items() if not math.isnan(v)}
