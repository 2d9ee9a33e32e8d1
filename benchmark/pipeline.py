"""One benchmark job, stage by stage: a reader can follow it top to bottom.

transcripts -> compaction points -> probes (region only) -> policy.compact ->
answerer (compacted context only) -> judge (blind) -> rubric roll-up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from benchmark.answerer.base import Answer, Answerer, AnswerRequest
from benchmark.compaction import CompactionPoint, Segments, find_points, segments, split_live
from benchmark.components import instantiate_target
from benchmark.config import BenchmarkConfig, ComponentConfig
from benchmark.errors import UserError
from benchmark.judge.base import Judge, JudgeRequest, Judgment
from benchmark.llm import UsageLedger, close_all
from benchmark.policy.base import Policy
from benchmark.probe.cache import load_or_generate
from benchmark.probe.models import Probe
from benchmark.probe.writer import LLMProbeWriter, build_writer
from benchmark.results import JobResult, PointResult, ProbeResult
from benchmark.rubric import Rubric, aggregate
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.sources import load_transcripts

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Parts:
    """The built, swappable parts of one job."""

    policy: Policy
    answerer: Answerer
    judge: Judge
    ledger: UsageLedger
    writer: LLMProbeWriter | None = None  # None: deterministic probe extraction


def build_parts(config: BenchmarkConfig) -> Parts:
    """Build every part before any work, so a missing key or bad option fails at once."""
    ledger = UsageLedger(keep_calls=config.tracking.enabled and config.tracking.trace_llm)
    summarizer = build(config.summarizer, "summarizer", "summarize", ledger=ledger)
    policy = build(config.policy, "policy", "compact", summarizer=summarizer, ledger=ledger)
    answerer = build(config.answerer, "answerer", "answer", ledger=ledger)
    judge = build(config.judge, "judge", "judge", ledger=ledger)
    writer = build_writer(config.probe, ledger)
    check_rubric(config, judge)
    return Parts(policy=policy, answerer=answerer, judge=judge, ledger=ledger, writer=writer)


def run_job(config: BenchmarkConfig, parts: Parts | None = None) -> JobResult:
    parts = parts or build_parts(config)
    transcripts = load_transcripts(config.transcript)
    points: list[PointResult] = []
    try:
        for transcript in transcripts:
            previous: PointResult | None = None
            for point in find_points(transcript, config.compaction):
                previous = run_point(
                    config,
                    transcript,
                    point,
                    parts.policy,
                    parts.answerer,
                    parts.judge,
                    previous,
                    writer=parts.writer,
                )
                points.append(previous)
    finally:
        close_all()
    return JobResult(
        policy=config.policy.name,
        transcripts=[t.id for t in transcripts],
        rubric=config.rubric,
        points=points,
        usage={
            **parts.ledger.metrics(),
            **({"probes/dropped": parts.writer.dropped} if parts.writer else {}),
        },
        judge_records=list(getattr(parts.judge, "records", [])),
        calls=parts.ledger.calls(),
    )


def run_point(
    config: BenchmarkConfig,
    transcript: Transcript,
    point: CompactionPoint,
    policy: Policy,
    answerer: Answerer,
    judge: Judge,
    previous: PointResult | None = None,
    writer: LLMProbeWriter | None = None,
) -> PointResult:
    """One compaction point. With iterative replay and a ``previous`` point, the policy
    compacts the previous compacted context plus the messages since, not the raw prefix."""
    probes = load_or_generate(transcript, point, config.probe, config.cache_path, writer=writer)
    if previous is not None and config.compaction.replay == "iterative":
        live = [*previous.context, *transcript.messages[previous.point.end : point.end]]
        context = compact(policy, split_live(live, config.compaction))
    else:
        context = compact(policy, segments(transcript, point))
    tokens_after = sum(m.tokens for m in context)
    log.info(
        "%s point %d: %d -> %d tokens, %d probes",
        transcript.id,
        point.ordinal,
        point.tokens_before,
        tokens_after,
        len(probes),
    )
    results = [evaluate(probe, context, answerer, judge, config.rubric) for probe in probes]
    return PointResult(point=point, tokens_after=tokens_after, context=context, probes=results)


def compact(policy: Policy, parts: Segments) -> list[Message]:
    kept = policy.compact(parts)
    if not isinstance(kept, list) or not all(isinstance(m, Message) for m in kept):
        raise UserError(
            f"policy {type(policy).__name__}.compact must return a list of Message, "
            f"got {type(kept).__name__}"
        )
    return kept


def evaluate(
    probe: Probe, context: list[Message], answerer: Answerer, judge: Judge, rubric: Rubric
) -> ProbeResult:
    """Answer from the compacted context alone, then judge blind; failures are recorded."""
    try:
        answer = answerer.answer(AnswerRequest(question=probe.question, context=context))
    except Exception as exc:  # a failed answer is counted, never scored as 0
        answer = Answer(failed=True, error=f"{type(exc).__name__}: {exc}")
    if answer.failed:
        judgment = Judgment(failed=True, error="no answer to judge")
    else:
        request = JudgeRequest(
            probe_question=probe.question,
            model_response=answer.text,
            compacted_context=context,
            ground_truth=probe.gold,
            rubric_criteria=rubric.probe_criteria[probe.type],
            scale_max=rubric.scale_max,
        )
        try:
            judgment = judge.judge(request)
        except Exception as exc:
            judgment = Judgment(failed=True, error=f"{type(exc).__name__}: {exc}")
    score = None
    if not (answer.failed or judgment.failed):
        score = aggregate(rubric, [judgment.scores()]).overall
    return ProbeResult(probe=probe, answer=answer, judgment=judgment, score=score)


def build(component: ComponentConfig, group: str, method: str, **inject: Any) -> Any:
    """Instantiate a config group's ``_target_``; errors name the group and option."""
    spec = {"_target_": component.target, **component.kwargs}
    obj = instantiate_target(f"{group} '{component.name}'", spec, **inject)
    if not callable(getattr(obj, method, None)):
        raise UserError(f"{group}._target_ {component.target} has no '{method}' method")
    return obj


def check_rubric(config: BenchmarkConfig, judge: Judge) -> None:
    rubric = config.rubric
    for ptype in config.probe.types:
        if ptype not in rubric.probe_criteria:
            raise UserError(
                f"rubric '{rubric.name}' has no criteria for probe type '{ptype}' "
                f"(rubric.probe_criteria.{ptype})"
            )
    supported = getattr(judge, "CRITERIA", None)
    if supported is not None:
        unknown = sorted(set(rubric.criteria) - set(supported))
        if unknown:
            raise UserError(
                f"judge '{config.judge.name}' cannot score rubric criteria {unknown} "
                f"(rubric '{rubric.name}'); it scores {sorted(supported)}, choose a rubric "
                "with those (e.g. rubric=recall_2_1_0)"
            )
