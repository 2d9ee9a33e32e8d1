"""What a job produces, and the flat views of it (metrics, per-probe rows)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field

from benchmark.answerer.base import Answer
from benchmark.compaction import CompactionPoint
from benchmark.judge.agreement import Unit, agreement_metrics
from benchmark.judge.base import Judgment
from benchmark.llm.usage import CallRecord
from benchmark.probe.models import PROBE_TYPES, Probe
from benchmark.rubric import Rubric, Scores, aggregate
from benchmark.stats import rollup_bootstrap
from benchmark.transcript.manifest import TranscriptManifest
from benchmark.transcript.models import Message

# Interval settings of the per-run metrics: fixed, so a rerun logs identical metrics.
CI_CONFIDENCE = 0.95
CI_RESAMPLES = 2000
CI_SEED = 0


class ProbeResult(BaseModel):
    probe: Probe
    answer: Answer
    judgment: Judgment
    score: float | None = Field(description="this probe's overall on the rubric; None if failed")

    @property
    def failed(self) -> bool:
        return self.answer.failed or self.judgment.failed


class PointResult(BaseModel):
    point: CompactionPoint
    tokens_after: int
    context: list[Message] = Field(description="the compacted context the answerer saw")
    probes: list[ProbeResult]

    @property
    def compression_ratio(self) -> float:
        return self.point.tokens_before / max(1, self.tokens_after)


class JobResult(BaseModel):
    policy: str
    transcripts: list[str]
    rubric: Rubric
    not_measured: list[str] = Field(
        default_factory=list,
        description="dimensions the judge cannot tell apart for this answerer (e.g. "
        "instruction_following offline): scored, but left out of every roll-up",
    )
    points: list[PointResult]
    inputs: TranscriptManifest | None = Field(
        None, description="the transcripts used (files and hashes) and the files skipped"
    )
    usage: dict[str, float] = Field(default_factory=dict, description="LLM tokens and cost")
    judge_records: list[dict] = Field(
        default_factory=list, description="an LLM judge's input and raw output per judgment"
    )
    calls: list[CallRecord] = Field(
        default_factory=list, description="every LLM call, when the ledger kept them (traces)"
    )

    @property
    def rollup_rubric(self) -> Rubric:
        """The rubric the roll-up uses: ``rubric`` without the ``not_measured`` dimensions."""
        return self.rubric.without(self.not_measured)

    @property
    def probe_results(self) -> list[ProbeResult]:
        return [r for p in self.points for r in p.probes]

    def scores(self, probe_type: str | None = None) -> Scores:
        """Roll-up over judged probes (failed ones are counted, not scored)."""
        return aggregate(
            self.rollup_rubric,
            (
                r.judgment.scores()
                for r in self.probe_results
                if not r.failed and (probe_type is None or r.probe.type == probe_type)
            ),
        )

    def dimension_scores(self, result: ProbeResult) -> dict[str, float | None]:
        """One probe's score per rubric dimension (the rubric's roll-up of its judgment);
        None for dimensions it was not judged on, and for failed probes."""
        rubric = self.rollup_rubric
        if result.failed:
            return dict.fromkeys(rubric.dimensions)
        dims = aggregate(rubric, [result.judgment.scores()]).dimensions
        return {d: dims.get(d) for d in rubric.dimensions}

    def intervals(self) -> dict[str, float]:
        """95% cluster-bootstrap bounds of the roll-up as metrics: ``overall/ci_low``,
        ``<dimension>/ci_low``, ``type/<probe type>/ci_low`` (and ``ci_high``).

        Resampled over scored probes by cluster ``(transcript, point)``, with a fixed
        seed (see ``benchmark.stats``). Cached by content: ``metrics()`` is called
        more than once per job, and a cache keyed on what is resampled can never
        go stale, whatever happens to this (mutable) model.
        """
        probes = tuple(
            (
                (r.probe.transcript_id, r.probe.point),
                r.probe.type,
                tuple(sorted(r.judgment.scores().items())),
            )
            for r in self.probe_results
            if not r.failed
        )
        return dict(_intervals(self.rollup_rubric.model_dump_json(), probes))

    @property
    def failed_fraction(self) -> float:
        """Share of probes with no score (answer or judgment failed after all retries)."""
        results = self.probe_results
        return sum(r.failed for r in results) / len(results) if results else 0.0

    def metrics(self) -> dict[str, float]:
        """Flat metric names for tracking: dimensions by name, the rest grouped by prefix."""
        overall = self.scores()
        results = self.probe_results
        before = sum(p.point.tokens_before for p in self.points)
        after = sum(p.tokens_after for p in self.points)
        metrics: dict[str, float] = {
            "probes": len(results),
            "points": len(self.points),
            "failures/answers": sum(r.answer.failed for r in results),
            "failures/judgments": sum(r.judgment.failed and not r.answer.failed for r in results),
            "failures/probes": sum(r.failed for r in results),
            "failures/fraction": self.failed_fraction,
            "tokens/before": before,
            "tokens/after": after,
            "compression_ratio": before / max(1, after),
            "kept_fraction": after / max(1, before),
        }
        if overall.overall is not None:
            metrics["overall"] = overall.overall
            metrics["overall_pct"] = 100 * overall.overall / self.rubric.scale_max
        metrics.update(self.usage)
        metrics.update(overall.dimensions)
        metrics.update(self.intervals())
        metrics.update({f"criteria/{c}": v for c, v in overall.criteria.items()})
        for ptype in PROBE_TYPES:
            typed = self.scores(ptype)
            if typed.overall is not None:
                metrics[f"type/{ptype}"] = typed.overall
                metrics.update({f"type/{ptype}/{d}": v for d, v in typed.dimensions.items()})
        metrics.update(self.panel_metrics())
        return metrics

    def panel_metrics(self) -> dict[str, float]:
        """A judge panel's agreement (``benchmark.judge.agreement``) over every judged
        (probe, criterion) and ``judge/members_failed``; empty unless the judge is a panel."""
        panels = [r.judgment.members for r in self.probe_results if r.judgment.members is not None]
        if not panels:
            return {}
        names = list(dict.fromkeys(name for members in panels for name in members))
        units: list[Unit] = []
        for members in panels:
            judged = {name: m.scores for name, m in members.items() if not m.failed}
            for criterion in dict.fromkeys(c for scores in judged.values() for c in scores):
                units.append((criterion, {n: s.get(criterion) for n, s in judged.items()}))
        failed = sum(m.failed for members in panels for m in members.values())
        return {
            **agreement_metrics(units, names, self.rubric.scale_max),
            "judge/members_failed": failed,
        }

    def rows(self) -> list[dict[str, object]]:
        """One row per probe: the per-probe table shown in the MLflow UI."""
        rows = []
        for point in self.points:
            for r in point.probes:
                rows.append(
                    {
                        "probe_id": r.probe.id,
                        "transcript": r.probe.transcript_id,
                        "point": r.probe.point,
                        "type": r.probe.type,
                        "position": round(r.probe.position, 3),
                        "question": r.probe.question,
                        "gold": r.probe.gold.answer,
                        "answer": r.answer.text,
                        "score": r.score,
                        "failed": r.failed,
                        **{f"c/{c}": s for c, s in r.judgment.scores().items()},
                        **{f"d/{d}": s for d, s in self.dimension_scores(r).items()},
                        **member_columns(r.judgment),
                    }
                )
        return rows


def member_columns(judgment: Judgment) -> dict[str, float]:
    """A panel's member scores as ``m/<member>/<criterion>`` (a failed member has none)."""
    return {
        f"m/{name}/{criterion}": score
        for name, member in (judgment.members or {}).items()
        for criterion, score in member.scores.items()
    }


@lru_cache(maxsize=16)
def _intervals(
    rubric_json: str, probes: tuple[tuple[tuple[str, int], str, tuple[tuple[str, float], ...]], ...]
) -> tuple[tuple[str, float], ...]:
    """CI metrics for scored probes given as (cluster, probe type, criterion scores):
    overall and dimensions over all probes, the overall only per probe type."""
    rubric = Rubric.model_validate_json(rubric_json)

    def bounds(chosen: list[tuple]) -> dict[str, tuple[float, float]]:
        if not chosen:
            return {}
        estimates = rollup_bootstrap(
            rubric,
            [dict(scores) for _, _, scores in chosen],
            [cluster for cluster, _, _ in chosen],
            resamples=CI_RESAMPLES,
            confidence=CI_CONFIDENCE,
            seed=CI_SEED,
        )
        return {name: (e.low, e.high) for name, e in estimates.items()}

    named = bounds(list(probes))
    for ptype in PROBE_TYPES:
        typed = bounds([p for p in probes if p[1] == ptype])
        if "overall" in typed:
            named[f"type/{ptype}"] = typed["overall"]
    return tuple(
        metric
        for name, (low, high) in named.items()
        for metric in ((f"{name}/ci_low", low), (f"{name}/ci_high", high))
    )
