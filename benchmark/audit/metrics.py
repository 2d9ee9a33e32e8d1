"""What the audit measures: agreement with the expected bands, repeat consistency, verbosity.

* A judgment is one criterion score of one sample of one item. It agrees when
  the score lies in the band a correct judge's score lies in (the item's
  ``expected``, :mod:`benchmark.audit.expected`); a criterion whose band is
  ``any`` is asked but not counted. Agreement is reported overall and per
  variant, variant and criterion class, probe type, criterion and class.
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

from benchmark.audit.cases import AuditItem
from benchmark.audit.expected import BANDS, CLASSES
from benchmark.rubric import Rubric, aggregate

FORMAT = "instruction_format"
_EPS = 1e-9
GROUPS = ("variant", "variant_class", "class", "type", "criterion")


class Rate(BaseModel):
    """Agreement of a group of judgments."""

    n: int = 0
    agree: int = 0

    @property
    def agreement(self) -> float | None:
        return self.agree / self.n if self.n else None

    def add(self, agrees: bool) -> None:
        self.n += 1
        self.agree += agrees


class AuditMetrics(BaseModel):
    overall: Rate
    groups: dict[str, dict[str, Rate]] = Field(
        description="group (GROUPS) -> name -> rate; variant_class names are 'variant/class'"
    )
    consistency: float | None = Field(None, description="None with fewer than 2 samples")
    consistency_std: float | None = None
    verbosity_inflation: float | None = Field(None, description="None without full and padded")
    verbosity_delta: float | None = None
    verbosity_probes: int = 0
    failures: int = 0
    judgments: int = Field(0, description="counted judgments (band other than any)")

    @property
    def agreement(self) -> float | None:
        return self.overall.agreement

    @property
    def by_variant(self) -> dict[str, Rate]:
        return self.groups.get("variant", {})

    def flat(self) -> dict[str, float]:
        """The metrics under their MLflow names (undefined ones left out, never NaN).

        ``audit/agreement/<group>/<name>``, the variant x class cells as
        ``audit/agreement/variant/<variant>/<class>``."""
        out: dict[str, float | None] = {
            "audit/agreement": self.overall.agreement,
            "audit/consistency": self.consistency,
            "audit/consistency_std": self.consistency_std,
            "audit/verbosity_inflation": self.verbosity_inflation,
            "audit/verbosity_delta": self.verbosity_delta,
            "audit/failures": float(self.failures),
            "audit/judgments": float(self.judgments),
        }
        for group, rates in self.groups.items():
            prefix = "variant" if group == "variant_class" else group
            for name, rate in rates.items():
                out[f"audit/agreement/{prefix}/{name}"] = rate.agreement
        return {k: v for k, v in out.items() if v is not None}


def agrees(score: float, band: str, scale: int) -> bool | None:
    """Whether ``score`` lies in ``band``; None for ``any`` (not counted)."""
    return None if band == "any" else BANDS[band].holds(score, scale)


def compute(items: list[AuditItem], rubric: Rubric) -> AuditMetrics:
    """The metrics of judged items."""
    overall = Rate()
    groups: dict[str, dict[str, Rate]] = {g: defaultdict(Rate) for g in GROUPS}
    failures = 0
    for item in items:
        for sample in item.samples:
            if sample.failed:
                failures += 1
                continue
            for criterion, band in item.expected.items():
                score = sample.scores.get(criterion)
                verdict = None if score is None else agrees(score, band, rubric.scale_max)
                if verdict is None:
                    continue
                cls = CLASSES[criterion]
                keys = {
                    "variant": item.variant,
                    "variant_class": f"{item.variant}/{cls}",
                    "class": cls,
                    "type": item.probe.type,
                    "criterion": criterion,
                }
                overall.add(verdict)
                for group, key in keys.items():
                    groups[group][key].add(verdict)
    same, spread = consistency(items)
    inflation, delta, compared = verbosity(items, rubric)
    return AuditMetrics(
        overall=overall,
        groups={g: dict(rates) for g, rates in groups.items()},
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
