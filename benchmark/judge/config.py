"""The ``judge`` group's schema: each judge's options, typed, and what it is built with."""

from __future__ import annotations

from typing import Any, Literal

from benchmark.instantiate import ComponentConfig, Settings, by_target
from benchmark.judge.llm import JudgeMode

Combine = Literal["mean", "median", "majority"]  # how a panel combines its members' scores


class ReferenceJudgeSettings(Settings):
    target = "benchmark.judge.reference.ReferenceJudge"

    max_answer_tokens: int
    term_ratio: float


class LLMJudgeSettings(Settings):
    target = "benchmark.judge.llm.LLMJudge"
    needs = ("ledger", "cache")

    endpoint: dict[str, Any]  # checked field by field with every endpoint (config_checks)
    mode: JudgeMode
    max_context_tokens: int


class PanelJudgeSettings(Settings):
    target = "benchmark.judge.panel.PanelJudge"
    needs = ("ledger", "cache")  # handed on to its members

    members: dict[str, dict[str, Any]]  # each a judge config, checked as it is built
    combine: Combine
    min_members: int | None
    endpoint: dict[str, Any] | None


class JudgeConfig(ComponentConfig):
    settings = by_target(ReferenceJudgeSettings, LLMJudgeSettings, PanelJudgeSettings)
