"""What a job produces, and the flat views of it (metrics, per-probe rows)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable

from pydantic import BaseModel, Field

from benchmark.answerer.base import Answer
from benchmark.judge.agreement import Unit, agreement_metrics
from benchmark.judge.base import Judgment
from benchmark.llm.usage import CallRecord
from benchmark.probe.models import PROBE_TYPES, Probe
from benchmark.rubric import Rubric, Scores, aggregate
from benchmark.run.compaction import CompactionPoint
from benchmark.scoring import metric_names as names
from benchmark.scoring.clusters import ClusterBy, cluster_key
from benchmark.scoring.rollup_estimates import rollup_estimates
from benchmark.scoring.stats import Estimate, cluster_interval, ratio_interval
from benchmark.transcript.manifest import TranscriptManifest
from benchmark.transcript.models import Message

CI_CONFIDENCE = 0.95  # of the per-run interval metrics


class ProbeResult(BaseModel):
    probe: Probe
    answer: Answer
    judgment: Judgment
    score: float | None = Field(
        None, description="this probe's overall on the rubric; None if failed"
    )
    survival: float | None = Field(
        None,
        description="share of the gold facts the compacted context still states "
        "(benchmark.scoring.survival); None where it cannot be read, or for a next_action probe "
        "whose gold the session names nowhere before the point",
    )
    control: ProbeResult | None = Field(
        None, description="with control=true: the same probe answered from the uncompacted session"
    )
    control_agreement: float | None = Field(
        None, description="next_action: the score against the uncompacted context's answer"
    )

    @property
    def failed(self) -> bool:
        return self.answer.failed or self.judgment.failed

    def judge_records(self) -> list[dict]:
        """An LLM judge's input and raw output for this probe, with its id (a control-arm
        judgment is marked ``"arm": "control"``); empty for a judge that keeps none."""
        records = []
        if self.judgment.record is not None:
            records.append({"probe_id": self.probe.id, **self.judgment.record})
        if self.control is not None and self.control.judgment.record is not None:
            control = self.control.judgment.record
            records.append({"probe_id": self.probe.id, "arm": "control", **control})
        return records


class PointResult(BaseModel):
    point: CompactionPoint
    tokens_after: int
    context: list[Message] = Field(description="the compacted context the answerer saw")
    probes: list[ProbeResult]
    over_window: bool = Field(
        False, description="the policy's output exceeds compaction.context_window: a failure"
    )
    compaction_error: str | None = Field(
        None,
        description="why the point could not be compacted (e.g. its LLM summarizer failed): "
        "its probes are counted as failed, its tokens are left out of every token figure",
    )
    probe_writer_error: str | None = Field(
        None, description="why the LLM probe writer wrote no probes for this point (skipped)"
    )
    next_action_skipped: str | None = Field(
        None,
        description="why the point has no next_action probe though asked: no_action, "
        "finish or no_target (benchmark.activity.steps.SKIP_REASONS)",
    )

    @property
    def compression_ratio(self) -> float:
        """Tokens before over after; NaN for a point that could not be compacted."""
        if self.compaction_error is not None:
            return math.nan
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
    context_window: int | None = Field(
        None, description="compaction.context_window: what a compacted context must fit"
    )
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
    repeated_probes: int = Field(
        0, description="probes left out as repeats of one asked at an earlier point"
    )
    cluster_by: ClusterBy = Field(
        "point", description="stats.cluster_by: what the intervals' clusters are"
    )
    interrupted: bool = Field(
        False, description="the job was stopped by Ctrl-C: this holds what finished before"
    )
    unfinished_probes: int = Field(
        0, description="probes scheduled but not finished when the job was interrupted"
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
        """95% interval bounds of the roll-up as metrics (``names.ci_names``: e.g.
        ``headline/overall_lower``). An undefined interval (one cluster) has none."""
        return {
            bound: value
            for name, est in self.estimates().items()
            if est.defined
            for bound, value in zip(names.ci_names(name), (est.low, est.high), strict=True)
        }

    def estimates(self) -> dict[str, Estimate]:
        """The roll-up's estimates with their 95% intervals (``benchmark.scoring.stats``), by
        metric name (``names.OVERALL``, ``names.dimension``, ``names.type_overall``).

        Over scored probes clustered by ``cluster_by`` (``cluster``). Cached by content:
        ``metrics()`` is called more than once per job, and a cache keyed on the probes
        can never go stale, whatever happens to this (mutable) model.
        """
        probes = tuple(
            (
                self.cluster(r),
                r.probe.type,
                tuple(sorted(r.judgment.scores().items())),
            )
            for r in self.probe_results
            if not r.failed
        )
        return dict(rollup_estimates(self.rollup_rubric.model_dump_json(), probes, CI_CONFIDENCE))

    def tasks(self) -> dict[str, str | None]:
        """transcript id -> the task its log replays (None: unknown, its own task)."""
        return self.inputs.tasks() if self.inputs is not None else {}

    def cluster(self, result: ProbeResult) -> Hashable:
        """A probe's cluster for every interval of the job (``stats.cluster_by``)."""
        probe = result.probe
        task = self.tasks().get(probe.transcript_id)
        return cluster_key(self.cluster_by, probe.transcript_id, probe.point, task)

    def cluster_count(self) -> int:
        """Clusters of the scored probes."""
        return len({self.cluster(r) for r in self.probe_results if not r.failed})

    @property
    def failed_fraction(self) -> float:
        """Share of probes with no score (answer, judgment or compaction failed after all
        retries), or the share of points whose probe writer failed when that is larger:
        their probes were never written, so they cannot be counted one by one."""
        results = self.probe_results
        probes = sum(r.failed for r in results) / len(results) if results else 0.0
        unwritten = sum(p.probe_writer_error is not None for p in self.points)
        return max(probes, unwritten / len(self.points) if self.points else 0.0)

    def failure_cause(self) -> str | None:
        """The most common error of the failed probes and of the probe writer's failed
        points (e.g. an endpoint unreachable at its base_url); None when nothing failed."""
        errors = Counter(
            (r.answer.error if r.answer.failed else r.judgment.error) or "unknown error"
            for r in self.probe_results
            if r.failed
        )
        errors.update(p.probe_writer_error for p in self.points if p.probe_writer_error)
        return errors.most_common(1)[0][0] if errors else None

    def metrics(self) -> dict[str, float]:
        """Flat metrics for tracking, named by ``benchmark.scoring.metric_names``.

        Token figures are over the points that were compacted: a point whose
        compaction failed has no context to count (``points/compaction_failed``),
        and with no compacted point there are none.
        """
        overall = self.scores()
        results = self.probe_results
        compacted = [p for p in self.points if p.compaction_error is None]
        before = sum(p.point.tokens_before for p in compacted)
        after = sum(p.tokens_after for p in compacted)
        metrics: dict[str, float] = {
            names.PROBES_TOTAL: len(results),
            names.POINTS_TOTAL: len(self.points),
            names.POINTS_OVER_WINDOW: sum(p.over_window for p in self.points),
            names.POINTS_COMPACTION_FAILED: len(self.points) - len(compacted),
            names.POINTS_PROBE_WRITER_FAILED: sum(
                p.probe_writer_error is not None for p in self.points
            ),
            names.PROBES_FAILED_ANSWERS: sum(r.answer.failed for r in results),
            names.PROBES_FAILED_JUDGMENTS: sum(
                r.judgment.failed and not r.answer.failed for r in results
            ),
            names.PROBES_FAILED: sum(r.failed for r in results),
            names.FAILED_FRACTION: self.failed_fraction,
        }
        skipped = sum(p.next_action_skipped is not None for p in self.points)
        if skipped or any(r.probe.type == "next_action" for r in results):
            metrics[names.POINTS_NEXT_ACTION_SKIPPED] = skipped
        if compacted:  # no token figure at all when no point could be compacted
            metrics[names.TOKENS_BEFORE] = before
            metrics[names.TOKENS_AFTER] = after
            metrics[names.COMPRESSION_RATIO] = before / max(1, after)
            metrics[names.KEPT_FRACTION] = after / max(1, before)
        if overall.overall is not None:
            metrics[names.OVERALL] = overall.overall
            metrics[names.OVERALL_PCT] = 100 * overall.overall / self.rubric.scale_max
        metrics.update(self.usage)
        if names.LLM_COST_USD in self.usage:
            metrics[names.COST_USD] = self.usage[names.LLM_COST_USD]
        metrics.update({names.dimension(d): v for d, v in overall.dimensions.items()})
        metrics.update(self.intervals())
        metrics.update({names.criterion(c): v for c, v in overall.criteria.items()})
        for ptype in PROBE_TYPES:
            typed = self.scores(ptype)
            if typed.overall is not None:
                metrics[names.type_overall(ptype)] = typed.overall
                metrics.update(
                    {names.type_dimension(ptype, d): v for d, v in typed.dimensions.items()}
                )
        metrics.update(self.panel_metrics())
        metrics[names.PROBES_REPEATED] = self.repeated_probes
        if self.interrupted:
            metrics[names.PROBES_UNFINISHED] = self.unfinished_probes
        metrics.update(answerer_free_metrics(self.probe_results, self.rollup_rubric, self.cluster))
        return metrics

    def panel_metrics(self) -> dict[str, float]:
        """A judge panel's agreement (``benchmark.judge.agreement``) over every judged
        (probe, criterion) and ``judge/members_failed``; empty unless the judge is a panel."""
        panels = [r.judgment.members for r in self.probe_results if r.judgment.members is not None]
        if not panels:
            return {}
        judges = list(dict.fromkeys(name for members in panels for name in members))
        units: list[Unit] = []
        for members in panels:
            judged = {name: m.scores for name, m in members.items() if not m.failed}
            for criterion in dict.fromkeys(c for scores in judged.values() for c in scores):
                units.append((criterion, {n: s.get(criterion) for n, s in judged.items()}))
        failed = sum(m.failed for members in panels for m in members.values())
        return {
            **agreement_metrics(units, judges, self.rubric.scale_max),
            "judge/members_failed": failed,
        }

    def rows(self) -> list[dict[str, object]]:
        """One row per probe: the per-probe table shown in the MLflow UI. It starts with
        ``probe_id, type, policy, score``, so the score is in view beside its probe (and
        runs line up by probe in the Evaluation view) before the long text cells."""
        rows, tasks = [], self.tasks()
        for point in self.points:
            for r in point.probes:
                rows.append(
                    {
                        **leading_columns(r, self.policy),
                        "transcript": r.probe.transcript_id,
                        "point": r.probe.point,
                        "task": tasks.get(r.probe.transcript_id),
                        "position": round(r.probe.position, 3),
                        "question": r.probe.question,
                        "gold": r.probe.gold.answer,
                        "answer": r.answer.text,
                        "failed": r.failed,
                        "truncated": r.answer.truncated,
                        **{f"c/{c}": s for c, s in r.judgment.scores().items()},
                        **{f"d/{d}": s for d, s in self.dimension_scores(r).items()},
                        **member_columns(r.judgment),
                    }
                )
        return rows


