"""The swappable parts of one job, built from the config before any work.

Each config group (``policy``, ``summarizer``, ``answerer``, ``judge``, the
probe writer) names a ``_target_``; building them all first means a missing
key, an unknown option or a rubric the judge cannot score fails at once, in
one line, not after the first compaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmark.answerer.base import Answerer
from benchmark.config.instantiate import ComponentConfig, instantiate_target
from benchmark.config.rules import check_judge_criteria, warn_unused_summarizer
from benchmark.config.schema import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.judge.base import Judge
from benchmark.llm import UsageLedger
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.reply_scrub import use_redactor
from benchmark.policy.base import Policy
from benchmark.probe.writer import LLMProbeWriter, build_writer
from benchmark.redaction import redactor_for


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
    use_redactor(lambda: redactor_for(config))  # every reply is scrubbed with it (llm.reply_scrub)
    shared = {"ledger": ledger, "cache": response_cache(config)}
    policy = build_policy(config, **shared)
    answerer = build(config.answerer, "answerer", "answer", **shared)
    judge = build(config.judge, "judge", "judge", **shared)
    writer = build_writer(config.probe, **shared)
    check_judge_criteria(config, judge)
    warn_unused_summarizer(config, policy)
    return Parts(policy=policy, answerer=answerer, judge=judge, ledger=ledger, writer=writer)


def build_policy(config: BenchmarkConfig, **shared: Any) -> Policy:
    """The policy, with its summarizer; ``shared``: the job's ledger and reply cache (none
    for a worker process preparing points, whose policy calls no model)."""
    shared.setdefault("ledger", UsageLedger(keep_calls=False))
    shared.setdefault("cache", None)
    summarizer = build(config.summarizer, "summarizer", "summarize", **shared)
    policy: Policy = build(config.policy, "policy", "compact", summarizer=summarizer, **shared)
    return policy


def response_cache(config: BenchmarkConfig) -> ResponseCache | None:
    """The job's LLM reply cache (``cache.dir``, ``cache.mode``); None when disabled."""
    if not config.cache.dir or config.cache.mode == "off":
        return None
    return ResponseCache(config.cache.dir, config.cache.mode)


def build(component: ComponentConfig, group: str, method: str, **shared: Any) -> Any:
    """Instantiate a config group's ``_target_`` with the ``shared`` objects it declares
    it needs (its ``Settings.needs``); errors name the group and option."""
    label = f"{group} '{component.name}'"
    obj = instantiate_target(label, group, component.spec(), component.targets, shared)
    if not callable(getattr(obj, method, None)):
        raise UserError(f"{group}._target_ {component.target} has no '{method}' method")
    return obj
