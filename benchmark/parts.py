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
from benchmark.config import BenchmarkConfig
from benchmark.errors import UserError
from benchmark.instantiate import ComponentConfig, instantiate_target
from benchmark.judge.base import Judge
from benchmark.llm import UsageLedger
from benchmark.llm.cache import ResponseCache
from benchmark.policy.base import Policy
from benchmark.probe.writer import LLMProbeWriter, build_writer


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
    shared = {"ledger": ledger, "cache": response_cache(config)}
    summarizer = build(config.summarizer, "summarizer", "summarize", **shared)
    policy = build(config.policy, "policy", "compact", summarizer=summarizer, **shared)
    answerer = build(config.answerer, "answerer", "answer", **shared)
    judge = build(config.judge, "judge", "judge", **shared)
    writer = build_writer(config.probe, **shared)
    check_rubric(config, judge)
    check_provider(config, policy, answerer)
    return Parts(policy=policy, answerer=answerer, judge=judge, ledger=ledger, writer=writer)


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


def check_provider(config: BenchmarkConfig, policy: Policy, answerer: Answerer) -> None:
    """A policy whose context only its provider can read needs an answerer on that provider."""
    provider = getattr(policy, "provider", None)
    if provider is None:
        return
    theirs = getattr(answerer, "provider", None)
    if theirs != provider:
        where = f"provider {theirs!r}" if theirs else "an offline answerer"
        raise UserError(
            f"policy '{config.policy.name}' leaves an encrypted context that only provider "
            f"{provider!r} can read, but answerer '{config.answerer.name}' is {where}; choose an "
            "LLM answerer on the same base_url (e.g. answerer=gpt4o)"
        )


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
