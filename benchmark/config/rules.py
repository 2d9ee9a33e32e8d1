"""Rules between config groups, stated once: which options only work together.

Each group validates alone (``benchmark.config.schema``); these rules relate two of them.
:func:`check_rules` runs on the validated config, before any part is built, so a
broken rule is one line naming both options (exit 2) before any key is read or any
work starts. Two checks need the built parts and run from ``benchmark.run.parts``:
:func:`check_judge_criteria` (the criteria a judge object scores) and
:func:`warn_unused_summarizer` (whether the built policy took the summarizer).

This module imports nothing from the config schema or the parts, so the schema can
call it without an import loop; ``config`` below is a ``benchmark.config.schema.BenchmarkConfig``.
"""

from __future__ import annotations

import logging
import pydoc
from collections.abc import Mapping
from typing import Any

from benchmark.errors import UserError

log = logging.getLogger(__name__)

# Policies whose compacted context is an item only their provider can read (encrypted):
# the answerer must continue on that provider. Classes by module path, so aliases match.
PROVIDER_ONLY_POLICIES = frozenset({"benchmark.policy.opaque.Opaque"})
# LLMJudge mode "2_1_0" scores this one criterion (benchmark.judge.llm.VERDICT_CRITERION;
# a test keeps the two equal: importing the judge here would loop through the LLM stack).
VERDICT_MODE_CRITERIA = frozenset({"recall_correctness"})


def check_rules(config: Any, parts: bool = True) -> None:
    """Every rule between groups holds; the first broken one is a ``UserError``.
    ``parts=False`` (a caller that builds no part) skips the rules that import a part's
    class to tell what it is, so the LLM stack is not loaded."""
    check_probe_types(config)
    check_verdict_rubric(config)
    if parts:
        check_provider(config)


def check_probe_types(config: Any) -> None:
    """The rubric scores every probe type the probes are drawn from."""
    rubric = config.rubric
    for ptype in config.probe.types:
        if ptype not in rubric.probe_criteria:
            raise UserError(
                f"rubric '{rubric.name}' has no criteria for probe type '{ptype}' "
                f"(rubric.probe_criteria.{ptype})"
            )


def check_verdict_rubric(config: Any) -> None:
    """A correct/partial/wrong judge (``mode: 2_1_0``, alone or in a panel) needs a rubric of
    its one criterion (``rubric=recall_2_1_0``)."""
    unscored = sorted(set(config.rubric.judged_criteria) - VERDICT_MODE_CRITERIA)
    for name, judge in _judges(_section(config.judge)):
        if str(judge.get("mode")) in ("2_1_0", "210") and unscored:  # YAML: bare 2_1_0 is 210
            raise UserError(
                f"judge '{name}' gives one verdict ({', '.join(sorted(VERDICT_MODE_CRITERIA))}) "
                f"but rubric '{config.rubric.name}' asks for criteria {unscored}; "
                "use rubric=recall_2_1_0 with it"
            )


def check_provider(config: Any) -> None:
    """A policy whose context only its provider can read (``policy=opaque``) needs an LLM
    answerer on the same provider (base_url)."""
    policy, answerer = _section(config.policy), _section(config.answerer)
    if _class_path(policy.get("_target_")) not in PROVIDER_ONLY_POLICIES:
        return
    provider = _provider(policy.get("endpoint"))
    theirs = _provider(answerer.get("endpoint")) if answerer.get("endpoint") else None
    if theirs != provider:
        where = f"on {theirs}" if theirs else "offline"
        raise UserError(
            f"policy '{policy.get('name')}' leaves an encrypted context that only {provider} "
            f"can read, but answerer '{answerer.get('name')}' is {where}; choose an LLM "
            "answerer on the same base_url (e.g. answerer=gpt4o)"
        )


def check_judge_criteria(config: Any, judge: Any) -> None:
    """The built judge scores every criterion of the rubric (its ``CRITERIA``, if it says)
    but those scored by rule (``Rubric.judge_free_criteria``)."""
    supported = getattr(judge, "CRITERIA", None)
    if supported is None:
        return
    rubric = config.rubric
    unknown = sorted(set(rubric.judged_criteria) - set(supported))
    if unknown:
        raise UserError(
            f"judge '{config.judge.name}' cannot score rubric criteria {unknown} "
            f"(rubric '{rubric.name}'); it scores {sorted(supported)}, choose a rubric "
            "with those (e.g. rubric=recall_2_1_0)"
        )


def warn_unused_summarizer(config: Any, policy: Any) -> None:
    """An LLM summarizer next to a policy that does not summarize is never called: warned,
    not refused, since a sweep over policies (``+experiment=seed_table``) keeps one
    summarizer for every arm, summarizing or not."""
    summarizer = _section(config.summarizer)
    if summarizer.get("endpoint") and getattr(policy, "summarizer", None) is None:
        log.warning(
            "summarizer '%s' is never called: policy '%s' does not summarize",
            summarizer.get("name"),
            _section(config.policy).get("name"),
        )


def _section(part: Any) -> Mapping[str, Any]:
    """A group's config as plain data, whatever model holds it (keys as in the YAML)."""
    if isinstance(part, Mapping):
        return part
    return part.model_dump(by_alias=True)


def _judges(judge: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The judge and, for a panel, each member."""
    members = (judge.get("members") or {}).items()
    found = [(f"{judge.get('name')}.{name}", m) for name, m in members if isinstance(m, Mapping)]
    return [(str(judge.get("name")), judge), *found]


def _class_path(target: Any) -> str:
    """``module.Class`` of a ``_target_`` where it is defined (``benchmark.policy.Opaque``
    and ``benchmark.policy.opaque.Opaque`` are one class); the text itself if unknown."""
    if not isinstance(target, str):
        return ""
    try:
        cls = pydoc.locate(target)
    except pydoc.ErrorDuringImport:  # a bad target is reported when the part is built
        return target
    if not isinstance(cls, type):
        return target
    return f"{cls.__module__}.{cls.__qualname__}"


def _provider(endpoint: Any) -> str:
    """Who can read what an endpoint made: its base URL (the SDK default when unset)."""
    from benchmark.llm.endpoint import normalise_base_url  # the LLM stack only when needed

    base_url = endpoint.get("base_url") if isinstance(endpoint, Mapping) else None
    return normalise_base_url(base_url)
