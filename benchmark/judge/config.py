"""The ``judge`` group's schema: each judge's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any, Literal

from benchmark.config.instantiate import ComponentConfig, by_target, settings
from benchmark.config.validators import Count, Tokens

JudgeMode = Literal["rubric", "2_1_0"]  # what an LLM judge gives: rubric scores or one verdict
Combine = Literal["mean", "median", "majority"]  # how a panel combines its members' scores


class JudgeConfig(ComponentConfig):
    targets = by_target(
        settings(
            "benchmark.judge.reference.ReferenceJudge", max_answer_tokens=Tokens, term_ratio=float
        ),
        settings(
            "benchmark.judge.llm.LLMJudge",
            ("ledger", "cache"),
            endpoint=dict[str, Any],  # checked with every endpoint (config_checks)
            mode=JudgeMode,
            max_context_tokens=Tokens,
        ),
        settings(
            "benchmark.judge.panel.PanelJudge",
            ("ledger", "cache"),  # handed on to its members, each checked as it is built
            members=dict[str, dict[str, Any]],
            combine=Combine,
            min_members=Count | None,
            endpoint=dict[str, Any] | None,
        ),
    )