def leading_columns(result: ProbeResult, policy: str) -> dict[str, object]:
    """The first columns of every per-probe table: what lines runs up by probe, and the score."""
    return {
        "probe_id": result.probe.id,
        "type": result.probe.type,
        "policy": policy,
        "score": result.score,
    }


def answerer_free_metrics(
    results: list[ProbeResult],
    rubric: Rubric,
    cluster: Callable[[ProbeResult], Hashable] = lambda r: (r.probe.transcript_id, r.probe.point),
) -> dict[str, float]:
    """What sits beside the score: fact survival (per type too); with a control arm,
    the control's overall and retention (the policy's mean probe score over the
    control's on the probes both arms scored); next_action probes' agreement with the
    uncompacted context's answer; each with its 95% interval.

    The control arm's overall is its own roll-up; retention is a ratio of paired
    per-probe scores, so it compares the two arms on exactly the same probes.
    ``cluster``: a probe's cluster (``JobResult.cluster``).
    """
    metrics: dict[str, float] = {}
    measured = [r for r in results if r.survival is not None]
    if measured:
        survival = cluster_interval(
            [r.survival for r in measured],
            [cluster(r) for r in measured],
            confidence=CI_CONFIDENCE,
            limits=(0, 1),
        )
        metrics.update(names.with_interval(names.FACTS_SURVIVAL, survival))
        for ptype in PROBE_TYPES:
            typed = [r.survival for r in measured if r.probe.type == ptype]
            if typed:
                metrics[names.type_survival(ptype)] = sum(typed) / len(typed)
    controls = [r.control for r in results if r.control is not None]
    if controls:
        control = aggregate(rubric, (c.judgment.scores() for c in controls if not c.failed))
        if control.overall is not None:
            metrics[names.CONTROL_OVERALL] = control.overall
        metrics[names.CONTROL_FAILURES] = sum(c.failed for c in controls)
    paired = [
        r for r in results if r.score is not None and r.control and r.control.score is not None
    ]
    if paired and sum(r.control.score for r in paired) > 0:  # type: ignore[union-attr]
        retention = ratio_interval(
            [r.score for r in paired],
            [r.control.score for r in paired],  # type: ignore[union-attr]
            [cluster(r) for r in paired],
            confidence=CI_CONFIDENCE,
            limits=(0, math.inf),
        )
        metrics.update(names.with_interval(names.RETENTION, retention))
        metrics[names.RETENTION_PROBES] = len(paired)
    agreed = [(r.control_agreement, cluster(r)) for r in results if r.control_agreement is not None]
    if agreed:
        values, clusters = zip(*agreed, strict=True)
        agree = cluster_interval(
            values, clusters, confidence=CI_CONFIDENCE, limits=(0, rubric.scale_max)
        )
        metrics.update(names.with_interval(names.type_control_agreement("next_action"), agree))
    return metrics


def member_columns(judgment: Judgment) -> dict[str, float]:
    """A panel's member scores as ``m/<member>/<criterion>`` (a failed member has none)."""
    return {
        f"m/{name}/{criterion}": score
        for name, member in (judgment.members or {}).items()
        for criterion, score in member.scores.items()
    }
