"""What the audit measures: agreement with gold, repeat consistency, verbosity bias.

* A judgment is one criterion score of one sample of one item. It agrees with
  gold when ``|score - expected| <= tolerance``, and exactly when equal. The
  tolerance is given on the 0-5 scale and scaled to the rubric's (1 point of 5 is
  0.4 of 2, so on the 2/1/0 scale only exact verdicts agree).
* Consistency: over (item, criterion) pairs with two or more scored samples,
  the share whose samples are identical, and the mean (population) standard
  deviation of the samples.
* Verbosity: over probes with both ``full`` and ``padded`` scored, the share
  where ``padded`` (mean over samples) beats ``full`` on any criterion other than
  ``instruction_format`` (length is what that one measures), and the mean
  difference of their rubric overall scores (padded minus full).
* Failures: samples whose judgment failed after retries; counted, never scored.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from benchmark.audit.items import AuditItem
from benchmark.rubric import Rubric, aggregate

FORMAT = "instruction_format"
REFERENCE_SCALE = 5  # audit.tolerance is in points of a 0-5 scale
_EPS = 1e-9


class Rate(BaseModel):
    """Agreement of a group of judgments."""

    n: int = 0
    agree: int = 0
    exact: int = 0

    @property
    def agreement(self) -> float | None:
        return self.agree / self.n if self.n else None

    @property
    def exact_agreement(self) -> float | None:
        return self.exact / self.n if self.n else None

    def add(self, diff: float, tolerance: float) -> None:
        self.n += 1
        self.agree += diff <= tolerance + _EPS
        self.exact += diff <= _EPS


class AuditMetrics(BaseModel):
    overall: Rate
    by_type: dict[str, Rate]
    by_criterion: dict[str, Rate]
    by_variant: dict[str, Rate]
    consistency: float | None = Field(None, description="None with fewer than 2 samples")
    consistency_std: float | None = None
    verbosity_inflation: float | None = Field(None, description="None without full and padded")
    verbosity_delta: float | None = None
    verbosity_probes: int = 0
    failures: int = 0
    judgments: int = 0

    @property
    def agreement(self) -> float | None:
        return self.overall.agreement

    def flat(self) -> dict[str, float]:
        """The metrics under their MLflow names (undefined ones left out, never NaN)."""
        out: dict[str, float | None] = {
            "audit/agreement": self.overall.agreement,
            "audit/agreement_exact": self.overall.exact_agreement,
            "audit/consistency": self.consistency,
            "audit/consistency_std": self.consistency_std,
            "audit/verbosity_inflation": self.verbosity_inflation,
            "audit/verbosity_delta": self.verbosity_delta,
            "audit/failures": float(self.failures),
            "audit/judgments": float(self.judgments),
        }
        for prefix, groups in (
            ("type", self.by_type),
            ("criterion", self.by_criterion),
            ("variant", self.by_variant),
        ):
            for name, rate in groups.items():
                out[f"audit/agreement/{prefix}/{name}"] = rate.agreement
                out[f"audit/agreement_exact/{prefix}/{name}"] = rate.exact_agreement
        return {k: v for k, v in out.items() if v is not None}


def scaled_tolerance(tolerance: float, scale_max: int) -> float:
    """``audit.tolerance`` (points of 0-5) on a rubric scored 0-``scale_max``."""
    return tolerance * scale_max / REFERENCE_SCALE


def compute(items: list[AuditItem], rubric: Rubric, tolerance: float) -> AuditMetrics:
    """The metrics of judged items; ``tolerance`` in points of a 0-5 scale."""
    tolerance = scaled_tolerance(tolerance, rubric.scale_max)
    overall = Rate()
    groups: dict[str, dict[str, Rate]] = {
        "type": defaultdict(Rate),
        "criterion": defaultdict(Rate),
        "variant": defaultdict(Rate),
    }
    failures = 0
    for item in items:
        for sample in item.samples:
            if sample.failed:
                failures += 1
                continue
            for criterion, expected in item.expected.items():
                score = sample.scores.get(criterion)
                if score is None:
                    continue
                diff = abs(score - expected)
                for rate in (
                    overall,
                    groups["type"][item.probe.type],
                    groups["criterion"][criterion],
                    groups["variant"][item.variant],
                ):
                    rate.add(diff, tolerance)
    same, spread = consistency(items)
    inflation, delta, compared = verbosity(items, rubric)
    return AuditMetrics(
        overall=overall,
        by_type=dict(groups["type"]),
        by_criterion=dict(groups["criterion"]),
        by_variant=dict(groups["variant"]),
        consistency=same,
        consistency_std=spread,
        verbosity_inflation=inflation,
        verbosity_delta=delta,
        verbosity_probes=compared,
        failures=failures,
        judgments=overall.n,
    )


def scored(item: AuditItem, criterion: str) -> list[float]:
    """The criterion's scores over the item's successful samples."""
    return [s.scores[criterion] for s in item.samples if not s.failed and criterion in s.scores]


def consistency(items: Iterable[AuditItem]) -> tuple[float | None, float | None]:
    identical: list[bool] = []
    spreads: list[float] = []
    for item in items:
        for criterion in item.expected:
            values = scored(item, criterion)
            if len(values) < 2:
                continue
            identical.append(max(values) - min(values) <= _EPS)
            spreads.append(statistics.pstdev(values))
    if not identical:
        return None, None
    return sum(identical) / len(identical), statistics.fmean(spreads)


def verbosity(items: Iterable[AuditItem], rubric: Rubric) -> tuple[float | None, float | None, int]:
    """(share of probes where padding raised a non-format score, mean overall delta, probes)."""
    by_probe: dict[str, dict[str, AuditItem]] = defaultdict(dict)
    for item in items:
        if item.variant in ("full", "padded"):
            by_probe[item.probe.id][item.variant] = item
    inflated: list[bool] = []
    deltas: list[float] = []
    for pair in by_probe.values():
        if len(pair) < 2:
            continue
        full, padded = _means(pair["full"]), _means(pair["padded"])
        shared = [c for c in full if c in padded]
        if not shared:
            continue
        inflated.append(any(padded[c] > full[c] + _EPS for c in shared if c != FORMAT))
        high = aggregate(rubric, [{c: padded[c] for c in shared}]).overall
        low = aggregate(rubric, [{c: full[c] for c in shared}]).overall
        if high is not None and low is not None:
            deltas.append(high - low)
    if not inflated:
        return None, None, 0
    delta = statistics.fmean(deltas) if deltas else None
    return sum(inflated) / len(inflated), delta, len(inflated)


def _means(item: AuditItem) -> dict[str, float]:
    out = {}
    for criterion in item.expected:
        values = scored(item, criterion)
        if values:
            out[criterion] = statistics.fmean(values)
    return out
