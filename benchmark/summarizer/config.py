"""The ``summarizer`` group's schema: each summarizer's typed options and what it needs."""

from __future__ import annotations

from typing import Any

from benchmark.instantiate import ComponentConfig, Settings, by_target


class ExtractiveSummarizerSettings(Settings):
    target = "benchmark.summarizer.extractive.ExtractiveSummarizer"


class LLMSummarizerSettings(Settings):
    target = "benchmark.summarizer.llm.LLMSummarizer"
    needs = ("ledger", "cache")

    endpoint: dict[str, Any]  # checked field by field with every endpoint (config_checks)
    max_region_tokens: int


class SummarizerConfig(ComponentConfig):
    settings = by_target(ExtractiveSummarizerSettings, LLMSummarizerSettings)
