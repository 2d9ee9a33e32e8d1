"""The ``summarizer`` group's schema: each summarizer's typed options and what it needs."""

from __future__ import annotations

from typing import Any

from benchmark.config.instantiate import ComponentConfig, by_target, settings
from benchmark.config.validators import Tokens


class SummarizerConfig(ComponentConfig):
    targets = by_target(
        settings("benchmark.summarizer.extractive.ExtractiveSummarizer"),
        settings(
            "benchmark.summarizer.llm.LLMSummarizer",
            ("ledger", "cache"),
            endpoint=dict[str, Any],  # checked with every endpoint (config_checks)
            max_region_tokens=Tokens,
        ),
    )
