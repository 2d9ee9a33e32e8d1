"""The audit job: ask the configured judge about answers of known content, K times each.

``python -m benchmark +audit=judge judge=<x>`` lands here instead of the
benchmark job. Items come from :mod:`benchmark.audit.cases`; each is judged
``audit.samples`` times by a judge built from ``config.judge`` as a job builds
it (one build per sample, see :mod:`benchmark.audit.samples`). LLM judges run
concurrently on the LLM loop like a job's probes; offline judges run inline.
A judgment that fails after its retries is recorded and counted, never scored.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from benchmark.audit.cases import AuditItem, AuditItems, Sample, build_items
from benchmark.audit.config import AuditConfig
from benchmark.audit.metrics import compute
from benchmark.audit.record import AuditResult, audit_record
from benchmark.audit.samples import SampleJudges, build_judges
from benchmark.audit.summary import render
from benchmark.config.schema import BenchmarkConfig
from benchmark.judge.base import Judge, JudgeRequest, Judgment
from benchmark.llm import UsageLedger, close_all
from benchmark.llm.loop import run as run_on_loop
from benchmark.probe.writer import build_writer
from benchmark.run.evaluation import stage_call
from benchmark.run.parts import response_cache
from benchmark.run.progress import JobProgress
from benchmark.run.run_record import Outcome, RunRecord

log = logging.getLogger(__name__)


def run_audit(config: BenchmarkConfig, judges: SampleJudges | None = None) -> AuditResult:
    """Build the items, judge each ``audit.samples`` times, compute the metrics."""
    audit = _audit(config)
    own = judges is None
    if judges is None:
        judges = build_judges(config, audit.samples, new_ledger(config))
    ledger = judges.ledger
    try:
        writer = build_writer(config.probe, ledger=ledger, cache=response_cache(config))
        built = build_items(config, audit, writer)
        items = judge_items(config, built, judges, ledger)
    finally:
        if own:
            judges.close()
        close_all()
    metrics = compute(items, config.rubric)
    return AuditResult(
        judge=config.judge.name,
        rubric=config.rubric,
        audit=audit,
        items=items,
        probes=built.probes,
        skipped=built.skipped,
        metrics=metrics,
        usage=ledger.metrics(),
        calls=ledger.calls(),
    )


def new_ledger(config: BenchmarkConfig) -> UsageLedger:
    return UsageLedger(keep_calls=config.tracking.enabled and config.tracking.trace_llm)


def _audit(config: BenchmarkConfig) -> AuditConfig:
    if config.audit is None:
        raise ValueError("run_audit needs a config with an 'audit' section (+audit=judge)")
    return config.audit


def judge_items(
    config: BenchmarkConfig, built: AuditItems, judges: SampleJudges, ledger: UsageLedger
) -> list[AuditItem]:
    """Every item with one :class:`Sample` per judge, in item order."""
    requests = [_request(item, built, config.rubric.scale_max) for item in built.items]
    jobs = [(i, k) for i in range(len(requests)) for k in range(len(judges.judges))]
    with JobProgress(ledger, config.execution.progress, label="judgments") as progress:
        progress.add(len(jobs))
        if judges.concurrent:
            limit = config.execution.max_probes_in_flight
            judged = run_on_loop(_judge_all(judges.judges, requests, jobs, limit, progress))
        else:
            judged = []
            for i, k in jobs:
                judged.append(_outcome(_call_inline(judges.judges[k], requests[i])))
                progress.finished(judged[-1].failed)
    samples: list[list[Sample]] = [[] for _ in requests]
    for (i, _), sample in zip(jobs, judged, strict=True):
        samples[i].append(sample)
    return [
        item.model_copy(update={"samples": s}) for item, s in zip(built.items, samples, strict=True)
    ]


def _request(item: AuditItem, built: AuditItems, scale_max: int) -> JudgeRequest:
    return JudgeRequest(
        probe_question=item.probe.question,
        model_response=item.answer,
        compacted_context=built.contexts[item.context_key],
        ground_truth=item.probe.gold,
        rubric_criteria=list(item.expected),
        scale_max=scale_max,
    )


async def _judge_all(
    judges: list[Judge],
    requests: list[JudgeRequest],
    jobs: list[tuple[int, int]],
    limit: int,
    progress: JobProgress,
) -> list[Sample]:
    slots = asyncio.Semaphore(limit)

    async def one(i: int, k: int) -> Sample:
        async with slots:
            try:
                judgment = await stage_call(judges[k], "judge", requests[i], inline=False)
            except Exception as exc:  # counted as a failure, never scored
                judgment = Judgment(failed=True, error=f"{type(exc).__name__}: {exc}")
        sample = _outcome(judgment)
        progress.finished(sample.failed)
        return sample

    return list(await asyncio.gather(*(one(i, k) for i, k in jobs)))


def _call_inline(judge: Judge, request: JudgeRequest) -> Judgment:
    try:
        return judge.judge(request)
    except Exception as exc:
        return Judgment(failed=True, error=f"{type(exc).__name__}: {exc}")


def _outcome(judgment: Judgment) -> Sample:
    if judgment.failed:
        return Sample(failed=True, error=judgment.error or "failed")
    return Sample(
        scores=judgment.scores(),
        reasoning={r.criterion: r.reasoning for r in judgment.results if r.reasoning},
    )


def failure(result: AuditResult, allowed: float) -> str | None:
    """Why the audit fails (after it is logged) when too many judgments have no score."""
    total = sum(len(item.samples) for item in result.items)
    failed = result.metrics.failures
    if not total or failed / total <= allowed:
        return None
    return (
        f"{failed / total:.1%} of audit judgments failed after all retries, more than "
        f"execution.fail_on_error={allowed:g}; results are logged, failures are in "
        "audit_items.jsonl (error field)"
    )


def audit(config: BenchmarkConfig, resolved: dict[str, Any]) -> tuple[RunRecord, Outcome]:
    """The ``+audit=judge`` job: run, print the summary; its record, and the overall
    agreement (what a sweeper over judges would compare) or why it fails."""
    judges = build_judges(config, _audit(config).samples, new_ledger(config))  # keys fail here
    try:
        if config.tracking.enabled:
            from benchmark.tracking.mlflow_store import prepare_tracking

            prepare_tracking(config.tracking)
        result = run_audit(config, judges)
    finally:
        judges.close()
    record = audit_record(config, resolved, result, render(result))
    outcome = Outcome(
        objective=result.metrics.agreement,
        failure=failure(result, config.execution.fail_on_error),
    )
    return record, outcome
